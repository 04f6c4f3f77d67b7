package org.sparkccl.comm;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.CompletableFuture;
import org.sparkccl.CclException;
import org.sparkccl.device.DeviceBuffer;
import org.sparkccl.kernel.KernelTask;

/**
 * One collective in flight: its future completes only when every channel's kernel has finished with
 * the user's buffers (successfully or not), so a caller that frees a buffer as soon as the future
 * fails can never pull memory from under a kernel.
 *
 * <p>A launch makes one of these and its future, and nothing else per collective: the counters are
 * fields updated through {@link VarHandle}s, the buffers are released directly, and the collective
 * leaves the communicator's count of those in flight itself.
 */
final class Collective {
  private static final VarHandle REMAINING;
  private static final VarHandle ERROR;

  static {
    try {
      MethodHandles.Lookup l = MethodHandles.lookup();
      REMAINING = l.findVarHandle(Collective.class, "remaining", int.class);
      ERROR = l.findVarHandle(Collective.class, "error", CclException.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  /** Null when {@link #call} describes it: then no text is built unless asked for. */
  private final String what;

  /** The call, or null for a group of sends and receives. */
  final CollectiveCall call;

  /** Whether a stalled kernel should announce the call to the ring predecessor. */
  final boolean announceOnStall;

  final CompletableFuture<Void> future = new CompletableFuture<>();

  @SuppressWarnings("unused") // through REMAINING
  private volatile int remaining;

  @SuppressWarnings("unused") // through ERROR
  private volatile CclException error;

  private final Runnable releaseBuffers;
  private final DeviceBuffer src;
  private final DeviceBuffer dst;
  private final InFlight pending;
  private final long startNanos = System.nanoTime();
  private final int nRanks;

  /** Channels handed to kernel threads so far (under the launch lock); each reports back. */
  int submitted;

  /**
   * Set at launch: the blocking caller runs this collective's task on channel 0 itself if it can
   * ({@link CollectiveLauncher#launch}); {@link #inlineTask} is that task once queued.
   */
  boolean runsInline;

  KernelTask inlineTask;

  /** A group of sends and receives; {@code releaseBuffers} runs once every channel reported. */
  Collective(String what, int channels, Runnable releaseBuffers) {
    this.what = what;
    this.call = null;
    this.nRanks = 0;
    this.announceOnStall = false;
    this.remaining = channels;
    this.releaseBuffers = releaseBuffers;
    this.src = null;
    this.dst = null;
    this.pending = null;
  }

  /**
   * A collective on {@code src} and {@code dst} (retained by the caller, released here once every
   * channel reported), counted in {@code pending} (added by the caller, taken away here).
   */
  Collective(
      CollectiveCall call,
      int nRanks,
      boolean announceOnStall,
      int channels,
      DeviceBuffer src,
      DeviceBuffer dst,
      InFlight pending) {
    this.what = null;
    this.call = call;
    this.nRanks = nRanks;
    this.announceOnStall = announceOnStall;
    this.remaining = channels;
    this.releaseBuffers = null;
    this.src = src;
    this.dst = dst;
    this.pending = pending;
  }

  /** What this collective is, for messages. */
  String what() {
    return what != null ? what : call.what();
  }

  /** A channel's kernel is done with the buffers; {@code failure} is null on success. */
  void channelDone(CclException failure) {
    if (failure != null) {
      ERROR.compareAndSet(this, null, failure);
    }
    if ((int) REMAINING.getAndAdd(this, -1) == 1) {
      try {
        release();
      } finally {
        // whatever releasing did, the caller must hear the outcome
        CclException e = (CclException) ERROR.getVolatile(this);
        EngineStats.record(call, nRanks, System.nanoTime() - startNanos, e == null);
        if (pending != null) {
          pending.remove();
        }
        if (e == null) {
          future.complete(null);
        } else {
          future.completeExceptionally(e);
        }
      }
    }
  }

  private void release() {
    if (releaseBuffers != null) {
      releaseBuffers.run();
      return;
    }
    try {
      src.release();
    } finally {
      dst.release();
    }
  }

  /**
   * Launching failed after {@link #submitted} of {@code channels} channels were handed over: the
   * others report {@code failure} now, so the future completes once the submitted ones finish.
   */
  void launchFailed(int channels, CclException failure) {
    for (int c = submitted; c < channels; c++) {
      channelDone(failure);
    }
  }
}
