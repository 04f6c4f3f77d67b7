package org.sparkccl.transport.shm;

import java.nio.ByteBuffer;
import org.sparkccl.fifo.Fifo;
import org.sparkccl.fifo.FifoLayout;

/**
 * The layout of one FIFO in a shared-memory file, the same for point-to-point edges ({@link
 * SharedPeerFifos}, several regions per file) and ring edges ({@link SharedRingFifos}, one): the
 * control block ({@link FifoLayout}), the call of each slot ({@link SharedSlotCalls}) and {@code
 * STEPS} slots, rounded up to whole pages.
 */
final class SharedFifoRegion {
  private static final int PAGE = 4096;

  private SharedFifoRegion() {}

  /** Bytes of one region with slots of {@code slotBytes}. */
  static long bytes(int slotBytes) {
    long raw =
        FifoLayout.CONTROL_BYTES + SharedSlotCalls.BYTES + (long) FifoLayout.STEPS * slotBytes;
    return wholePages(raw);
  }

  /** {@code raw} bytes rounded up to whole pages, as every part of a shared file is. */
  static long wholePages(long raw) {
    return (raw + PAGE - 1) / PAGE * PAGE;
  }

  /** Sets up a fresh region's control block: every slot empty. Only its creator, once. */
  static void initialize(ByteBuffer region) {
    Fifo.initialize(region.slice(0, FifoLayout.CONTROL_BYTES));
  }

  /** The slots' call records. */
  static ByteBuffer calls(ByteBuffer region) {
    return region.slice(FifoLayout.CONTROL_BYTES, SharedSlotCalls.BYTES);
  }

  /**
   * A FIFO over a region, as it is: its creator set it up before it published the file, and the
   * peer may already be using it. The file, not the FIFO, owns the memory.
   */
  static Fifo fifo(ByteBuffer region, int slotBytes) {
    ByteBuffer control = region.slice(0, FifoLayout.CONTROL_BYTES);
    ByteBuffer data =
        region.slice(
            FifoLayout.CONTROL_BYTES + SharedSlotCalls.BYTES, FifoLayout.STEPS * slotBytes);
    return Fifo.attach(slotBytes, control, data, () -> {});
  }
}
