package org.sparkccl.transport.shm;

import org.sparkccl.comm.CollectiveCall;
import org.sparkccl.fifo.LowLatencyFifo;
import org.sparkccl.kernel.SlotCalls;

/**
 * The calls of an LL FIFO's slots: each slot carries its call's fingerprint in the flag's cache
 * line, which the receiver has already read, and the whole call in a record beside the FIFO, which
 * it reads only when the fingerprints differ, to name both calls in the error. Two different calls
 * with the same fingerprint (one chance in 2^32 for a given pair) pass here; the neighbours' posted
 * calls ({@code NeighbourCalls}) still compare them whole when a rank waits long.
 */
final class LowLatencySlotCalls implements SlotCalls {
  private final LowLatencyFifo fifo;
  private final SharedSlotCalls records;

  LowLatencySlotCalls(LowLatencyFifo fifo, SharedSlotCalls records) {
    this.fifo = fifo;
    this.records = records;
  }

  @Override
  public void stamp(long step, CollectiveCall call) {
    fifo.stampFingerprint(step, call.fingerprint());
    records.stamp(step, call);
  }

  @Override
  public void verify(long step, CollectiveCall expected) {
    if (fifo.fingerprint(step) != expected.fingerprint()) {
      records.verify(step, expected);
    }
  }
}
