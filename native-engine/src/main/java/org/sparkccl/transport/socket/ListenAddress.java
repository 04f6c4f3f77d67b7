package org.sparkccl.transport.socket;

import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.stream.Collectors;
import org.sparkccl.CclException;

/**
 * Chooses the address a rank listens on and advertises to its peers. In order: {@code socket.host}
 * when set; else an address of the first interface that {@code socket.ifname} selects; else the
 * address the bootstrap reached its peers from (the interface the route to them takes); else {@code
 * 127.0.0.1}.
 *
 * <p>{@code socket.ifname} reads as {@code NCCL_SOCKET_IFNAME} does: name prefixes separated by
 * commas ({@code eth,ib}); a leading {@code ^} excludes the listed prefixes instead ({@code
 * ^docker,lo}); a leading {@code =} (after {@code ^}, if any) matches whole names ({@code =eth0}).
 * Interfaces that are down, or have no address, are never chosen; nor is loopback, unless the list
 * names it (a plain {@code lo}). Among several, the first in the list's order wins, then the
 * system's order; IPv4 before IPv6, never a link-local IPv6 address (it needs a scope).
 *
 * <pre>{@code
 * String host = ListenAddress.choose(null, "^docker,lo", bootstrap.localHost());
 * }</pre>
 */
public final class ListenAddress {
  /** What the choice needs to know about one network interface. */
  public record Nic(String name, boolean up, boolean loopback, List<InetAddress> addresses) {}

  private ListenAddress() {}

  /** Chooses among this machine's interfaces; see the class comment. */
  public static String choose(String host, String ifname, String bootstrapHost) {
    if (host != null) {
      return host;
    }
    return choose(null, ifname, bootstrapHost, ifname == null ? List.of() : interfaces());
  }

  /** Chooses among {@code nics}; see the class comment. */
  public static String choose(String host, String ifname, String bootstrapHost, List<Nic> nics) {
    if (host != null) {
      return host;
    }
    if (ifname != null) {
      return fromInterfaces(ifname, nics);
    }
    return bootstrapHost != null ? bootstrapHost : "127.0.0.1";
  }

  private static String fromInterfaces(String ifname, List<Nic> nics) {
    String spec = ifname.trim();
    boolean exclude = spec.startsWith("^");
    if (exclude) {
      spec = spec.substring(1);
    }
    boolean exact = spec.startsWith("=");
    if (exact) {
      spec = spec.substring(1);
    }
    List<String> names = new ArrayList<>();
    for (String s : spec.split(",", -1)) {
      if (!s.trim().isEmpty()) {
        names.add(s.trim());
      }
    }
    if (names.isEmpty()) {
      throw new IllegalArgumentException(
          "socket.ifname="
              + ifname
              + " names no interface; expected e.g. eth0, eth,ib or ^docker,lo");
    }
    List<Nic> candidates = new ArrayList<>();
    if (exclude) {
      for (Nic n : nics) {
        if (names.stream().noneMatch(p -> matches(n.name(), p, exact)) && !n.loopback()) {
          candidates.add(n);
        }
      }
    } else {
      for (String p : names) {
        for (Nic n : nics) {
          if (matches(n.name(), p, exact) && !candidates.contains(n)) {
            candidates.add(n);
          }
        }
      }
    }
    for (Nic n : candidates) {
      String a = n.up() ? usableAddress(n.addresses()) : null;
      if (a != null) {
        return a;
      }
    }
    throw new CclException(
        "socket.ifname="
            + ifname
            + " selects no interface that is up and has an address; interfaces here: "
            + describe(nics));
  }

  private static boolean matches(String name, String pattern, boolean exact) {
    return exact ? name.equals(pattern) : name.startsWith(pattern);
  }

  /** The first IPv4 address, else the first IPv6 address that is not link-local; or null. */
  private static String usableAddress(List<InetAddress> addresses) {
    for (InetAddress a : addresses) {
      if (a instanceof Inet4Address) {
        return a.getHostAddress();
      }
    }
    for (InetAddress a : addresses) {
      if (a instanceof Inet6Address && !a.isLinkLocalAddress()) {
        String s = a.getHostAddress();
        int scope = s.indexOf('%');
        return scope < 0 ? s : s.substring(0, scope);
      }
    }
    return null;
  }

  private static String describe(List<Nic> nics) {
    if (nics.isEmpty()) {
      return "none";
    }
    return nics.stream()
        .map(
            n ->
                n.name()
                    + " ("
                    + (n.up() ? "up" : "down")
                    + (n.loopback() ? ", loopback" : "")
                    + (n.addresses().isEmpty()
                        ? ", no address"
                        : ", "
                            + n.addresses().stream()
                                .map(InetAddress::getHostAddress)
                                .collect(Collectors.joining(" ")))
                    + ")")
        .collect(Collectors.joining(", "));
  }

  /** This machine's interfaces, in the system's order. */
  public static List<Nic> interfaces() {
    List<Nic> nics = new ArrayList<>();
    try {
      for (NetworkInterface ni : Collections.list(NetworkInterface.getNetworkInterfaces())) {
        nics.add(
            new Nic(
                ni.getName(),
                ni.isUp(),
                ni.isLoopback(),
                List.copyOf(Collections.list(ni.getInetAddresses()))));
      }
    } catch (SocketException e) {
      throw new CclException(
          "cannot list the network interfaces for socket.ifname: " + e.getMessage(), e);
    }
    return nics;
  }
}
