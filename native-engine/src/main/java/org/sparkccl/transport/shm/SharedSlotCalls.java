package org.sparkccl.transport.shm;

import java.nio.ByteBuffer;
import java.util.function.LongFunction;
import org.sparkccl.comm.CollectiveCall;
import org.sparkccl.fifo.FifoLayout;
import org.sparkccl.kernel.SlotCalls;

/**
 * The calls of one shared FIFO's slots, in the shared file beside its control block: {@link
 * FifoLayout#STEPS} records of {@link #STRIDE} bytes, slot {@code i} at {@code i * STRIDE}.
 */
final class SharedSlotCalls implements SlotCalls {
  /** Bytes per slot's record: a {@link CollectiveCall#BYTES} call, padded. */
  static final int STRIDE = 32;

  /** Bytes of the records of one FIFO. */
  static final int BYTES = FifoLayout.STEPS * STRIDE;

  private final ByteBuffer records;
  private final int rank;
  private final int peer;
  private final boolean checks;
  private final LongFunction<CollectiveCall> myCalls;

  /**
   * @param records {@link #BYTES} bytes of the shared file
   * @param rank this rank, for messages
   * @param peer the other end, for messages
   * @param checks whether to check at all (key {@code checkCalls})
   * @param myCalls this rank's call of a number, while it still knows it
   */
  SharedSlotCalls(
      ByteBuffer records,
      int rank,
      int peer,
      boolean checks,
      LongFunction<CollectiveCall> myCalls) {
    this.records = records;
    this.rank = rank;
    this.peer = peer;
    this.checks = checks;
    this.myCalls = myCalls;
  }

  @Override
  public void stamp(long step, CollectiveCall call) {
    call.encode(records, FifoLayout.slotOf(step) * STRIDE);
  }

  @Override
  public void verify(long step, CollectiveCall expected) {
    int at = FifoLayout.slotOf(step) * STRIDE;
    if (!checks || expected.isEncodedAt(records, at)) {
      return;
    }
    CollectiveCall theirs = CollectiveCall.decode(records, at);
    if (theirs == null) {
      throw new IllegalStateException(
          "rank " + rank + ": rank " + peer + " filled a shared slot with no call in its record");
    }
    throw CollectiveCall.mismatch(rank, expected, peer, theirs, myCalls);
  }
}
