package org.sparkccl.algorithm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.SplittableRandom;
import java.util.stream.IntStream;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * How the ring allReduce cuts chunks smaller than {@link RingPlanner#CHUNK_STEPS} slots into
 * pieces. {@link RingPlansTest} checks that such plans still reduce every element once; this checks
 * the pieces' sizes, and that those simulations meet pieces at all.
 */
@DisplayName("ring allReduce pieces")
class RingPiecesTest {
  private static final int SLOT = 512 << 10;

  @Test
  @DisplayName("2 MiB over 8 ranks: each rank's 256 KiB chunk moves in four 64 KiB calls")
  void midSizeChunksMoveInPieces() {
    int n = 8;
    long count = (2L << 20) / 4;
    for (int rank = 0; rank < n; rank++) {
      ChannelPlan plan = RingAllReduce.plan(0, rank, n, 0, count, 4, SLOT);
      assertEquals(4 * (2 * n - 1), plan.calls().size(), "calls of rank " + rank);
      for (PrimitiveCall c : plan.calls()) {
        assertEquals(64 << 10, c.bytes(), "a call of rank " + rank + ": " + c);
      }
      assertEquals(4L * 2 * (n - 1), plan.sendSteps(), "send steps of rank " + rank);
      assertEquals(4L * 2 * (n - 1), plan.recvSteps(), "receive steps of rank " + rank);
    }
  }

  @Test
  @DisplayName("chunks that fill four slots stay one call each, sliced into full steps")
  void fullChunksStayWhole() {
    int n = 4;
    long chunkBytes = 4L * SLOT;
    long count = 3L * n * chunkBytes / 8;
    ChannelPlan plan = RingAllReduce.plan(0, 1, n, 0, count, 8, SLOT);
    assertEquals(3 * (2 * n - 1), plan.calls().size());
    for (PrimitiveCall c : plan.calls()) {
      assertEquals(chunkBytes, c.bytes(), c.toString());
    }
  }

  @Test
  @DisplayName(
      "pieces: at most four steps per chunk, aligned, and no smaller than the floor or a slot")
  void pieceSizes() {
    SplittableRandom rnd = new SplittableRandom(0x91ECE);
    for (int i = 0; i < 20_000; i++) {
      int elemSize = 1 << rnd.nextInt(4);
      int stepSize = 64 * (1 + rnd.nextInt(rnd.nextBoolean() ? 4 : 16_384));
      long maxChunk = RingPlanner.chunkElems(stepSize, elemSize);
      long chunk = 1 + rnd.nextLong(maxChunk + maxChunk / 2);
      long piece = RingPlanner.pieceElems(chunk, stepSize, elemSize);
      String what = chunk + " elements of " + elemSize + " B, slots of " + stepSize + " B";
      long pieces = RingPlanner.ceilDiv(chunk, piece);
      long bytes = piece * elemSize;
      assertTrue(piece >= 1 && piece <= chunk, what + ": piece " + piece);
      if (chunk >= maxChunk) {
        assertEquals(chunk, piece, what + ": a full chunk is one call");
        continue;
      }
      assertTrue(pieces <= RingPlanner.CHUNK_STEPS, what + ": " + pieces + " pieces");
      if (piece < chunk) {
        // a step inside one call starts at a multiple of a slot too
        assertTrue(
            bytes % ChannelSplit.ALIGN_BYTES == 0 || bytes % stepSize == 0,
            what + ": piece of " + bytes + " B");
        assertTrue(
            bytes >= Math.min(RingPlanner.PIECE_MIN_BYTES, stepSize),
            what + ": piece of " + bytes + " B under the floor");
      }
      long steps = 0;
      for (long done = 0; done < chunk; done += piece) {
        steps += RingPlanner.ceilDiv(Math.min(piece, chunk - done) * elemSize, stepSize);
      }
      assertTrue(steps <= RingPlanner.CHUNK_STEPS, what + ": " + steps + " steps in its pieces");
    }
  }

  @Test
  @DisplayName("the ring plans' simulations include chunks cut into pieces")
  void simulationsMeetPieces() {
    long cut =
        IntStream.rangeClosed(2, 9)
            .boxed()
            .flatMap(n -> RingPlansTest.setups(n).stream())
            .filter(
                s -> {
                  long chunk =
                      Math.min(
                          RingPlanner.chunkElems(s.stepSize(), s.elemSize()),
                          ChannelSplit.alignedShare(
                              ChannelSplit.alignedShare(s.count(), s.channels(), s.elemSize()),
                              s.nRanks(),
                              s.elemSize()));
                  return RingPlanner.pieceElems(chunk, s.stepSize(), s.elemSize()) < chunk;
                })
            .count();
    assertTrue(cut >= 20, "only " + cut + " simulated setups cut a chunk into pieces");
  }
}
