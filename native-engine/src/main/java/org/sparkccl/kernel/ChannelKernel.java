package org.sparkccl.kernel;

import org.sparkccl.fifo.Fifo;

/**
 * The kernel side of one channel: runs a plan's primitives over the channel's send FIFO (to the
 * next rank) and receive FIFO (from the previous rank). {@link HostChannelKernel} does it on a
 * Java thread over host memory, {@link CudaChannelKernel} in a CUDA block over device memory;
 * the FIFOs have the same layout either way, so the proxy cannot tell them apart.
 */
public interface ChannelKernel extends AutoCloseable {
  Fifo sendFifo();

  Fifo recvFifo();

  /** Runs one collective's share on the calling thread (the channel's kernel thread). */
  void run(ChannelWork work);

  /** Frees what the kernel owns beyond its FIFOs; only once it no longer runs. */
  @Override
  default void close() {}
}
