package org.sparkccl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two ranks on two "hosts": network namespaces joined by a veth pair on a subnet of their own,
 * which the test creates and removes (it needs root and {@code ip netns}; without them it skips and
 * says why). Each namespace also has loopback up and a second interface that is down but has an
 * address, so a wrong choice of interface shows. Rank 0 serves the bootstrap root inside its
 * namespace; each rank is a JVM started with {@code ip netns exec}.
 */
@DisplayName("two ranks on two hosts (network namespaces joined by a veth pair)")
class TwoHostsTest {
  /** The engine's timeout in these runs; every fault must be reported within it plus 5 s. */
  private static final int TIMEOUT_S = 5;

  @TempDir Path dir;

  private final String tag = Long.toString(ProcessHandle.current().pid() % 100_000);
  private final String nsA = "sccl-a" + tag;
  private final String nsB = "sccl-b" + tag;
  private final String vethA = "scva" + tag;
  private final String vethB = "scvb" + tag;
  private final int subnet = 100 + (int) (ProcessHandle.current().pid() % 150);
  private final String addrA = "10.231." + subnet + ".1";
  private final String addrB = "10.231." + subnet + ".2";
  private final List<Process> ranks = new ArrayList<>();

  @BeforeEach
  void makeTwoHosts() throws Exception {
    Assumptions.assumeTrue(
        System.getProperty("os.name").startsWith("Linux"),
        "skipped: network namespaces need Linux");
    Assumptions.assumeTrue(
        "0".equals(sh("id", "-u").trim()), "skipped: creating network namespaces needs root");
    removeHosts();
    String failed =
        first(
            shOk("ip", "netns", "add", nsA),
            shOk("ip", "netns", "add", nsB),
            shOk("ip", "link", "add", vethA, "type", "veth", "peer", "name", vethB),
            shOk("ip", "link", "set", vethA, "netns", nsA),
            shOk("ip", "link", "set", vethB, "netns", nsB),
            // a down interface with an address on each side, listed before the veth
            shOk("ip", "link", "add", "scda" + tag, "type", "veth", "peer", "name", "scdb" + tag),
            shOk("ip", "link", "set", "scda" + tag, "netns", nsA),
            shOk("ip", "link", "set", "scdb" + tag, "netns", nsB));
    for (String[] side :
        new String[][] {{nsA, vethA, addrA, "scda", "1"}, {nsB, vethB, addrB, "scdb", "2"}}) {
      if (failed != null) {
        break;
      }
      failed =
          first(
              inNs(side[0], "ip", "link", "set", "lo", "up"),
              inNs(side[0], "ip", "addr", "add", side[2] + "/24", "dev", side[1]),
              inNs(side[0], "ip", "link", "set", side[1], "up"),
              inNs(
                  side[0],
                  "ip",
                  "addr",
                  "add",
                  "10.232." + subnet + "." + side[4] + "/24",
                  "dev",
                  side[3] + tag));
    }
    if (failed != null) {
      removeHosts();
    }
    String reason = failed;
    Assumptions.assumeTrue(
        reason == null, () -> "skipped: cannot make two network namespaces here: " + reason);
  }

  @AfterEach
  void removeHosts() throws Exception {
    for (Process p : ranks) {
      p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
    }
    ranks.clear();
    shOk("ip", "netns", "del", nsA);
    shOk("ip", "netns", "del", nsB);
    shOk("ip", "link", "del", vethA); // only if it never reached a namespace
    shOk("ip", "link", "del", "scda" + tag);
  }

  @Test
  @DisplayName(
      "each rank picks its veth address (socket.ifname=^lo on one, the bootstrap's on the other),"
          + " never loopback or the down interface, and the allReduces are correct")
  void ranksOnTwoHostsPickTheirVethAndAgree() throws Exception {
    Process r0 = startRank(nsA, 0, "serve:" + addrA, "check", "-Dsparkccl.socket.ifname=^lo");
    String root = awaitRoot(r0);
    Process r1 = startRank(nsB, 1, root, "check");
    for (int r = 0; r < 2; r++) {
      Process p = r == 0 ? r0 : r1;
      assertTrue(p.waitFor(120, TimeUnit.SECONDS), "rank " + r + " still running:\n" + out(r));
      assertEquals(0, p.exitValue(), "rank " + r + " failed:\n" + out(r));
      assertTrue(out(r).contains("OK"), "rank " + r + ":\n" + out(r));
    }
  }

