package org.sparkccl.transport.socket;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.List;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.sparkccl.CclException;
import org.sparkccl.transport.socket.ListenAddress.Nic;

@DisplayName("the listening address")
class ListenAddressTest {
  private static Nic nic(String name, boolean up, boolean loopback, String... addresses)
      throws UnknownHostException {
    InetAddress[] a = new InetAddress[addresses.length];
    for (int i = 0; i < a.length; i++) {
      a[i] = InetAddress.getByName(addresses[i]);
    }
    return new Nic(name, up, loopback, List.of(a));
  }

  private static List<Nic> machine() throws UnknownHostException {
    return List.of(
        nic("lo", true, true, "127.0.0.1", "::1"),
        nic("docker0", true, false, "172.17.0.1"),
        nic("eth0", false, false, "10.1.0.5"), // down
        nic("eth1", true, false, "fe80::1", "10.2.0.7"),
        nic("ib0", true, false, "fd00::9"),
        nic("ib1", true, false, "fe80::2"), // link-local only: unusable
        nic("veth3", true, false));
  }

  @Test
  @DisplayName("socket.host wins, then socket.ifname, then the bootstrap's address, then loopback")
  void precedence() throws UnknownHostException {
    List<Nic> m = machine();
    assertEquals("10.9.9.9", ListenAddress.choose("10.9.9.9", "eth", "10.3.3.3", m));
    assertEquals("10.2.0.7", ListenAddress.choose(null, "eth", "10.3.3.3", m));
    assertEquals("10.3.3.3", ListenAddress.choose(null, null, "10.3.3.3", m));
    assertEquals("127.0.0.1", ListenAddress.choose(null, null, null, m));
  }

  @Test
  @DisplayName("prefixes skip down interfaces and prefer IPv4; the list's order decides")
  void prefixes() throws UnknownHostException {
    List<Nic> m = machine();
    assertEquals("10.2.0.7", ListenAddress.choose(null, "eth", null, m)); // eth0 is down
    assertEquals("fd00:0:0:0:0:0:0:9", ListenAddress.choose(null, "ib", null, m));
    assertEquals("fd00:0:0:0:0:0:0:9", ListenAddress.choose(null, "ib,eth", null, m));
    assertEquals("10.2.0.7", ListenAddress.choose(null, "eth, ib", null, m));
    assertEquals("127.0.0.1", ListenAddress.choose(null, "lo", null, m)); // named: allowed
  }

  @Test
  @DisplayName("^ excludes, and never yields loopback; = matches whole names")
  void exclusionAndExactNames() throws UnknownHostException {
    List<Nic> m = machine();
    assertEquals("10.2.0.7", ListenAddress.choose(null, "^docker", null, m));
    assertEquals("fd00:0:0:0:0:0:0:9", ListenAddress.choose(null, "^docker,eth", null, m));
    assertEquals("10.2.0.7", ListenAddress.choose(null, "=eth1", null, m));
    assertEquals("10.2.0.7", ListenAddress.choose(null, "^=docker0", null, m));
    CclException e =
        assertThrows(CclException.class, () -> ListenAddress.choose(null, "=eth", null, m));
    assertTrue(e.getMessage().contains("eth0 (down, 10.1.0.5)"), e.getMessage());
    assertTrue(e.getMessage().contains("socket.ifname==eth"), e.getMessage());
    assertThrows(CclException.class, () -> ListenAddress.choose(null, "=eth0", null, m));
    assertThrows(CclException.class, () -> ListenAddress.choose(null, "ib1,veth", null, m));
    assertThrows(IllegalArgumentException.class, () -> ListenAddress.choose(null, "^ ,", null, m));
  }

  @Test
  @DisplayName("on this machine, ^lo never yields a loopback address, and lo yields one")
  void thisMachine() {
    List<Nic> nics = ListenAddress.interfaces();
    boolean other =
        nics.stream().anyMatch(n -> n.up() && !n.loopback() && !n.addresses().isEmpty());
    if (other) {
      String a = ListenAddress.choose(null, "^lo", null);
      assertTrue(!a.startsWith("127.") && !a.equals("::1"), a + " of " + nics);
    }
    assertEquals("127.0.0.1", ListenAddress.choose(null, "lo", null));
  }
}
