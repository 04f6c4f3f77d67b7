package org.sparkccl.kernel;

import java.nio.ByteBuffer;
import java.util.List;
import org.sparkccl.fifo.Fifo;

/**
 * Runs a group of point-to-point transfers on a kernel thread, all at once: it moves whichever
 * transfer's next slice is ready and waits only when none is. So a group that sends to and receives
 * from the same peers cannot deadlock on full FIFOs, whatever the order of its calls (the role of
 * {@code ncclGroupStart/End} for sends and receives).
 */
public final class HostP2pKernel {
  private HostP2pKernel() {}

  /** One send or receive of {@code bytes} bytes at {@code offset} of {@code buffer}. */
  public static final class Transfer {
    final boolean send;
    final Fifo fifo;
    final ByteBuffer buffer;
    final int offset;
    final int bytes;
    final String describe;
    long step;
    int done;

    /**
     * @param firstStep the FIFO step of the first slice
     * @param describe what a stalled wait says ("waiting for data from rank 3")
     */
    public Transfer(
        boolean send,
        Fifo fifo,
        long firstStep,
        ByteBuffer buffer,
        int offset,
        int bytes,
        String describe) {
      this.send = send;
      this.fifo = fifo;
      this.step = firstStep;
      this.buffer = buffer;
      this.offset = offset;
      this.bytes = bytes;
      this.describe = describe;
    }

    boolean finished() {
      return done >= bytes;
    }

    boolean ready() {
      return !finished() && (send ? fifo.hasRoomFor(step) : fifo.isFilled(step));
    }

    void moveSlice() {
      int len = Math.min(fifo.stepSize(), bytes - done);
      if (send) {
        fifo.slot(step).put(0, buffer, offset + done, len);
        fifo.publish(step, len);
      } else {
        int got = fifo.size(step);
        if (got != len) {
          throw new IllegalStateException(
              describe
                  + ": received a slice of "
                  + got
                  + " bytes where "
                  + len
                  + " were"
                  + " expected (step "
                  + step
                  + "); the ranks disagree on the call");
        }
        buffer.put(offset + done, fifo.slot(step), 0, len);
        fifo.release(step);
      }
      done += len;
      step++;
    }
  }

  /** Moves every transfer to its end. */
  public static void run(List<Transfer> transfers, KernelWaiter waiter, KernelGuard guard) {
    while (true) {
      boolean moved = false;
      boolean left = false;
      for (Transfer t : transfers) {
        while (t.ready()) {
          t.moveSlice();
          moved = true;
        }
        left |= !t.finished();
      }
      if (!left) {
        return;
      }
      if (!moved) {
        waiter.await(
            () -> transfers.stream().anyMatch(Transfer::ready),
            waited -> {
              Transfer stuck = transfers.stream().filter(t -> !t.finished()).findFirst().get();
              guard.checkWait(waited, stuck.describe);
            });
      }
    }
  }
}
