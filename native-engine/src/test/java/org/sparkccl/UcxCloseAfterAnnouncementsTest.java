package org.sparkccl;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.SplittableRandom;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.sparkccl.config.Algorithm;
import org.sparkccl.config.CclConfig;
import org.sparkccl.config.Transport;
import org.sparkccl.device.DeviceBuffer;
import org.sparkccl.device.HostDevice;

/**
 * Over UCX every rank of a tree broadcast announces its call to its ring predecessor in a control
 * notice. A rank that destroyed its UCX worker while a peer's notices were still on the way made
 * that peer's close crash inside UCX (docs/reliability.md), so a closing rank keeps its worker
 * until each rank that announced to it has said it closed, for at most 1 s; a rank that was never
 * announced to does not wait.
 */
@DisplayName("a UCX rank's close")
class UcxCloseAfterAnnouncementsTest {
  private static final Duration WAIT = Duration.ofSeconds(60);
  private static final int COUNT = 2;
  private static final long LATE_CLOSE_MS = 600;

  @Test
  @DisplayName("waits for a rank that announced broadcasts to it to close, and only for such")
  void waitsForItsAnnouncers() throws Exception {
    assertTrue(closeOfRank0Millis(true) >= LATE_CLOSE_MS / 2, "after broadcasts");
    assertTrue(closeOfRank0Millis(false) < LATE_CLOSE_MS / 2, "after allReduces only");
  }

  /**
   * Two ranks over UCX run 50 calls (tree broadcasts, each rank announcing, or allReduces, none),
   * then rank 1 closes {@link #LATE_CLOSE_MS} after rank 0 starts to: returns how long rank 0's
   * close took.
   */
  private static long closeOfRank0Millis(boolean broadcasts) throws Exception {
    CclConfig config =
        CclConfig.builder()
            .transport(Transport.UCX)
            .algo(broadcasts ? Algorithm.TREE : Algorithm.RING)
            .timeout(Duration.ofSeconds(30))
            .build();
    Communicator[] comms = RankHarness.createAll(2, config, WAIT);
    long[] closeMillis = new long[1];
    try {
      RankHarness.run(
          2,
          WAIT,
          rank -> {
            SplittableRandom random = new SplittableRandom(1234);
            DeviceBuffer buf = HostDevice.INSTANCE.allocate(COUNT * 4L);
            try {
              for (int i = 0; i < 50; i++) {
                float[] sent = {(float) random.nextGaussian(), (float) random.nextGaussian()};
                float[] mine = rank == 0 ? sent : new float[] {-1f, -2f};
                buf.copyFromHost(mine, 0);
                float[] got = new float[COUNT];
                if (broadcasts) {
                  comms[rank].broadcast(buf, COUNT, DataType.FLOAT32, 0);
                  buf.copyToHost(0, got);
                  assertArrayEquals(sent, got, "broadcast " + i + " on rank " + rank);
                } else {
                  comms[rank].allReduce(buf, buf, COUNT, DataType.FLOAT32, ReduceOp.MAX);
                  buf.copyToHost(0, got);
                  float[] max = {Math.max(sent[0], -1f), Math.max(sent[1], -2f)};
                  assertArrayEquals(max, got, "allReduce " + i + " on rank " + rank);
                }
              }
            } finally {
              buf.close();
            }
            if (rank == 1) {
              Thread.sleep(LATE_CLOSE_MS);
              comms[1].close();
            } else {
              long start = System.nanoTime();
              comms[0].close();
              closeMillis[0] = (System.nanoTime() - start) / 1_000_000;
            }
          });
    } finally {
      RankHarness.closeAll(comms, WAIT);
    }
    return closeMillis[0];
  }
}
