package org.sparkccl;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.SplittableRandom;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.sparkccl.bootstrap.LocalBootstrap;
import org.sparkccl.config.CclConfig;
import org.sparkccl.config.IdleMode;
import org.sparkccl.config.Transport;

/**
 * Every idle mode gives the reference's results: ranks as threads over the socket transport, with a
 * helper thread per connection (128 KiB slots, so data goes through the helpers), a large allReduce
 * that fills the FIFOs several times and a tiny one, through the blocking API.
 */
@DisplayName("allReduce in every idle mode")
class IdleModesTest {
  private static final int RANKS = 3;
  private static final int[] COUNTS = {400_003, 7};

  @ParameterizedTest(name = "idle={0}")
  @EnumSource(IdleMode.class)
  @DisplayName("matches the reference")
  void allReduceMatchesTheReference(IdleMode mode) {
    CclConfig config =
        CclConfig.builder()
            .transport(Transport.SOCKET)
            .idle(mode)
            .buffSize(1 << 20)
            .socketThreads(1)
            .timeout(Duration.ofSeconds(30))
            .build();
    DataType t = DataType.FLOAT32;
    ReduceOp op = ReduceOp.SUM;
    LocalBootstrap.Group group = LocalBootstrap.group(RANKS);
    RankHarness.run(
        RANKS,
        Duration.ofSeconds(60),
        rank -> {
          try (Communicator comm = Communicator.create(group.rank(rank), config)) {
            for (int count : COUNTS) {
              ByteBuffer[] inputs = new ByteBuffer[RANKS];
              for (int r = 0; r < RANKS; r++) {
                inputs[r] = Reference.heap(count * t.size());
                Reference.fill(inputs[r], count, t, new SplittableRandom(77L * count + r), false);
              }
              String m = RankHarness.allReduceInPlaceOnRank(comm, rank, inputs, count, t, op);
              assertEquals(null, m, "rank " + rank + " idle=" + mode + " count=" + count);
            }
          }
        });
  }
}
