package org.sparkccl.comm;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.sparkccl.config.Algorithm;

/**
 * How {@code algo=auto} combines the tuner's choice with the ring transport: the tuner's choice up
 * to the ring's {@code tunedUpTo}, the ring above it, and an algorithm asked for at every size.
 */
@DisplayName("algorithm choice per ring transport")
class AlgorithmChoiceTest {
  @Test
  @DisplayName("UCX takes the tuner's choice up to 4 KiB, then the ring; sockets take it always")
  void theTunersChoiceHoldsUpToTheRingsBound() {
    long ucx = UcxRing.TUNED_UP_TO;
    assertEquals(4096, ucx);
    assertEquals(Algorithm.RD, CollectiveLauncher.choose(Algorithm.RD, Algorithm.AUTO, 8, ucx));
    assertEquals(
        Algorithm.TREE, CollectiveLauncher.choose(Algorithm.TREE, Algorithm.AUTO, ucx, ucx));
    assertEquals(
        Algorithm.RING, CollectiveLauncher.choose(Algorithm.RD, Algorithm.AUTO, ucx + 1, ucx));
    assertEquals(
        Algorithm.RH,
        CollectiveLauncher.choose(Algorithm.RH, Algorithm.AUTO, 1 << 30, Long.MAX_VALUE));
  }

  @Test
  @DisplayName("the in-memory ring never takes a point-to-point algorithm unless asked for")
  void theInMemoryRingKeepsToTheRing() {
    assertEquals(Algorithm.RING, CollectiveLauncher.choose(Algorithm.RD, Algorithm.AUTO, 8, -1));
    assertEquals(Algorithm.RING, CollectiveLauncher.choose(Algorithm.TREE, Algorithm.AUTO, 0, -1));
  }

  @Test
  @DisplayName("an algorithm asked for runs at every size on every ring")
  void anAlgorithmAskedForAlwaysRuns() {
    assertEquals(Algorithm.RD, CollectiveLauncher.choose(Algorithm.RD, Algorithm.RD, 1 << 30, -1));
    assertEquals(
        Algorithm.TREE, CollectiveLauncher.choose(Algorithm.TREE, Algorithm.TREE, 1 << 20, 4096));
  }
}
