package org.sparkccl.kernel;

import org.sparkccl.comm.CollectiveCall;

/**
 * The call each slot of a FIFO was filled for, where no proxy carries it beside the data: on a
 * shared-memory edge the sending kernel writes straight into the receiver's slots, so it stamps
 * each slot with its call and the receiving kernel checks the stamp (key {@code checkCalls}).
 */
public interface SlotCalls {
  /** Producer, before it publishes {@code step}: marks the slot as filled for {@code call}. */
  void stamp(long step, CollectiveCall call);

  /**
   * Consumer, once {@code step} is published: throws {@code CclMismatchException} when the slot was
   * filled for another call than {@code expected}.
   */
  void verify(long step, CollectiveCall expected);
}
