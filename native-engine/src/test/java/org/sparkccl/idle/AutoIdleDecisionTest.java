package org.sparkccl.idle;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The numbers {@code idle=auto} decides from, each against a count made by hand. */
@DisplayName("idle=auto's decision")
class AutoIdleDecisionTest {
  @Test
  @DisplayName("a rank polls with a kernel thread per channel, the proxy and the ring's helpers")
  void pollingThreads() {
    assertEquals(2, AutoIdle.pollingThreadsPerRank(1, 0));
    assertEquals(5, AutoIdle.pollingThreadsPerRank(4, 0));
    // 2 channels: 2 kernels + proxy + 2 connections x 2 channels x 3 helpers
    assertEquals(15, AutoIdle.pollingThreadsPerRank(2, 3));
  }

  @Test
  @DisplayName("cores: the JVM's, capped at cpusPerRank for each rank on the host when set")
  void cores() {
    assertEquals(2, AutoIdle.cores(2, 0, 4));
    assertEquals(4, AutoIdle.cores(32, 1, 4));
    assertEquals(2, AutoIdle.cores(2, 4, 4));
    assertEquals(Integer.MAX_VALUE, AutoIdle.cores(Integer.MAX_VALUE, 1 << 30, 8));
  }

  @ParameterizedTest(name = "{0} ranks x {1} threads on {2} cores: spin={3}")
  @CsvSource({
    "4, 2, 2, false", // this 2-core machine with 4 ranks: never spin
    "1, 2, 2, true",
    "1, 3, 2, false",
    "4, 2, 8, true",
    "4, 2, 7, false",
    "8, 4, 32, true",
    "8, 5, 32, false",
    "65536, 65536, 2147483647, false" // no overflow
  })
  void spinsOnlyWhenTheCoresCoverEveryPollingThread(
      int ranks, int threads, int cores, boolean spins) {
    assertEquals(spins, AutoIdle.spins(ranks, threads, cores));
  }
}
