package org.sparkccl.kernel;

import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import org.sparkccl.util.Backoff;

/**
 * How a kernel thread waits, for its FIFOs or for new work: {@link Backoff} (spin, then yield for a
 * bounded time), then park until woken. One waiter per kernel thread; FIFOs and the work queue call
 * {@link #run()} after they change.
 *
 * <p>No lost wake-up: the waiter publishes itself (volatile) before it re-checks the condition, and
 * wakers store their change (volatile) before reading the waiter, so either the waiter sees the
 * change or the waker sees the waiter and unparks it. A bounded park is a second guard.
 */
public final class KernelWaiter implements Runnable {
  private static final long MAX_PARK_NANOS = 2_000_000;

  private final BooleanSupplier assist;
  private final Runnable wakeProxy;
  private volatile Thread parked;
  private volatile boolean proxyWakePending;
  private volatile Runnable onStall = () -> {};

  /**
   * Called on the waiting thread when a wait outlasts the spin-and-yield phase, before it first
   * parks: work that only a stalled collective needs (announcing the call to a peer) goes here, off
   * the fast path.
   */
  public void onStall(Runnable hook) {
    this.onStall = hook;
  }

  /** A waiter that only waits. */
  public KernelWaiter() {
    this(() -> false, () -> {});
  }

  /**
   * A waiter that, while it waits briefly, calls {@code assist} (one proxy progress pass that
   * returns whether anything moved) instead of only yielding, and that wakes the proxy thread
   * ({@code wakeProxy}) only when it stops assisting.
   */
  public KernelWaiter(BooleanSupplier assist, Runnable wakeProxy) {
    this.assist = assist;
    this.wakeProxy = wakeProxy;
  }

  /**
   * The proxy has something new to do (operations queued for this kernel, a published send slot, a
   * freed receive slot). While this thread assists it will do it itself; the proxy thread is woken
   * only by {@link #flushProxyWake()}, before this thread parks or when its task ends. Waking a
   * thread per slice would cost more than the slice.
   */
  public void deferProxyWake() {
    proxyWakePending = true;
  }

  /** Kernel thread only: wakes the proxy thread if something is pending. */
  public void flushProxyWake() {
    if (proxyWakePending) {
      proxyWakePending = false;
      wakeProxy.run();
    }
  }

  /** The checks a wait makes while it waits. */
  public interface Check {
    /** Throws if the wait must end (abort, deadline); {@code waitedNanos} since the wait began. */
    void check(long waitedNanos);
  }

  /** Waits until {@code ready} is true, calling {@code check} between parks. */
  public void await(BooleanSupplier ready, Check check) {
    if (ready.getAsBoolean()) {
      return;
    }
    long start = System.nanoTime();
    while (System.nanoTime() - start < Backoff.YIELD_NANOS) {
      boolean moved = assist.getAsBoolean();
      if (ready.getAsBoolean()) {
        return;
      }
      if (!moved) {
        Thread.yield();
      }
    }
    onStall.run();
    Thread me = Thread.currentThread();
    try {
      while (true) {
        parked = me;
        if (ready.getAsBoolean()) {
          return;
        }
        check.check(System.nanoTime() - start);
        if (assist.getAsBoolean()) {
          continue;
        }
        flushProxyWake();
        LockSupport.parkNanos(this, MAX_PARK_NANOS);
      }
    } finally {
      parked = null;
    }
  }

  /** Wakes the waiting thread, if any. */
  @Override
  public void run() {
    Thread t = parked;
    if (t != null) {
      LockSupport.unpark(t);
    }
  }
}