  @Test
  @DisplayName(
      "cutting the veth in the middle of an allReduce fails both ranks within the timeout + 5 s,"
          + " naming the peer; the data sockets listened on the veth addresses only")
  void cuttingTheLinkFailsBothRanksInTime() throws Exception {
    Process r0 = startRank(nsA, 0, "serve:" + addrA, "loop", "-Dsparkccl.socket.ifname==" + vethA);
    String root = awaitRoot(r0);
    Process r1 = startRank(nsB, 1, root, "loop", "-Dsparkccl.socket.ifname=scd,scv");
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
    for (int r = 0; r < 2; r++) {
      while (!out(r).contains("ITER 2")) {
        assertTrue(ranks.get(r).isAlive(), "rank " + r + " exited early:\n" + out(r));
        assertTrue(System.nanoTime() < end, "rank " + r + " made no progress:\n" + out(r));
        Thread.sleep(20);
      }
    }
    List<String> listenA = listeners(nsA);
    List<String> listenB = listeners(nsB);
    assertFalse(listenA.isEmpty(), "no listening socket in " + nsA);
    assertTrue(listenA.stream().allMatch(a -> a.startsWith(addrA + ":")), "A: " + listenA);
    assertTrue(listenB.stream().allMatch(a -> a.startsWith(addrB + ":")), "B: " + listenB);
    Thread.sleep(30); // somewhere inside a collective
    sh("ip", "netns", "exec", nsA, "ip", "link", "set", vethA, "down");
    long cutAt = System.nanoTime();
    for (int r = 0; r < 2; r++) {
      Process p = r == 0 ? r0 : r1;
      boolean exited = p.waitFor(TIMEOUT_S + 5, TimeUnit.SECONDS);
      long ms = (System.nanoTime() - cutAt) / 1_000_000;
      assertTrue(exited, "rank " + r + " still running " + ms + " ms after the cut:\n" + out(r));
      assertNotEquals(0, p.exitValue(), "rank " + r + " exited 0:\n" + out(r));
      String o = out(r);
      assertTrue(o.contains("FAILED"), "rank " + r + " printed no error:\n" + o);
      String error = o.substring(o.indexOf("FAILED"));
      assertTrue(error.contains("allReduce"), "rank " + r + ": " + error);
      assertTrue(
          error.contains("rank " + (1 - r)), "rank " + r + " should name its peer: " + error);
      System.out.println(
          "TwoHostsTest: rank "
              + r
              + " failed "
              + ms
              + " ms after the cut: "
              + error.lines().findFirst().orElse(""));
    }
  }

  private Process startRank(String ns, int rank, String root, String mode, String... props)
      throws IOException {
    List<String> cmd = new ArrayList<>(List.of("ip", "netns", "exec", ns));
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.addAll(List.of("-Xmx256m", "-XX:MaxDirectMemorySize=256m", "-XX:+UseSerialGC"));
    cmd.addAll(List.of(TestConfig.jvmOptions()));
    cmd.addAll(List.of("-Dsparkccl.timeout=" + TIMEOUT_S + "s", "-Dsparkccl.transport=socket"));
    cmd.addAll(List.of(props));
    cmd.addAll(List.of("-cp", System.getProperty("java.class.path")));
    cmd.addAll(List.of(RankProcessMain.class.getName(), root, Integer.toString(rank), "2", mode));
    File log = dir.resolve("rank" + rank + ".log").toFile();
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log).start();
    ranks.add(p);
    return p;
  }

  private String awaitRoot(Process rank0) throws InterruptedException {
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (System.nanoTime() < end) {
      for (String line : out(0).split("\n")) {
        if (line.startsWith("ROOT ")) {
          String address = line.substring(5).trim();
          assertTrue(address.startsWith(addrA + ":"), "the root listens on " + address);
          return address;
        }
      }
      assertTrue(rank0.isAlive(), "rank 0 exited before serving the root:\n" + out(0));
      Thread.sleep(20);
    }
    throw new AssertionError("rank 0 printed no root address in 60 s:\n" + out(0));
  }

  /** The local addresses of the TCP sockets listening in namespace {@code ns}. */
  private static List<String> listeners(String ns) throws Exception {
    List<String> found = new ArrayList<>();
    for (String file : new String[] {"/proc/net/tcp", "/proc/net/tcp6"}) {
      for (String line : sh("ip", "netns", "exec", ns, "cat", file).split("\n")) {
        String[] f = line.trim().split("\\s+");
        if (f.length > 3 && f[3].equals("0A")) { // LISTEN
          found.add(ProcNetTcp.address(f[1]));
        }
      }
    }
    return found;
  }

  private String out(int rank) {
    try {
      return Files.readString(dir.resolve("rank" + rank + ".log"), StandardCharsets.UTF_8);
    } catch (IOException e) {
      return "(no output: " + e + ")";
    }
  }

  private String inNs(String ns, String... cmd) throws Exception {
    List<String> c = new ArrayList<>(List.of("ip", "netns", "exec", ns));
    c.addAll(List.of(cmd));
    return shOk(c.toArray(new String[0]));
  }

  private static String first(String... failures) {
    for (String f : failures) {
      if (f != null) {
        return f;
      }
    }
    return null;
  }

  /** Runs {@code cmd}; null when it exits 0 within 30 s, else what went wrong. */
  private static String shOk(String... cmd) throws Exception {
    Process p;
    try {
      p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    } catch (IOException e) {
      return String.join(" ", cmd) + ": " + e.getMessage(); // no such program
    }
    boolean done = p.waitFor(30, TimeUnit.SECONDS);
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
    if (!done) {
      p.destroyForcibly();
      return String.join(" ", cmd) + ": still running after 30 s";
    }
    return p.exitValue() == 0 ? null : String.join(" ", cmd) + ": " + out;
  }

  /** Runs {@code cmd} and returns its output; fails the test when it exits non-zero. */
  private static String sh(String... cmd) throws Exception {
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(30, TimeUnit.SECONDS), String.join(" ", cmd) + ": still running");
    assertEquals(0, p.exitValue(), String.join(" ", cmd) + ": " + out);
    return out;
  }
}
