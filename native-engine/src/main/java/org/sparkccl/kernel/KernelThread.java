package org.sparkccl.kernel;

import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;

/**
 * The persistent thread of one channel's kernel: runs submitted work in order. Between collectives
 * it waits like any kernel wait ({@link KernelWaiter}), so back-to-back collectives do not pay a
 * thread wake-up each.
 *
 * <p>A blocking caller may run its own task instead ({@link #runInline}): a small collective then
 * costs no hand-off to this thread and none back, two thread wake-ups where the threads sleep. The
 * order stays the submission order, since a task runs only from the head of the queue and only
 * under {@code runLock}, whichever thread runs it.
 *
 * <p>A task queued for its caller is reserved for it: this thread leaves it alone unless the caller
 * gives it up, so the two never race for {@code runLock} (where this thread won, the caller waited
 * for a hand-off after all; where the caller won, this thread blocked on the lock and the caller's
 * unlock paid a thread wake-up). While callers run their tasks, this thread waits for work parked,
 * not yielding: it would otherwise keep a core busy between every two calls, one per rank, and 8
 * rank processes of a 16-core host then kept every core busy.
 */
public final class KernelThread {
  private final Thread thread;
  private final KernelWaiter waiter;
  private final ConcurrentLinkedQueue<KernelTask> work = new ConcurrentLinkedQueue<>();

  /** Held while a task runs, by this thread or a caller running its task inline. */
  private final ReentrantLock runLock = new ReentrantLock();

  private volatile boolean stopping;

  /** The task a caller queued to run itself ({@link #queue}); null when none. */
  private final AtomicReference<KernelTask> reserved = new AtomicReference<>();

  /** When the last task was reserved ({@link System#nanoTime}). */
  private volatile long reservedAt;

  /** Whether the last task ran on its caller's thread, not on this one. */
  private volatile boolean callersRun;

  /**
   * How long a reserved task may wait at the head for its caller before this thread runs it: a
   * caller runs it microseconds after queueing it, or gives it up and says so; this covers a caller
   * that stopped between the two (an exception), so that the tasks behind it still run.
   */
  private static final long RESERVATION_NANOS = 50_000_000;

  /** Made once: a lambda per idle wait would allocate on every one. */
  private final BooleanSupplier hasWorkOrStop = this::hasWorkOrStop;

  private final BooleanSupplier mayRunHeadOrStop = this::mayRunHeadOrStop;

  public KernelThread(String name, KernelWaiter waiter) {
    this.waiter = waiter;
    this.thread = new Thread(this::loop, name);
    this.thread.setDaemon(true);
    this.thread.start();
  }

  public void submit(KernelTask task) {
    work.add(task);
    waiter.wakeForWork();
  }

  /**
   * Queues {@code task} without waking this thread, reserved for the caller: it means to {@link
   * #runInline} it and must call {@link #wake()} if that fails.
   */
  public void queue(KernelTask task) {
    reservedAt = System.nanoTime();
    reserved.set(task);
    work.add(task);
  }

  /** Wakes this thread to look at its queue. */
  public void wake() {
    waiter.wakeForWork();
  }

  /**
   * Runs {@code task} on the calling thread if it is next in order: at the head of the queue, with
   * no task running and the thread not stopping. Returns whether it ran; if not, this thread (or an
   * earlier inline caller) runs or cancels it.
   */
  public boolean runInline(KernelTask task) {
    if (!runLock.tryLock()) {
      endReservation(task);
      return false;
    }
    try {
      if (stopping || work.peek() != task) {
        endReservation(task);
        return false;
      }
      work.poll();
      endReservation(task);
      callersRun = true;
      task.run();
    } finally {
      runLock.unlock();
    }
    if (!work.isEmpty()) {
      waiter.wakeForWork(); // what was submitted meanwhile may have found this thread parked
    }
    waiter.endTask();
    return true;
  }

  /** The caller ran {@code task} or will not run it: its reservation ends. */
  private void endReservation(KernelTask task) {
    reserved.compareAndSet(task, null);
  }

  /** Takes {@code runLock} (an inline run ends soon once aborted) by {@code deadline}. */
  private boolean lockBy(long deadline) {
    try {
      return runLock.tryLock(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return runLock.tryLock();
    }
  }

  private boolean reservedTooLong() {
    return System.nanoTime() - reservedAt > RESERVATION_NANOS;
  }

  private boolean hasWorkOrStop() {
    return stopping || !work.isEmpty();
  }

  private boolean mayRunHeadOrStop() {
    if (stopping) {
      return true;
    }
    KernelTask head = work.peek();
    return head != null && head != reserved.get();
  }

  private void loop() {
    while (!stopping) {
      KernelTask task = work.peek();
      if (task != null && task == reserved.get()) {
        if (reservedTooLong()) {
          endReservation(task); // its caller never came for it: run it here
        } else {
          waiter.awaitWorkParked(mayRunHeadOrStop);
        }
        continue;
      }
      if (task == null) {
        if (callersRun) {
          waiter.awaitWorkParked(hasWorkOrStop);
        } else {
          waiter.awaitWork(hasWorkOrStop);
        }
        continue;
      }
      // blocks only while a caller runs a task inline
      runLock.lock();
      try {
        if (stopping || work.peek() != task || task == reserved.get()) {
          continue; // a caller ran it, or queued it again (a reused task) for itself
        }
        work.poll();
        callersRun = false;
        task.run();
      } finally {
        runLock.unlock();
      }
      waiter.endTask();
    }
  }

  /**
   * Stops after the current task. Once the thread has ended and no caller runs a task inline, tasks
   * still queued are cancelled: only then is it certain that no kernel touches their buffers.
   * Returns whether it ended.
   */
  public boolean stop(long timeoutMillis) {
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
    stopping = true;
    waiter.wakeForWork();
    waiter.run();
    try {
      thread.join(timeoutMillis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    if (thread.isAlive() || !lockBy(deadline)) {
      return false;
    }
    try {
      KernelTask t;
      while ((t = work.poll()) != null) {
        t.cancel();
      }
    } finally {
      runLock.unlock();
    }
    return true;
  }
}
