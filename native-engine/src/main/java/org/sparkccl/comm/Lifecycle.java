package org.sparkccl.comm;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.apache.logging.log4j.Logger;
import org.sparkccl.CclAbortedException;
import org.sparkccl.CclException;
import org.sparkccl.CclTimeoutException;
import org.sparkccl.transport.FailureNotice;
import org.sparkccl.util.EngineLog;

/**
 * How a communicator fails and ends. A failure (a peer that dies, a closed connection, a stall past
 * the timeout, {@code abort()}) is sticky: everything pending is woken and fails, and the
 * neighbours are told why, so the cause travels around the ring to every rank. Closing waits for
 * what is pending, then stops every thread, closes every connection and frees every FIFO.
 */
final class Lifecycle {
  private static final Logger LOG = EngineLog.logger(Lifecycle.class);

  /**
   * How long the proxy and every kernel thread together may take to stop once aborted: one budget
   * for all, so that {@code close()} ends within the timeout plus this, however many channels.
   */
  static final long STOP_MILLIS = 5_000;

  private final CommContext ctx;

  /**
   * Open until the first failure has been told to the peers. A rank aborted from two threads at
   * once (a task's failure listener and its Python worker's session) may see the second close the
   * communicator while the first is still telling its peers; closing waits for that, since a peer
   * that is never told waits out its whole timeout.
   */
  private final CountDownLatch failureSpread = new CountDownLatch(1);

  Lifecycle(CommContext ctx) {
    this.ctx = ctx;
  }

  /** Records the first failure and spreads it; later ones are dropped. Safe from any thread. */
  void fail(RuntimeException e) {
    CclException err =
        e instanceof CclException c ? c : new CclException("rank " + ctx.rank + ": " + e, e);
    if (!ctx.failure.record(err)) {
      return;
    }
    try {
      if (e instanceof CclAbortedException && e.getCause() == null) {
        LOG.info("{}", err.getMessage());
      } else {
        LOG.error("rank {}: communicator failed: {}", ctx.rank, err.getMessage());
      }
      ctx.proxy.dropAll();
      for (CommChannel ch : ctx.channels) {
        if (ch != null) {
          ch.abort();
        }
      }
      ctx.proxy.runExclusive(() -> notifyPeers(true, FailureNotice.of(err)));
    } finally {
      failureSpread.countDown();
    }
  }

  private void notifyPeers(boolean failed, String message) {
    for (CommChannel ch : ctx.channels) {
      if (ch != null) {
        ch.notifyPeers(failed, message);
      }
    }
    Links links = ctx.links();
    if (links != null) {
      links.peers().notifyPeers(failed, message);
    }
  }

  /** Waits for pending collectives (up to the timeout), then releases everything. Idempotent. */
  void close() {
    synchronized (ctx.launchLock) {
      if (!ctx.failure.close()) {
        return;
      }
    }
    if (ctx.failure.get() == null) {
      drain();
    }
    release();
  }

  /**
   * Waits, up to the timeout, until no collective is in flight and the proxy has nothing queued; a
   * failure (a collective that failed fails the communicator) ends the wait at once.
   */
  private void drain() {
    long deadline = System.nanoTime() + ctx.timeoutNanos;
    if (!waitUntil(ctx.pending::isEmpty, deadline)) {
      fail(new CclTimeoutException("rank " + ctx.rank + ": close: collectives still running"));
      return;
    }
    if (!waitUntil(ctx.proxy::isIdle, deadline)) {
      fail(new CclTimeoutException("rank " + ctx.rank + ": close: sends still in flight"));
    }
  }

  /**
   * Polls {@code done} every millisecond until it holds (true), the communicator fails or this
   * thread is interrupted (true: nothing is left to wait for), or the deadline passes (false).
   */
  private boolean waitUntil(BooleanSupplier done, long deadline) {
    while (!done.getAsBoolean() && ctx.failure.get() == null) {
      if (System.nanoTime() > deadline) {
        return false;
      }
      try {
        Thread.sleep(1);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return true;
      }
    }
    return true;
  }

  /**
   * Waits (until {@code deadline}) for the thread that recorded the failure to tell the peers. An
   * interrupt does not cut it short (a killed Spark task closes from an interrupted thread); it is
   * kept for the caller.
   */
  private void awaitFailureSpread(long deadline) {
    boolean interrupted = false;
    try {
      while (true) {
        try {
          if (!failureSpread.await(millisLeft(deadline), TimeUnit.MILLISECONDS)) {
            LOG.warn("rank {}: closing before the peers were told of the failure", ctx.rank);
          }
          return;
        } catch (InterruptedException e) {
          interrupted = true;
        }
      }
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /** At least 1 ms, so that a thread already done is still seen as stopped. */
  private static long millisLeft(long deadlineNanos) {
    return Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadlineNanos - System.nanoTime()));
  }

  /**
   * Stops the proxy, the ring transport (before any FIFO it registered is freed), the kernel
   * threads and the sockets. Also the way out of a constructor that failed half-way.
   */
  void release() {
    long stopDeadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(STOP_MILLIS);
    boolean failed = ctx.failure.get() != null;
    if (!failed) {
      notifyPeers(false, "rank " + ctx.rank + " closed its communicator");
    } else {
      awaitFailureSpread(stopDeadline);
    }
    ctx.proxy.dropAll();
    ctx.proxy.close(millisLeft(stopDeadline));
    Links links = ctx.links();
    if (links != null) {
      links.ring().close(failed);
    }
    for (CommChannel ch : ctx.channels) {
      if (ch != null) {
        ch.abort();
      }
    }
    // Channel 0's thread may drive every channel's kernel (ChannelGroupTask): while it has not
    // stopped, no channel's FIFOs are freed.
    boolean stopped = true;
    for (CommChannel ch : ctx.channels) {
      if (ch != null) {
        stopped &= ch.release(millisLeft(stopDeadline), stopped);
      }
    }
    if (links != null) {
      links.peers().close(stopped);
      links.sockets().close();
    }
    if (!ctx.pending.isEmpty()) {
      LOG.error(
          "rank {}: {} collective(s) never finished because a kernel thread did not stop; their"
              + " buffers stay marked in use",
          ctx.rank,
          ctx.pending.size());
    }
  }
}
