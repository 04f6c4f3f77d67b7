package org.sparkccl.kernel;

import java.nio.ByteBuffer;
import java.util.function.Supplier;
import org.sparkccl.fifo.Fifo;

/**
 * One point-to-point link as a host kernel sees it during one collective: the link's FIFO, the peer
 * and the step of the next slice. Tree and recursive doubling kernels walk their edges slice by
 * slice through it, so both wait, check sizes and advance steps the same way.
 */
public final class PeerEdge {
  final Fifo fifo;
  final int peer;
  long step;

  public PeerEdge(Fifo fifo, int peer, long firstStep) {
    this.fifo = fifo;
    this.peer = peer;
    this.step = firstStep;
  }

  /**
   * Waits for a free send slot and returns it; {@code what} names the collective, built only for an
   * error.
   */
  ByteBuffer awaitRoom(KernelWaiter waiter, KernelGuard guard, Supplier<String> what) {
    long s = step;
    // the text's supplier is made only by a wait that got as far as checking
    waiter.await(
        () -> fifo.hasRoomFor(s),
        waited ->
            guard.checkWait(
                waited, () -> what.get() + ": waiting for rank " + peer + " to take data"));
    return fifo.slot(s);
  }

  /**
   * Waits for a filled receive slot of {@code expected} bytes and returns it; another size means
   * the ranks disagree on the call.
   */
  ByteBuffer awaitFilled(
      int expected, KernelWaiter waiter, KernelGuard guard, Supplier<String> what) {
    long s = step;
    waiter.await(
        () -> fifo.isFilled(s),
        waited ->
            guard.checkWait(waited, () -> what.get() + ": waiting for data from rank " + peer));
    int got = fifo.size(s);
    if (got != expected) {
      throw new IllegalStateException(
          what.get()
              + ": received a slice of "
              + got
              + " bytes from rank "
              + peer
              + " where "
              + expected
              + " were expected; the ranks disagree on the call");
    }
    return fifo.slot(s);
  }

  void publish(int len) {
    fifo.publish(step, len);
    step++;
  }

  void release() {
    fifo.release(step);
    step++;
  }
}
