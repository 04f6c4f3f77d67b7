package org.sparkccl.kernel;

import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * The persistent thread of one channel's kernel: runs submitted work in order. Between
 * collectives it waits like any kernel wait ({@link KernelWaiter}), so back-to-back collectives
 * do not pay a thread wake-up each.
 */
public final class KernelThread {
  private final Thread thread;
  private final KernelWaiter waiter;
  private final ConcurrentLinkedQueue<Runnable> work = new ConcurrentLinkedQueue<>();
  private volatile boolean stopping;

  public KernelThread(String name, KernelWaiter waiter) {
    this.waiter = waiter;
    this.thread = new Thread(this::loop, name);
    this.thread.setDaemon(true);
    this.thread.start();
  }

  public void submit(Runnable task) {
    work.add(task);
    waiter.run();
  }

  private void loop() {
    while (!stopping) {
      Runnable task = work.poll();
      if (task != null) {
        task.run();
      } else {
        waiter.await(() -> stopping || !work.isEmpty(), waited -> {});
      }
    }
  }

  /** Stops after the current task; queued tasks are dropped. Returns whether the thread ended. */
  public boolean stop(long timeoutMillis) {
    stopping = true;
    waiter.run();
    try {
      thread.join(timeoutMillis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    work.clear();
    return !thread.isAlive();
  }
}
