package org.sparkccl.kernel;

import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import org.sparkccl.idle.IdleStrategies;
import org.sparkccl.idle.IdleStrategy;

/**
 * How a kernel thread waits, for its FIFOs or for new work: its {@link IdleStrategy} (by default
 * yield for a bounded time), then park until woken. One waiter per kernel thread; FIFOs call {@link
 * #run()} after they change, the work queue {@link #wakeForWork()}. A caller that runs a task
 * inline ({@link KernelThread#runInline}) waits for the FIFOs through the same waiter.
 *
 * <p>No lost wake-up: the waiter publishes itself (volatile) before it re-checks the condition, and
 * wakers store their change (volatile) before reading the waiter, so either the waiter sees the
 * change or the waker sees the waiter and unparks it. A bounded park is a second guard.
 */
public final class KernelWaiter implements Runnable {
  private static final long MAX_PARK_NANOS = 2_000_000;

  /**
   * How long a wait lasts before the stall hook runs. Matching calls often wait this long for a
   * peer on a loaded machine, and each announcement the hook sends wakes a proxy thread; running it
   * when the wait first parked made small broadcasts over UCX 2 to 3 times slower on a 2-core
   * machine. A mismatch that only an announcement reveals is still found within milliseconds.
   */
  static final long STALL_HOOK_NANOS = 10_000_000;

  /** No spins: a waiting kernel's passes assist the proxy, which beats spinning in place. */
  private static final int SPINS = 0;

  private final IdleStrategy inFlight;
  private final IdleStrategy newWork;
  private final BooleanSupplier assist;
  private final Runnable wakeProxy;
  private volatile Thread parked;

  /**
   * The kernel thread parked waiting for new work, apart from {@link #parked}: while a caller runs
   * a task inline ({@link KernelThread#runInline}) both may wait at once, and neither may lose its
   * wake-up to the other.
   */
  private volatile Thread parkedForWork;

  private volatile boolean proxyWakePending;
  private volatile Runnable onStall = () -> {};

  /**
   * Called once on the waiting thread when a wait has outlasted the spin-and-yield phase and {@link
   * #STALL_HOOK_NANOS}: work that only a stalled collective needs (announcing the call to a peer)
   * goes here, off the fast path.
   */
  public void onStall(Runnable hook) {
    this.onStall = hook;
  }

  /** A waiter that only waits, as {@code idle} says. */
  public KernelWaiter(IdleStrategies idle) {
    this(idle, () -> false, () -> {});
  }

  /**
   * A waiter that idles as {@code idle} says and, while it waits, calls {@code assist} (one proxy
   * progress pass that returns whether anything moved) before it idles, and that wakes the proxy
   * thread ({@code wakeProxy}) only when it stops assisting.
   */
  public KernelWaiter(IdleStrategies idle, BooleanSupplier assist, Runnable wakeProxy) {
    this.inFlight = idle.inFlight(SPINS);
    this.newWork = idle.forNewWork(SPINS);
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

  /**
   * Kernel thread only, when a task ends: one more assist pass unlinks the operations the task
   * finished (a pass unlinks what earlier passes completed), then the proxy is woken only if work
   * is left. Without the pass nearly every small collective woke the proxy for nothing.
   */
  public void endTask() {
    if (proxyWakePending) {
      boolean unused = assist.getAsBoolean(); // what moved does not matter here
      flushProxyWake();
    }
  }

  /** The checks a wait makes while it waits. */
  public interface Check {
    /** Throws if the wait must end (abort, deadline); {@code waitedNanos} since the wait began. */
    void check(long waitedNanos);

    /** The longest park between checks: a wait that nobody wakes polls at this period. */
    default long parkNanos() {
      return MAX_PARK_NANOS;
    }
  }

  /** Waits until {@code ready} is true, calling {@code check} between parks. */
  public void await(BooleanSupplier ready, Check check) {
    await(inFlight, ready, check, false);
  }

  /** Waits for new work: until {@code ready} is true. */
  public void awaitWork(BooleanSupplier ready) {
    await(newWork, ready, waited -> {}, true);
  }

  /**
   * Waits for new work without the brief phase: one park, until {@code ready} is true, {@link
   * #wakeForWork()} or a bounded time (the caller loops). For a kernel thread whose callers run
   * their tasks themselves: its brief phase (yielding for {@code idle.yieldUs}) would keep a core
   * busy between every two calls for nothing.
   */
  public void awaitWorkParked(BooleanSupplier ready) {
    if (ready.getAsBoolean()) {
      return;
    }
    flushProxyWake();
    parkedForWork = Thread.currentThread();
    try {
      if (!ready.getAsBoolean()) {
        LockSupport.parkNanos(this, MAX_PARK_NANOS);
      }
    } finally {
      parkedForWork = null;
    }
  }

  private void await(IdleStrategy idle, BooleanSupplier ready, Check check, boolean forWork) {
    if (ready.getAsBoolean()) {
      return;
    }
    long start = System.nanoTime();
    idle.reset();
    boolean stalled;
    do {
      boolean moved = assist.getAsBoolean();
      if (ready.getAsBoolean()) {
        return;
      }
      stalled = idle.idle(moved ? 1 : 0);
    } while (!stalled);
    boolean hooked = false;
    boolean mayPark = idle.mayBlock();
    Thread me = Thread.currentThread();
    try {
      while (true) {
        if (forWork) {
          parkedForWork = me;
        } else {
          parked = me;
        }
        if (ready.getAsBoolean()) {
          return;
        }
        long waited = System.nanoTime() - start;
        check.check(waited);
        if (!hooked && waited >= STALL_HOOK_NANOS) {
          hooked = true;
          onStall.run();
        }
        if (assist.getAsBoolean()) {
          continue;
        }
        flushProxyWake();
        if (mayPark) {
          LockSupport.parkNanos(this, check.parkNanos());
        } else {
          Thread.onSpinWait();
        }
      }
    } finally {
      if (forWork) {
        parkedForWork = null;
      } else {
        parked = null;
      }
    }
  }

  /** Wakes the thread waiting for a FIFO, if any (FIFOs call this after they change). */
  @Override
  public void run() {
    Thread t = parked;
    if (t != null) {
      LockSupport.unpark(t);
    }
  }

  /**
   * Wakes the kernel thread if it waits for new work. Apart from {@link #run()}: a FIFO's change
   * during an inline run must not wake a kernel thread that has nothing to do.
   */
  public void wakeForWork() {
    Thread t = parkedForWork;
    if (t != null) {
      LockSupport.unpark(t);
    }
  }
}
