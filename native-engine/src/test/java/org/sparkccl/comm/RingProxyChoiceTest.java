package org.sparkccl.comm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.sparkccl.config.CclConfig;

/**
 * Which ring collectives the proxy thread moves alone (key {@code ring.proxyMinBytes}): {@code
 * auto}, the default, gives it rings of 512 KiB and more where every rank spins with cores to spare
 * and the ring runs over sockets; a byte count holds everywhere; 0 never.
 */
@DisplayName("ring.proxyMinBytes: auto, a byte count, or off")
class RingProxyChoiceTest {
  private static final long AUTO = CclConfig.RING_PROXY_AUTO;

  @Test
  @DisplayName(
      "auto: rings of 512 KiB and more, only where ranks spin with cores to spare, over sockets")
  void autoNeedsSpinningRanksAndSockets() {
    assertEquals(512 << 10, CollectiveLauncher.proxyMinBytes(AUTO, true, true));
    assertEquals(
        0,
        CollectiveLauncher.proxyMinBytes(AUTO, false, true),
        "ranks that back off, or spin on every core");
    assertEquals(0, CollectiveLauncher.proxyMinBytes(AUTO, true, false), "a ring not on sockets");
    assertEquals(0, CollectiveLauncher.proxyMinBytes(AUTO, false, false));
  }

  @Test
  @DisplayName("a byte count, or 0, holds whether ranks spin or not")
  void anExplicitValueHoldsEverywhere() {
    for (boolean spins : new boolean[] {false, true}) {
      for (boolean sockets : new boolean[] {false, true}) {
        assertEquals(1, CollectiveLauncher.proxyMinBytes(1, spins, sockets));
        assertEquals(0, CollectiveLauncher.proxyMinBytes(0, spins, sockets));
        assertEquals(3 << 20, CollectiveLauncher.proxyMinBytes(3 << 20, spins, sockets));
      }
    }
  }

  @Test
  @DisplayName("the key reads auto (the default), byte counts with suffixes, and rejects the rest")
  void theKeyParses() {
    assertEquals(AUTO, CclConfig.fromMap(Map.of()).ringProxyMinBytes());
    assertEquals("auto", CclConfig.fromMap(Map.of()).asMap().get("ring.proxyMinBytes"));
    assertEquals(
        AUTO, CclConfig.fromMap(Map.of("ring.proxyMinBytes", " AUTO ")).ringProxyMinBytes());
    assertEquals(
        1 << 20, CclConfig.fromMap(Map.of("ring.proxyMinBytes", "1M")).ringProxyMinBytes());
    assertEquals(0, CclConfig.fromMap(Map.of("ring.proxyMinBytes", "0")).ringProxyMinBytes());
    IllegalArgumentException bad =
        assertThrows(
            IllegalArgumentException.class,
            () -> CclConfig.fromMap(Map.of("ring.proxyMinBytes", "soon")));
    assertTrue(
        bad.getMessage().contains("ring.proxyMinBytes=soon is not auto or a byte size"),
        bad.getMessage());
    IllegalArgumentException negative =
        assertThrows(
            IllegalArgumentException.class,
            () -> CclConfig.builder().ringProxyMinBytes(-2).build());
    assertTrue(
        negative.getMessage().contains("auto, 0 (off) or more bytes"), negative.getMessage());
  }

  @Test
  @DisplayName("only the socket ring counts as one over sockets")
  void onlyTheSocketRingIsOverSockets() {
    assertTrue(new SocketRing(null).overSockets());
    assertFalse(new LocalRing().overSockets());
  }
}
