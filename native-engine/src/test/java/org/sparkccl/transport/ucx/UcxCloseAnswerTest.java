package org.sparkccl.transport.ucx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.sparkccl.NeedsUcx;
import org.sparkccl.auth.ChallengeResponse;
import org.sparkccl.fifo.Fifo;
import org.sparkccl.transport.RecvConnection;
import org.sparkccl.transport.SendConnection;

/**
 * A UCX peer answers a rank's close with {@code CLOSE_SEEN} unless it sent its own close first,
 * which tells the closing rank the same. An answer besides it reached a rank whose inbox had
 * closed, and UCX warned of a tag message "not matched" when that rank's worker went (two ranks
 * closing together).
 */
@DisplayName("a UCX peer's answer to a close")
class UcxCloseAnswerTest {
  private static final int STEP = 64 << 10;

  @Test
  @Timeout(60)
  @DisplayName("does not go where the peer's own close went first")
  void noAnswerBesidesItsOwnClose() throws Exception {
    NeedsUcx.assume("UcxCloseAnswerTest");
    long liveBefore = UcxTransport.liveObjects();
    try (TwoRanks r = TwoRanks.connect()) {
      // both close before either has heard the other
      ((SendConnection) r.out).notifyPeer(false, "rank 0 closed its communicator");
      ((RecvConnection) r.in).notifyPeer(false, "rank 1 closed its communicator");
      r.pollUntil(() -> r.out.peerStopped() && r.in.peerStopped(), 10_000);
      r.pollUntil(() -> false, 200); // time for an answer to arrive
      assertTrue(r.out.peerStopped() && r.in.peerStopped(), "each heard the other's close");
      assertFalse(
          r.out.peerAnsweredClose() || r.in.peerAnsweredClose(),
          "a rank that had sent its own close answered the peer's too (rank 1 answered rank 0: "
              + r.out.peerAnsweredClose()
              + "; rank 0 answered rank 1: "
              + r.in.peerAnsweredClose()
              + ")");
    }
    assertEquals(liveBefore, UcxTransport.liveObjects(), "UCX objects left after close");
  }

  @Test
  @Timeout(60)
  @DisplayName("goes to a rank that closed alone")
  void answersARankThatClosedAlone() throws Exception {
    NeedsUcx.assume("UcxCloseAnswerTest");
    try (TwoRanks r = TwoRanks.connect()) {
      ((SendConnection) r.out).notifyPeer(false, "rank 0 closed its communicator");
      r.pollUntil(r.out::peerAnsweredClose, 10_000);
      assertTrue(r.out.peerAnsweredClose(), "rank 1 answered rank 0's close");
    }
  }

  /** Rank 0 sends to rank 1 on channel 0; this thread acts as both ranks' proxy. */
  private record TwoRanks(
      UcxTransport rank0, UcxTransport rank1, UcxConnection out, UcxConnection in, Fifo[] fifos)
      implements AutoCloseable {
    static TwoRanks connect() throws Exception {
      Fifo[] fifos = {new Fifo(STEP), new Fifo(STEP), new Fifo(STEP), new Fifo(STEP)};
      UcxTransport rank0 = UcxTransport.open(0, 1, new Fifo[] {fifos[0]}, new Fifo[] {fifos[1]});
      UcxTransport rank1 = UcxTransport.open(1, 1, new Fifo[] {fifos[2]}, new Fifo[] {fifos[3]});
      byte[] secret = new byte[ChallengeResponse.SECRET_BYTES];
      new SplittableRandom(11).nextBytes(secret);
      for (UcxTransport t : new UcxTransport[] {rank0, rank1}) {
        t.useSecret(secret);
        t.onProxy(Runnable::run);
      }
      UcxConnection out = (UcxConnection) rank0.connectSend(1, 0, rank1.localInfo());
      UcxConnection in = (UcxConnection) rank1.connectRecv(0, 0, rank0.localInfo());
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      ExecutorService prover = Executors.newSingleThreadExecutor();
      try {
        Future<?> proven = prover.submit(() -> rank1.awaitPeersProven(deadline));
        rank0.awaitPeersProven(deadline);
        proven.get(30, TimeUnit.SECONDS);
      } finally {
        prover.shutdown();
      }
      return new TwoRanks(rank0, rank1, out, in, fifos);
    }

    void pollUntil(BooleanSupplier done, long millis) {
      long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
      while (!done.getAsBoolean() && System.nanoTime() < end) {
        rank0.poll();
        rank1.poll();
      }
    }

    @Override
    public void close() {
      rank0.close(false);
      rank1.close(false);
      for (Fifo f : fifos) {
        f.close();
      }
    }
  }
}
