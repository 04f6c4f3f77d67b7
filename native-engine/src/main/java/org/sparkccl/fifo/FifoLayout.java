package org.sparkccl.fifo;

/**
 * The memory layout of one connection's FIFO: the contract between kernels (Java threads today,
 * CUDA kernels later) and the proxy thread. It is written down here and nowhere else; the CUDA
 * kernel's header repeats these numbers and a test compares them.
 *
 * <p>A FIFO is two allocations:
 *
 * <pre>
 * control block (host memory, mapped into the device for GPU kernels), CONTROL_BYTES long:
 *   HEAD_OFFSET    0    int64  steps the consumer has released (slot free again)
 *   TAIL_OFFSET    128  int64  steps the producer has published (slot filled)
 *   ABORT_OFFSET   256  int32  non-zero once the communicator is aborted: every spinner returns
 *   SIZES_OFFSET   384  int32[STEPS]  bytes in each slot, -1 when empty
 * data (the device's memory), STEPS * stepSize long:
 *   slot i at i * stepSize, for step s the slot is s % STEPS
 * </pre>
 *
 * <p>Counters only grow (step numbers of the connection's lifetime), so nothing is reset between
 * collectives. The producer waits while {@code step - head >= STEPS}, fills slot {@code step %
 * STEPS}, stores {@code sizes[slot]}, then stores {@code tail = step + 1} with release ordering.
 * The consumer waits while {@code tail <= step} (acquire), reads {@code sizes[slot]} and the data,
 * stores {@code sizes[slot] = -1}, then {@code head = step + 1} with release ordering. Each counter
 * sits on its own 128-byte line so producer and consumer never share a cache line.
 *
 * <p>On the send side the kernel produces and the proxy consumes; on the receive side the proxy
 * produces and the kernel consumes.
 */
public final class FifoLayout {
  public static final int STEPS = 8;
  public static final int LINE = 128;
  public static final int HEAD_OFFSET = 0;
  public static final int TAIL_OFFSET = LINE;
  public static final int ABORT_OFFSET = 2 * LINE;
  public static final int SIZES_OFFSET = 3 * LINE;
  public static final int CONTROL_BYTES = 4 * LINE;
  public static final int EMPTY = -1;

  private FifoLayout() {}

  /** Byte offset of {@code sizes[slot]} in the control block. */
  public static int sizeOffset(int slot) {
    return SIZES_OFFSET + slot * Integer.BYTES;
  }

  /** The slot that step {@code step} uses. */
  public static int slotOf(long step) {
    return (int) (step % STEPS);
  }
}
