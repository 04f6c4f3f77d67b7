package org.sparkccl.fifo;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * A FIFO for small messages in host memory that two processes share, after NCCL's LL protocol: the
 * flag that says a slot is filled sits in the slot's first cache line, beside the size, the call's
 * fingerprint and the first bytes of data, so a message of up to {@link #FIRST_LINE_DATA} bytes
 * costs the receiver one cache line from the sender's core, not four (the tail, the sizes, the call
 * record and the data of {@link Fifo}), and neither side issues a fence. The producer writes the
 * data, the size and the fingerprint with plain stores and then the flag with release ordering; the
 * consumer reads the flag with acquire ordering and then the rest, so it never sees the flag before
 * the data it covers.
 *
 * <p>Layout, all offsets in bytes:
 *
 * <pre>
 * HEAD_OFFSET  0     int64  steps the consumer has released, on its own 128-byte line
 * slot i at SLOTS_OFFSET + i * slotBytes(capacity), for step s the slot is s % STEPS:
 *   FLAG_AT        0   int64  s + 1 once step s is filled (never 0: zeroed memory is empty)
 *   SIZE_AT        8   int32  bytes of data
 *   FINGERPRINT_AT 12  int32  the call's fingerprint (see SlotCalls)
 *   DATA_AT        16  capacity bytes of data
 * </pre>
 *
 * <p>Flags name their step, so a slot's flag from the previous lap never looks filled and nothing
 * is cleared after a read; memory that starts zeroed is a FIFO with every slot empty. The producer
 * reads the consumer's head only when the head it last saw leaves no room, so a rank that sends one
 * message per call crosses to that line once every {@link FifoLayout#STEPS} calls.
 */
public final class LowLatencyFifo implements SlotQueue {
  private static final VarHandle LONGS =
      MethodHandles.byteBufferViewVarHandle(long[].class, ByteOrder.nativeOrder());

  static final int HEAD_OFFSET = 0;
  static final int SLOTS_OFFSET = FifoLayout.LINE;
  static final int FLAG_AT = 0;
  static final int SIZE_AT = 8;
  static final int FINGERPRINT_AT = 12;
  static final int DATA_AT = 16;

  /** Cache line of the x86 and Arm hosts this runs on. */
  private static final int CACHE_LINE = 64;

  /** Data bytes that share the flag's cache line. */
  public static final int FIRST_LINE_DATA = CACHE_LINE - DATA_AT;

  /** The largest capacity: larger messages gain nothing from sharing a line with the flag. */
  public static final int MAX_CAPACITY = 64 << 10;

  private final ByteBuffer memory;
  private final ByteBuffer[] slots;
  private final int capacity;
  private final int slotBytes;

  /**
   * The head the producer last read (a lower bound: heads only grow). Opaque access, as {@link
   * Fifo}'s: the producer's thread may change between collectives.
   */
  @SuppressWarnings("UnusedVariable") // read and written through KNOWN_HEAD
  private long knownHead;

  private static final VarHandle KNOWN_HEAD;

  static {
    try {
      KNOWN_HEAD =
          MethodHandles.lookup().findVarHandle(LowLatencyFifo.class, "knownHead", long.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  /**
   * A FIFO over {@link #bytes}{@code (capacity)} bytes of memory, taken as it is: zeroed when made,
   * and the other side may already be using it.
   */
  public LowLatencyFifo(ByteBuffer memory, int capacity) {
    if (capacity < 1 || capacity > MAX_CAPACITY) {
      throw new IllegalArgumentException(
          "capacity=" + capacity + " is invalid; expected 1.." + MAX_CAPACITY);
    }
    if (memory.capacity() < bytes(capacity)) {
      throw new IllegalArgumentException(
          memory.capacity() + " bytes are too small for a capacity of " + capacity);
    }
    this.memory = memory.duplicate().order(ByteOrder.nativeOrder());
    this.capacity = capacity;
    this.slotBytes = slotBytes(capacity);
    this.slots = new ByteBuffer[FifoLayout.STEPS];
    for (int i = 0; i < FifoLayout.STEPS; i++) {
      slots[i] =
          this.memory
              .slice(SLOTS_OFFSET + i * slotBytes + DATA_AT, capacity)
              .order(ByteOrder.nativeOrder());
    }
  }

  /** Bytes of one slot: the tag and {@code capacity} bytes of data, in whole cache lines. */
  static int slotBytes(int capacity) {
    return (DATA_AT + capacity + CACHE_LINE - 1) / CACHE_LINE * CACHE_LINE;
  }

  /** Bytes of a FIFO whose slots hold {@code capacity} bytes of data. */
  public static long bytes(int capacity) {
    return SLOTS_OFFSET + (long) FifoLayout.STEPS * slotBytes(capacity);
  }

  /** The most data one slot holds. */
  public int capacity() {
    return capacity;
  }

  private int slotAt(long step) {
    return SLOTS_OFFSET + FifoLayout.slotOf(step) * slotBytes;
  }

  /** The data of {@code step}'s slot: position 0, {@link #capacity()} bytes. */
  @Override
  public ByteBuffer slot(long step) {
    return slots[FifoLayout.slotOf(step)];
  }

  @Override
  public boolean hasRoomFor(long step) {
    if (step - (long) KNOWN_HEAD.getOpaque(this) < FifoLayout.STEPS) {
      return true;
    }
    long head = (long) LONGS.getAcquire(memory, HEAD_OFFSET);
    KNOWN_HEAD.setOpaque(this, head);
    return step - head < FifoLayout.STEPS;
  }

  @Override
  public boolean isFilled(long step) {
    return (long) LONGS.getAcquire(memory, slotAt(step) + FLAG_AT) == step + 1;
  }

  @Override
  public int size(long step) {
    return memory.getInt(slotAt(step) + SIZE_AT);
  }

  /** Consumer, once {@code step} is filled: the fingerprint the producer stamped on it. */
  public int fingerprint(long step) {
    return memory.getInt(slotAt(step) + FINGERPRINT_AT);
  }

  /** Producer, before it publishes {@code step}: the fingerprint of the call it fills it for. */
  public void stampFingerprint(long step, int fingerprint) {
    memory.putInt(slotAt(step) + FINGERPRINT_AT, fingerprint);
  }

  @Override
  public void publish(long step, int bytes) {
    if (bytes < 0 || bytes > capacity) {
      throw new IllegalArgumentException(
          bytes + " bytes do not fit a slot of " + capacity + " bytes");
    }
    int at = slotAt(step);
    memory.putInt(at + SIZE_AT, bytes);
    LONGS.setRelease(memory, at + FLAG_AT, step + 1);
  }

  @Override
  public void release(long step) {
    LONGS.setRelease(memory, HEAD_OFFSET, step + 1);
  }
}
