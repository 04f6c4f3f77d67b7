package org.sparkccl.transport.ucx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.sparkccl.NeedsUcx;
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
  @Test
  @Timeout(60)
  @DisplayName("does not go where the peer's own close went first")
  void noAnswerBesidesItsOwnClose() throws Exception {
    NeedsUcx.assume("UcxCloseAnswerTest");
    long liveBefore = UcxTransport.liveObjects();
    try (UcxEnds r = UcxEnds.connect(11)) {
      // both close before either has heard the other
      ((SendConnection) r.out()).notifyPeer(false, "rank 0 closed its communicator");
      ((RecvConnection) r.in()).notifyPeer(false, "rank 1 closed its communicator");
      r.pollUntil(() -> r.out().peerStopped() && r.in().peerStopped(), 10_000);
      r.pollUntil(() -> false, 200); // time for an answer to arrive
      assertTrue(r.out().peerStopped() && r.in().peerStopped(), "each heard the other's close");
      assertFalse(
          r.out().peerAnsweredClose() || r.in().peerAnsweredClose(),
          "a rank that had sent its own close answered the peer's too (rank 1 answered rank 0: "
              + r.out().peerAnsweredClose()
              + "; rank 0 answered rank 1: "
              + r.in().peerAnsweredClose()
              + ")");
    }
    assertEquals(liveBefore, UcxTransport.liveObjects(), "UCX objects left after close");
  }

  @Test
  @Timeout(60)
  @DisplayName("goes to a rank that closed alone")
  void answersARankThatClosedAlone() throws Exception {
    NeedsUcx.assume("UcxCloseAnswerTest");
    try (UcxEnds r = UcxEnds.connect(11)) {
      ((SendConnection) r.out()).notifyPeer(false, "rank 0 closed its communicator");
      r.pollUntil(r.out()::peerAnsweredClose, 10_000);
      assertTrue(r.out().peerAnsweredClose(), "rank 1 answered rank 0's close");
    }
  }
}
