package org.sparkccl.kernel;

import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.function.BooleanSupplier;

/**
 * The persistent thread of one channel's kernel: runs submitted work in order. Between collectives
 * it waits like any kernel wait ({@link KernelWaiter}), so back-to-back collectives do not pay a
 * thread wake-up each.
 */
public final class KernelThread {
  private final Thread thread;
  private final KernelWaiter waiter;
  private final ConcurrentLinkedQueue<KernelTask> work = new ConcurrentLinkedQueue<>();
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
    waiter.run();
  }

  private boolean hasWorkOrStop() {
    return stopping || !work.isEmpty();
  }

  private void loop() {
    while (!stopping) {
      KernelTask task = work.poll();
      if (task != null) {
        task.run();
        waiter.flushProxyWake();
      } else {
        waiter.awaitWork(hasWorkOrStop);
      }
    }
  }

  /**
   * Stops after the current task. Once the thread has ended, tasks still queued are cancelled: only
   * then is it certain that no kernel touches their buffers. Returns whether it ended.
   */
  public boolean stop(long timeoutMillis) {
    stopping = true;
    waiter.run();
    try {
      thread.join(timeoutMillis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    if (thread.isAlive()) {
      return false;
    }
    KernelTask t;
    while ((t = work.poll()) != null) {
      t.cancel();
    }
    return true;
  }
}
