package org.sparkccl.transport.socket;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.sparkccl.CclException;
import org.sparkccl.ReduceOp;
import org.sparkccl.comm.CollectiveCall;
import org.sparkccl.transport.NetRequest;

/**
 * A ring socket's ends report a neighbour's normal close as such: rank 0 sends to rank 1 over one
 * connection, and whichever end closes, the other end's next transfer fails saying "rank N has
 * closed its communicator", not "connection closed by the peer" or "Broken pipe".
 */
@DisplayName("a ring socket's close notices")
class SocketCloseNoticeTest {
  private static final int SLOT = 1 << 20;

  @Test
  @Timeout(60)
  @DisplayName("a receive after the sender closed fails naming the close, not a closed socket")
  void receiverHearsTheSendersClose() throws Exception {
    try (SocketEnds p = SocketEnds.connect(null)) {
      p.out().notifyPeer(false, "rank 0 closed its communicator");
      p.closeSender();
      ByteBuffer slot = ByteBuffer.allocateDirect(SLOT);
      CclException e =
          assertThrows(CclException.class, () -> testUntilDone(p.in().postRecv(slot, 0)));
      assertTrue(
          e.getMessage().contains("rank 0 has closed its communicator"),
          "the receive should name the sender's close: " + e.getMessage());
    }
  }

  /**
   * The receiver's close notice lies in the socket when its close resets the connection (it closed
   * with data unread): the sender's next write fails, and reads the notice before it reports.
   */
  @Test
  @Timeout(60)
  @DisplayName("a send that meets the reset of a closed receiver's socket names the close")
  void senderReadsTheCloseBehindTheReset() throws Exception {
    try (SocketEnds p = SocketEnds.connect(null)) {
      ByteBuffer slot = randomSlot();
      NetRequest first = p.out().postSend(slot, SLOT, 0, call());
      first.test(); // the receiver reads none of it
      p.in().notifyPeer(false, "rank 1 closed its communicator");
      p.closeReceiver(); // unread bytes: the connection is reset, not shut down
      CclException e = sendUntilItFails(p, slot, 1);
      assertTrue(
          e.getMessage().contains("rank 1 has closed its communicator"),
          "the send should name the receiver's close: " + e.getMessage());
    }
  }

  /** A socket that ends without a notice (a process that died) is not reported as a close. */
  @Test
  @Timeout(60)
  @DisplayName("a send to a receiver whose socket ended without a notice does not name a close")
  void aSocketEndedWithoutANoticeIsNoClose() throws Exception {
    try (SocketEnds p = SocketEnds.connect(null)) {
      p.closeReceiver(); // nothing unread: the socket ends (FIN), with no close notice before it
      CclException e = sendUntilItFails(p, randomSlot(), 0);
      assertFalse(
          e.getMessage().contains("closed its communicator"),
          "a socket that ended is not a close: " + e.getMessage());
    }
  }

  /** Sends {@code slot} as steps from {@code firstStep} on until a send fails (20 s at most). */
  private static CclException sendUntilItFails(SocketEnds p, ByteBuffer slot, long firstStep) {
    return assertThrows(
        CclException.class,
        () -> {
          long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
          for (long step = firstStep; System.nanoTime() < end; step++) {
            testUntilDone(p.out().postSend(slot.clear(), SLOT, step, call()));
          }
        });
  }

  private static void testUntilDone(NetRequest r) {
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while (!r.test()) {
      if (System.nanoTime() > end) {
        throw new AssertionError("the request neither completed nor failed in 20 s");
      }
      LockSupport.parkNanos(100_000);
    }
  }

  private static ByteBuffer randomSlot() {
    ByteBuffer b = ByteBuffer.allocateDirect(SLOT);
    SplittableRandom rnd = new SplittableRandom(11);
    while (b.hasRemaining()) {
      b.put((byte) rnd.nextInt());
    }
    return b.clear();
  }

  private static CollectiveCall call() {
    return new CollectiveCall(
        CollectiveCall.Kind.ALL_REDUCE,
        1,
        SLOT / 4,
        org.sparkccl.DataType.FLOAT32,
        ReduceOp.SUM,
        0);
  }
}
