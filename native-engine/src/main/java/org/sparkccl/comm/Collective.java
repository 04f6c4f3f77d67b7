package org.sparkccl.comm;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.sparkccl.CclException;

/**
 * One collective in flight: its future completes only when every channel's kernel has finished with
 * the user's buffers (successfully or not), so a caller that frees a buffer as soon as the future
 * fails can never pull memory from under a kernel.
 */
final class Collective {
  /** Null when {@link #call} describes it: then no text is built unless asked for. */
  private final String what;

  /** The call, or null for a group of sends and receives. */
  final CollectiveCall call;

  /** Whether a stalled kernel should announce the call to the ring predecessor. */
  final boolean announceOnStall;

  final CompletableFuture<Void> future = new CompletableFuture<>();
  private final AtomicInteger remaining;
  private final AtomicReference<CclException> error = new AtomicReference<>();
  private final Runnable releaseBuffers;
  private final long startNanos = System.nanoTime();
  private final int nRanks;

  /** Channels handed to kernel threads so far (under the launch lock); each reports back. */
  int submitted;

  Collective(String what, int channels, Runnable releaseBuffers) {
    this(what, null, 0, false, channels, releaseBuffers);
  }

  Collective(
      String what,
      CollectiveCall call,
      int nRanks,
      boolean announceOnStall,
      int channels,
      Runnable releaseBuffers) {
    this.what = what;
    this.call = call;
    this.nRanks = nRanks;
    this.announceOnStall = announceOnStall;
    this.remaining = new AtomicInteger(channels);
    this.releaseBuffers = releaseBuffers;
  }

  /** What this collective is, for messages. */
  String what() {
    return what != null ? what : call.what();
  }

  /** A channel's kernel is done with the buffers; {@code failure} is null on success. */
  void channelDone(CclException failure) {
    if (failure != null) {
      error.compareAndSet(null, failure);
    }
    if (remaining.decrementAndGet() == 0) {
      try {
        releaseBuffers.run();
      } finally {
        // whatever releasing did, the caller must hear the outcome
        CclException e = error.get();
        EngineStats.record(call, nRanks, System.nanoTime() - startNanos, e == null);
        if (e == null) {
          future.complete(null);
        } else {
          future.completeExceptionally(e);
        }
      }
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
