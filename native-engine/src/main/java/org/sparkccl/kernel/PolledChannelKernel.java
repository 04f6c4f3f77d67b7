package org.sparkccl.kernel;

/**
 * A channel kernel whose share of a collective can be started and then polled rather than waited
 * for, so that one thread drives every channel of a collective. A GPU's resident kernels need no
 * host thread each: sixteen threads each polling one channel cost more than the polling itself on a
 * host with fewer free cores than threads, and handing the channels to sixteen threads one after
 * another started them over 100 us apart (measured on an H200 host, 16 cores, 2 ranks).
 *
 * <pre>{@code
 * kernel.start(work);
 * while (!kernel.poll()) {
 *   Thread.onSpinWait();
 * }
 * }</pre>
 */
public interface PolledChannelKernel extends ChannelKernel {
  /** Whether {@link #start}/{@link #poll} can run the next work (else {@link #run} must). */
  boolean pollable();

  /** Starts {@code work} and returns at once; {@link #poll} until it is done. */
  void start(ChannelWork work);

  /**
   * One look at the started work, which also posts its next part when one is done: true once all of
   * it is done. Throws what {@link #run} would (a failure, the no-progress timeout, an abort),
   * after the kernel has stopped.
   */
  boolean poll();
}
