package org.sparkccl.fifo;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.sparkccl.memory.DirectMemory;

/**
 * One connection's FIFO in host memory, laid out as {@link FifoLayout} says. Producer and consumer
 * may be on different threads (kernel and proxy); ordering is acquire/release on the counters, and
 * counter stores are volatile so that a waiter that registers and then re-reads a counter never
 * misses a wake-up (see {@code kernel.KernelWaiter}).
 */
public final class Fifo implements SlotQueue, AutoCloseable {
  private static final VarHandle LONGS =
      MethodHandles.byteBufferViewVarHandle(long[].class, ByteOrder.nativeOrder());
  private static final VarHandle INTS =
      MethodHandles.byteBufferViewVarHandle(int[].class, ByteOrder.nativeOrder());
  private static final VarHandle ARRIVED = MethodHandles.arrayElementVarHandle(int[].class);

  /**
   * The last head the producer read and the last tail the consumer read. Counters only grow, so a
   * value read earlier is a lower bound: the producer reads the shared head again only when the one
   * it knows leaves no room, the consumer the shared tail only when the one it knows does not cover
   * its step. Where the other side runs on another core, each read of its counter moves a cache
   * line across; a rank that sends several slices, or one slice per call, then reads the head once
   * every {@link FifoLayout#STEPS} steps. Opaque access: atomic, and a stale value is only lower.
   */
  @SuppressWarnings("UnusedVariable") // read and written through KNOWN_HEAD
  private long knownHead;

  @SuppressWarnings("UnusedVariable") // read and written through KNOWN_TAIL
  private long knownTail;

  private static final VarHandle KNOWN_HEAD = field("knownHead");
  private static final VarHandle KNOWN_TAIL = field("knownTail");

