package org.sparkccl.comm;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

/**
 * Names the machine this rank runs on, so that ranks can count how many of them share its cores.
 * The kernel's boot id is the same for every process and container of one running kernel, which is
 * what shares cores; host names can repeat across containers of different machines and differ
 * between containers of one. The host name stands in where there is no boot id.
 *
 * <p>The system property {@code sparkccl.hostIdentity}, where set, replaces the computed name:
 * ranks of one machine given different names count as different hosts (so their ring edges take the
 * network transport), which lets one machine test rings that mix direct and network edges.
 */
final class HostIdentity {
  private static final String LOCAL = compute();

  private HostIdentity() {}

  static String local() {
    return LOCAL;
  }

  /** How many of {@code hosts} (one per rank) name each host. */
  static Map<String, Integer> ranksPerHost(String[] hosts) {
    Map<String, Integer> ranksOn = new HashMap<>();
    for (String h : hosts) {
      ranksOn.merge(h, 1, Integer::sum);
    }
    return ranksOn;
  }

  private static String compute() {
    String forced = System.getProperty("sparkccl.hostIdentity");
    if (forced != null && !forced.isBlank()) {
      return "named:" + forced.trim();
    }
    try {
      String boot =
          Files.readString(Path.of("/proc/sys/kernel/random/boot_id"), StandardCharsets.US_ASCII)
              .trim();
      if (!boot.isEmpty()) {
        return "boot:" + boot;
      }
    } catch (IOException | SecurityException e) {
      // not Linux, or not readable: the host name below
    }
    try {
      return "host:" + InetAddress.getLocalHost().getHostName();
    } catch (IOException | SecurityException e) {
      return "host:unknown";
    }
  }
}
