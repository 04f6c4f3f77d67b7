package org.sparkccl;

import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.sparkccl.CollectiveCase.Kind;
import org.sparkccl.CollectiveCase.Spec;
import org.sparkccl.bootstrap.Bootstrap;
import org.sparkccl.config.Algorithm;
import org.sparkccl.config.CclConfig;
import org.sparkccl.config.Transport;

/**
 * {@code transport=local}: ring channels of ranks that are threads of one JVM move slots by memory
 * copy. Every collective gives the reference's answer, and ranks of separate processes are refused.
 */
@DisplayName("the in-process transport")
class LocalTransportTest {
  private static final Duration WAIT = Duration.ofSeconds(60);

  private static CclConfig config(int channels, int buffSize) {
    return CclConfig.builder()
        .transport(Transport.LOCAL)
        .nChannels(channels)
        .buffSize(buffSize)
        .timeout(Duration.ofSeconds(30))
        .algo(Algorithm.RING)
        .build();
  }

  @Test
  void everyRingCollectiveMatchesTheReference() {
    for (int n : new int[] {2, 3}) {
      // 8 KiB slots, and 256 KiB slots, which are copied in parts
      Communicator[] comms = RankHarness.createAll(n, config(2, n == 2 ? 64 << 10 : 2 << 20), WAIT);
      try {
        long seed = 1;
        for (DataType t : List.of(DataType.FLOAT32, DataType.BFLOAT16, DataType.INT8)) {
          for (int count : new int[] {1, 1003, 140_001}) {
            for (boolean inPlace : new boolean[] {false, true}) {
              assertNull(
                  RankHarness.allReduceAndCheck(
                      comms, count, t, ReduceOp.SUM, inPlace, seed++, WAIT),
                  n + " ranks allReduce " + t + " " + count);
            }
            for (Kind kind : Kind.values()) {
              Spec spec =
                  new Spec(
                      kind, t, kind.reduces() ? ReduceOp.MAX : null, count, n - 1, count % 2 == 0);
              assertNull(CollectivesTest.runAndCheck(comms, spec, seed++), n + " ranks " + spec);
            }
          }
        }
      } finally {
        RankHarness.closeAll(comms, WAIT);
      }
    }
  }

  @Test
  void ranksThatAreNotThreadsOfOneJvmAreRefused() {
    Bootstrap elsewhere =
        new Bootstrap() {
          @Override
          public int rank() {
            return 0;
          }

          @Override
          public int nRanks() {
            return 2;
          }

          @Override
          public byte[][] allGather(byte[] mine, Duration timeout) {
            return new byte[][] {mine, mine};
          }
        };
    CclException e =
        assertThrows(CclException.class, () -> Communicator.create(elsewhere, config(1, 64 << 10)));
    assertTrue(
        e.getMessage().contains("transport=local but rank 1 did not publish its channels"),
        e.getMessage());
  }
}