  private static VarHandle field(String name) {
    try {
      return MethodHandles.lookup().findVarHandle(Fifo.class, name, long.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  private final ByteBuffer control;
  private final ByteBuffer data;
  private final ByteBuffer[] slots;

  /**
   * Per slot: the memory a step's bytes lie in when the producer published them from elsewhere
   * ({@link #publishFrom}), or null (the slot). Plain fields: the tail's volatile store publishes
   * them to the consumer, the head's clears them for the producer.
   */
  private final ByteBuffer[] sources = new ByteBuffer[FifoLayout.STEPS];

  /**
   * Per slot: how many of its step's first bytes have landed before the step is published ({@link
   * #arrived(long, int)}), 0 while none have or nobody says. In this process only: a FIFO in memory
   * shared with another process never sees its producer's.
   */
  private final int[] arrived = new int[FifoLayout.STEPS];

  private final int stepSize;

  /**
   * The latest step the consumer has waited for ({@link #consumerAt}), -1 before its first wait.
   * Written by the consumer only; read by a proxy that waits for it before it reads a socket.
   */
  private volatile long consumerReached = -1;

  private volatile Runnable producerWaker = () -> {};
  private volatile Runnable consumerWaker = () -> {};
  private final Runnable free;
  private boolean closed;

  /** A FIFO in off-heap host memory, for host kernels. */
  public Fifo(int stepSize) {
    this(
        stepSize,
        DirectMemory.allocate(FifoLayout.CONTROL_BYTES),
        DirectMemory.allocate(FifoLayout.STEPS * stepSize),
        null);
  }

  /**
   * A FIFO in memory the caller provides (for a CUDA kernel: pinned host memory mapped into the
   * device), laid out as {@link FifoLayout} says; {@code free} releases it at {@link #close()}.
   *
   * @param control {@link FifoLayout#CONTROL_BYTES} bytes, zeroed
   * @param data {@code STEPS * stepSize} bytes
   */
  public Fifo(int stepSize, ByteBuffer control, ByteBuffer data, Runnable free) {
    this(stepSize, control, data, free, true);
  }

  /**
   * A FIFO over a control block and slots that another side may already be using (memory shared
   * between processes): the control block is taken as it is, never reset; whoever made it set it up
   * with {@link #initialize} before handing it out. Resetting it here once let a rank that opened
   * its end late erase the size of a slice its peer had already published.
   */
  public static Fifo attach(int stepSize, ByteBuffer control, ByteBuffer data, Runnable free) {
    return new Fifo(stepSize, control, data, free, false);
  }

  /** Sets up a fresh control block ({@link FifoLayout#CONTROL_BYTES}, zeroed): every slot empty. */
  public static void initialize(ByteBuffer control) {
    ByteBuffer c = control.duplicate().order(ByteOrder.nativeOrder());
    for (int i = 0; i < FifoLayout.STEPS; i++) {
      INTS.setRelease(c, FifoLayout.sizeOffset(i), FifoLayout.EMPTY);
    }
  }

  private Fifo(int stepSize, ByteBuffer control, ByteBuffer data, Runnable free, boolean init) {
    if (control.capacity() < FifoLayout.CONTROL_BYTES
        || data.capacity() < (long) FifoLayout.STEPS * stepSize) {
      throw new IllegalArgumentException(
          "control="
              + control.capacity()
              + " data="
              + data.capacity()
              + " bytes are too small"
              + " for stepSize="
              + stepSize);
    }
    this.stepSize = stepSize;
    this.control = control.order(ByteOrder.nativeOrder());
    this.data = data;
    this.free =
        free != null
            ? free
            : () -> {
              DirectMemory.free(control);
              DirectMemory.free(data);
            };
    this.slots = new ByteBuffer[FifoLayout.STEPS];
    for (int i = 0; i < FifoLayout.STEPS; i++) {
      slots[i] = data.slice(i * stepSize, stepSize).order(ByteOrder.nativeOrder());
    }
    if (init) {
      initialize(this.control);
    }
  }

  /** Called after the consumer frees a slot (the producer may be waiting for one). */
  public void onRelease(Runnable wakeProducer) {
    this.producerWaker = wakeProducer;
  }

  /** Called after the producer fills a slot (the consumer may be waiting for one). */
  public void onPublish(Runnable wakeConsumer) {
    this.consumerWaker = wakeConsumer;
  }

  public int stepSize() {
    return stepSize;
  }

  /**
   * All slots as one buffer (slot i at {@code i * stepSize}), for transports that register the
   * memory once (UCX). Valid until {@link #close()}.
   */
  public ByteBuffer region() {
    return data.duplicate().order(ByteOrder.nativeOrder());
  }

  /** The slot that {@code step} uses; position 0, capacity {@code stepSize}. */
  @Override
  public ByteBuffer slot(long step) {
    return slots[FifoLayout.slotOf(step)];
  }

  public long head() {
    return (long) LONGS.getVolatile(control, FifoLayout.HEAD_OFFSET);
  }

  public long tail() {
    return (long) LONGS.getVolatile(control, FifoLayout.TAIL_OFFSET);
  }

  /** Producer: whether it may fill {@code step}'s slot. */
  @Override
  public boolean hasRoomFor(long step) {
    if (step - (long) KNOWN_HEAD.getOpaque(this) < FifoLayout.STEPS) {
      return true;
    }
    long head = head();
    KNOWN_HEAD.setOpaque(this, head);
    return step - head < FifoLayout.STEPS;
  }

  /** Consumer: whether the producer has published {@code step}. */
  @Override
  public boolean isFilled(long step) {
    if ((long) KNOWN_TAIL.getOpaque(this) > step) {
      return true;
    }
    long tail = tail();
    KNOWN_TAIL.setOpaque(this, tail);
    return tail > step;
  }

  /** Bytes the producer put in {@code step}'s slot. */
  @Override
  public int size(long step) {
    return (int) INTS.getAcquire(control, FifoLayout.sizeOffset(FifoLayout.slotOf(step)));
  }

  /** Producer: {@code step}'s slot holds {@code bytes} bytes; make it visible to the consumer. */
  @Override
  public void publish(long step, int bytes) {
    INTS.setRelease(control, FifoLayout.sizeOffset(FifoLayout.slotOf(step)), bytes);
    LONGS.setVolatile(control, FifoLayout.TAIL_OFFSET, step + 1);
    consumerWaker.run();
  }

  /**
   * Producer: {@code step}'s bytes are {@code source} (position 0 to its limit), not the slot's: a
   * kernel that leaves a large step in the collective's buffers for a socket to send from there
   * ({@code SendConnection#sendsFromAnyMemory}), or a proxy that received one straight into the
   * output. {@code source} stays unchanged until the consumer releases the step.
   */
  public void publishFrom(long step, ByteBuffer source) {
    sources[FifoLayout.slotOf(step)] = source;
    publish(step, source.remaining());
  }

  /**
   * Producer, before it publishes {@code step}: its slot's first {@code bytes} bytes have landed
   * and will not change, so a consumer may read them already ({@link #arrived(long)}). A receiving
   * proxy says so as a socket fills the slot, and the kernel sums what arrived while the rest is
   * still on its way.
   */
  public void arrived(long step, int bytes) {
    ARRIVED.setRelease(arrived, FifoLayout.slotOf(step), bytes);
  }

  /**
   * Consumer: how many of {@code step}'s first bytes lie in its slot before it is published; 0
   * where none have landed or the producer does not say. Only for the step it waits for next.
   */
  public int arrived(long step) {
    return (int) ARRIVED.getAcquire(arrived, FifoLayout.slotOf(step));
  }

  /** Consumer: what holds {@code step}'s bytes, its slot or the memory of {@link #publishFrom}. */
  public ByteBuffer bytesOf(long step) {
    int i = FifoLayout.slotOf(step);
    ByteBuffer source = sources[i];
    return source != null ? source : slots[i];
  }

  /** Consumer: done with {@code step}'s slot; hand it back to the producer. */
  @Override
  public void release(long step) {
    sources[FifoLayout.slotOf(step)] = null;
    // before the head: the producer starts the slot's next step only after it, and a consumer
    // waiting for that step must not read this one's count
    ARRIVED.setRelease(arrived, FifoLayout.slotOf(step), 0);
    INTS.setRelease(control, FifoLayout.sizeOffset(FifoLayout.slotOf(step)), FifoLayout.EMPTY);
    LONGS.setVolatile(control, FifoLayout.HEAD_OFFSET, step + 1);
    producerWaker.run();
  }

  /** Consumer: about to wait for {@code step}; records it where it is later than the last. */
  @Override
  public boolean consumerAt(long step) {
    if (step <= consumerReached) {
      return false;
    }
    consumerReached = step;
    return true;
  }

  /** The latest step the consumer has waited for, -1 before its first wait. */
  public long consumerReached() {
    return consumerReached;
  }

  /** Sets the abort word that spinning kernels check, and wakes both sides. */
  public void abort() {
    INTS.setVolatile(control, FifoLayout.ABORT_OFFSET, 1);
    producerWaker.run();
    consumerWaker.run();
  }

  public boolean isAborted() {
    return (int) INTS.getVolatile(control, FifoLayout.ABORT_OFFSET) != 0;
  }

  /** Frees the memory; only once no kernel or proxy touches the FIFO any more. */
  @Override
  public synchronized void close() {
    if (!closed) {
      closed = true;
      free.run();
    }
  }
}
