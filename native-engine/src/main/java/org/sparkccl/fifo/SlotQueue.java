package org.sparkccl.fifo;

import java.nio.ByteBuffer;

/**
 * The steps of one point-to-point edge as its two kernels see them, whatever the protocol: the
 * producer waits for room, fills a step's slot and publishes it; the consumer waits until the step
 * is filled, reads it and releases it. Steps are numbered over the edge's lifetime and only grow.
 * {@link Fifo} is the simple protocol (counters and sizes beside the slots), {@link LowLatencyFifo}
 * the LL protocol (each slot carries its own flag).
 */
public interface SlotQueue {
  /** The slot {@code step} uses, position 0: where the producer writes and the consumer reads. */
  ByteBuffer slot(long step);

  /** Producer: whether it may fill {@code step}'s slot. */
  boolean hasRoomFor(long step);

  /** Consumer: whether the producer has published {@code step}. */
  boolean isFilled(long step);

  /** Consumer, once {@code step} is filled: the bytes the producer put in its slot. */
  int size(long step);

  /** Producer: {@code step}'s slot holds {@code bytes} bytes; make it visible to the consumer. */
  void publish(long step, int bytes);

  /** Consumer: done with {@code step}'s slot; hand it back to the producer. */
  void release(long step);

  /**
   * Consumer: about to wait for {@code step}. Returns whether that is a step later than any it
   * waited for before. A proxy that fills the queue from a socket may leave the socket unread until
   * the consumer has reached its steps ({@link Fifo#consumerReached}); queues that both kernels
   * touch ignore it.
   */
  default boolean consumerAt(long step) {
    return false;
  }
}
