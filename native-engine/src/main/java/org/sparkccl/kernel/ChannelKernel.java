package org.sparkccl.kernel;

import org.sparkccl.fifo.Fifo;

/**
 * The kernel side of one channel: runs a plan's primitives over the channel's send FIFO (to the
 * next rank) and receive FIFO (from the previous rank). {@link HostChannelKernel} does it on a Java
 * thread over host memory; a device's kernel (made by {@code Device.newChannelKernel}) runs on the
 * device over its memory. The FIFOs have the same layout either way, so the proxy cannot tell them
 * apart.
 */
public interface ChannelKernel extends AutoCloseable {
  Fifo sendFifo();

  Fifo recvFifo();

  /** Runs one collective's share on the calling thread (the channel's kernel thread). */
  void run(ChannelWork work);

  /**
   * Lets the kernel publish large steps from the collective's own buffers instead of copying them
   * into its send FIFO's slots, where the connection that sends them reads any memory ({@code
   * SendConnection#sendsFromAnyMemory}); kernels that cannot ignore it. Before the first
   * collective.
   */
  default void sendFromSources(boolean allowed) {}

  /**
   * Whether, between ranks that are threads of one process, this kernel reads the previous rank's
   * send slots in place, so that the in-process pipe passes slot numbers rather than bytes.
   */
  default boolean readsSenderSlots() {
    return false;
  }

  /**
   * Reads received slots straight from {@code sender}'s send FIFO, the kernel of the previous rank
   * in this process; only where {@link #readsSenderSlots()}. Call before the first collective.
   *
   * @throws IllegalArgumentException when {@code sender}'s FIFO cannot be read in place
   */
  default void readSlotsOf(ChannelKernel sender) {
    throw new UnsupportedOperationException("this kernel copies received slots");
  }

  /** Frees what the kernel owns beyond its FIFOs; only once it no longer runs. */
  @Override
  default void close() {}
}
