package org.sparkccl.kernel;

import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
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
 */
public final class KernelThread {
  private final Thread thread;
  private final KernelWaiter waiter;
  private final ConcurrentLinkedQueue<KernelTask> work = new ConcurrentLinkedQueue<>();

  /** Held while a task runs, by this thread or a caller running its task inline. */
  private final ReentrantLock runLock = new ReentrantLock();

  private volatile boolean stopping;

  /** Made once: a lambda per idle wait would allocate on every one. */
  private final BooleanSupplier hasWorkOrStop = this::hasWorkOrStop;

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
   * Queues {@code task} without waking this thread: the caller means to {@link #runInline} it and
   * must call {@link #wake()} if that fails.
   */
  public void queue(KernelTask task) {
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
      return false;
    }
    try {
      if (stopping || work.peek() != task) {
        return false;
      }
      work.poll();
      task.run();
    } finally {
      runLock.unlock();
    }
    waiter.endTask();
    return true;
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

  private boolean hasWorkOrStop() {
    return stopping || !work.isEmpty();
  }

  private void loop() {
    while (!stopping) {
      KernelTask task = work.peek();
      if (task == null) {
        waiter.awaitWork(hasWorkOrStop);
        continue;
      }
      // blocks only while a caller runs a task inline
      runLock.lock();
      try {
        if (stopping || work.peek() != task) {
          continue; // a caller ran it
        }
        work.poll();
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
