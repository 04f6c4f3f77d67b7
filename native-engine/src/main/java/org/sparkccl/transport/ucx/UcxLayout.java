package org.sparkccl.transport.ucx;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import org.sparkccl.comm.CollectiveCall;
import org.sparkccl.fifo.FifoLayout;

/**
 * The memory layout of one ring connection's UCX side area: the only place these offsets are
 * written down. Each rank has one side area per channel, registered once and published with its
 * remote key at start-up; the ranks before and after it in the ring write into it with one-sided
 * puts.
 *
 * <pre>
 * ENTRIES  (written by the next rank, which receives from this one; read here by the sender)
 *   STEPS x 32 bytes, entry for step s in s % STEPS:
 *     0  int64 idx = s + 1     8  int64 addr of the receiver's slot
 *     16 int32 size (room)     20 int32 rkey id (which published region addr lies in)
 *     24 int64 idx again       (read last: a torn entry never matches both)
 * RECORDS  (written by the previous rank, which sends to this one; read here by the receiver)
 *   STEPS x 512 bytes, record for step s in s % STEPS:
 *     0  int64 seq = s + 1     8  int32 bytes sent      12 int32 flags (0, or FLAG_INLINE)
 *     16 CollectiveCall (24)   56 int64 seq again
 *     with FLAG_INLINE (a step of at most INLINE_MAX bytes, NCCL's LL idea: data and flag in
 *     one write): 64 the data, then at 64 + size rounded up to 8 an int64 seq a third time
 * CALLS  (written by the next rank: the calls it announces to this one, the mismatch check)
 *   CALL_SLOTS x 40 bytes, announcement k (0, 1, ...) in k % CALL_SLOTS:
 *     0  int64 k + 1           8  CollectiveCall (24)   32 int64 k + 1 again
 * CALLS_READ  (written by the previous rank: how many of this rank's announcements it has read)
 *   0  int64 count
 * OUT_ENTRIES, OUT_RECORDS, OUT_CALLS, OUT_CALLS_READ  (local staging: what this rank puts into
 *   its peers' areas)
 * </pre>
 *
 * <p>Indices only grow (the receiver-posts-first handshake of NCCL's {@code net_ib} with the
 * ever-increasing index of current NCCL), so no flag is ever reset.
 */
final class UcxLayout {
  /** The side area's 64-bit words, read with acquire and written with release ordering. */
  static final VarHandle LONGS =
      MethodHandles.byteBufferViewVarHandle(long[].class, ByteOrder.nativeOrder());

  static final int STEPS = FifoLayout.STEPS;
  static final int ENTRY_BYTES = 32;
  static final int RECORD_BYTES = 512;
  static final int ENTRIES_OFFSET = 0;
  static final int RECORDS_OFFSET = ENTRIES_OFFSET + STEPS * ENTRY_BYTES;
  static final int OUT_ENTRIES_OFFSET = RECORDS_OFFSET + STEPS * RECORD_BYTES;
  static final int OUT_RECORDS_OFFSET = OUT_ENTRIES_OFFSET + STEPS * ENTRY_BYTES;

  /**
   * Announcements a board holds: a rank writes one only into a slot its predecessor has read, and
   * the predecessor says how far it read every quarter of them ({@link AnnouncementReader}).
   */
  static final int CALL_SLOTS = 1024;

  static final int CALL_BYTES = 40;
  static final int CALL_SEQ = 0;
  static final int CALL_CALL = 8;
  static final int CALL_SEQ_END = 32;

  /** Room for one counter, on a line of its own. */
  private static final int COUNTER_BYTES = 64;

  static final int CALLS_OFFSET = OUT_RECORDS_OFFSET + STEPS * RECORD_BYTES;
  static final int CALLS_READ_OFFSET = CALLS_OFFSET + CALL_SLOTS * CALL_BYTES;
  static final int OUT_CALLS_OFFSET = CALLS_READ_OFFSET + COUNTER_BYTES;
  static final int OUT_CALLS_READ_OFFSET = OUT_CALLS_OFFSET + CALL_SLOTS * CALL_BYTES;
  static final int BYTES = OUT_CALLS_READ_OFFSET + COUNTER_BYTES;

  static final int ENTRY_IDX = 0;
  static final int ENTRY_ADDR = 8;
  static final int ENTRY_SIZE = 16;
  static final int ENTRY_RKEY = 20;
  static final int ENTRY_IDX_END = 24;

  static final int RECORD_SEQ = 0;
  static final int RECORD_SIZE = 8;
  static final int RECORD_FLAGS = 12;
  static final int RECORD_CALL = 16;
  static final int RECORD_SEQ_END = 56;
  static final int RECORD_DATA = 64;

  /** The record's flag for a step whose data travels in the record, not in the slot. */
  static final int FLAG_INLINE = 1;

  /** The most bytes a step may carry in its record: the rest of it, less the closing seq. */
  static final int INLINE_MAX = RECORD_BYTES - RECORD_DATA - 8;

  static {
    if (RECORD_CALL + CollectiveCall.BYTES > RECORD_SEQ_END
        || CALL_CALL + CollectiveCall.BYTES > CALL_SEQ_END) {
      throw new ExceptionInInitializerError("a CollectiveCall does not fit a UCX record");
    }
  }

  private UcxLayout() {}

  static int entry(long step) {
    return ENTRIES_OFFSET + FifoLayout.slotOf(step) * ENTRY_BYTES;
  }

  static int record(long step) {
    return RECORDS_OFFSET + FifoLayout.slotOf(step) * RECORD_BYTES;
  }

  static int outEntry(long step) {
    return OUT_ENTRIES_OFFSET + FifoLayout.slotOf(step) * ENTRY_BYTES;
  }

  static int outRecord(long step) {
    return OUT_RECORDS_OFFSET + FifoLayout.slotOf(step) * RECORD_BYTES;
  }

  /** Where announcement {@code k} lies in a board (the predecessor's CALLS). */
  static int call(long k) {
    return CALLS_OFFSET + callSlot(k) * CALL_BYTES;
  }

  /** Where announcement {@code k} is staged before it is put. */
  static int outCall(long k) {
    return OUT_CALLS_OFFSET + callSlot(k) * CALL_BYTES;
  }

  static int callSlot(long k) {
    return (int) Math.floorMod(k, (long) CALL_SLOTS);
  }

  /** Where an inline record of {@code size} bytes of data repeats its seq, from its start. */
  static int inlineSeq(int size) {
    return RECORD_DATA + ((size + 7) & ~7);
  }
}
