package org.sparkccl.kernel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.sparkccl.config.IdleMode;
import org.sparkccl.idle.IdleStrategies;

/** Who runs a kernel thread's tasks, and in which order, when callers run theirs inline. */
@DisplayName("kernel thread: inline runs")
class KernelThreadTest {
  /** A task that records its name and thread when it runs, or that it was cancelled. */
  private static final class Recording implements KernelTask {
    final String name;
    final List<String> log;
    final CountDownLatch release;
    final CountDownLatch started = new CountDownLatch(1);
    final CountDownLatch ended = new CountDownLatch(1);
    volatile Thread ranOn;

    Recording(String name, List<String> log, CountDownLatch release) {
      this.name = name;
      this.log = log;
      this.release = release;
    }

    @Override
    public void run() {
      ranOn = Thread.currentThread();
      started.countDown();
      try {
        release.await(10, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      log.add(name);
      ended.countDown();
    }

    @Override
    public void cancel() {
      log.add(name + " cancelled");
      ended.countDown();
    }
  }

  private static KernelThread newThread() {
    return new KernelThread("test-kernel", new KernelWaiter(IdleStrategies.defaults()));
  }

  @Test
  @DisplayName("a task at the head of an idle thread's queue runs on the caller")
  void headTaskRunsOnTheCaller() throws InterruptedException {
    KernelThread k = newThread();
    try {
      List<String> log = new CopyOnWriteArrayList<>();
      Recording a = new Recording("a", log, new CountDownLatch(0));
      k.queue(a);
      assertTrue(k.runInline(a), "the only queued task must run inline");
      assertSame(Thread.currentThread(), a.ranOn);
      assertEquals(List.of("a"), log);
    } finally {
      assertTrue(k.stop(5_000));
    }
  }

  @Test
  @DisplayName("a task behind another is refused inline and runs after it on the thread")
  void taskBehindAnotherWaitsItsTurn() throws InterruptedException {
    KernelThread k = newThread();
    try {
      List<String> log = new CopyOnWriteArrayList<>();
      CountDownLatch release = new CountDownLatch(1);
      Recording a = new Recording("a", log, release);
      Recording b = new Recording("b", log, new CountDownLatch(0));
      k.submit(a);
      assertTrue(a.started.await(10, TimeUnit.SECONDS), "the thread must start the first task");
      k.queue(b);
      assertFalse(k.runInline(b), "a task may not run while an earlier one runs");
      k.wake();
      release.countDown();
      assertTrue(b.ended.await(10, TimeUnit.SECONDS), "the thread must run the second task");
      assertEquals(List.of("a", "b"), log);
      assertNotSame(Thread.currentThread(), b.ranOn);
    } finally {
      assertTrue(k.stop(5_000));
    }
  }

  @Test
  @DisplayName("stop waits for an inline run, then cancels what is still queued")
  void stopWaitsForAnInlineRun() throws InterruptedException {
    KernelThread k = newThread();
    List<String> log = new CopyOnWriteArrayList<>();
    CountDownLatch release = new CountDownLatch(1);
    Recording a = new Recording("a", log, release);
    Recording b = new Recording("b", log, new CountDownLatch(0));
    k.queue(a);
    Thread caller = new Thread(() -> k.runInline(a), "inline-caller");
    caller.start();
    assertTrue(a.started.await(10, TimeUnit.SECONDS), "the caller must start its task");
    k.queue(b);
    assertFalse(k.stop(200), "stop must not report stopped while a caller runs a task");
    release.countDown();
    caller.join(10_000);
    assertTrue(k.stop(5_000), "stop must succeed once the inline run ended");
    assertEquals(List.of("a", "b cancelled"), log);
    assertFalse(k.runInline(b), "nothing runs inline on a stopped thread");
  }

  @Test
  @DisplayName("the thread leaves a task queued for its caller alone, even while it spins for work")
  void aReservedTaskWaitsForItsCaller() throws InterruptedException {
    KernelThread k =
        new KernelThread(
            "test-kernel", new KernelWaiter(new IdleStrategies(IdleMode.SPIN, 1_000_000_000L)));
    try {
      List<String> log = new CopyOnWriteArrayList<>();
      for (int i = 0; i < 200; i++) {
        Recording t = new Recording("t" + i, log, new CountDownLatch(0));
        k.queue(t);
        // the spinning thread sees the task at once; it must not take it in the meantime
        Thread.sleep(0, 100_000);
        assertTrue(k.runInline(t), "call " + i + ": the thread took the caller's task");
        assertSame(Thread.currentThread(), t.ranOn);
      }
      assertEquals(200, log.size());
    } finally {
      assertTrue(k.stop(5_000));
    }
  }

  @Test
  @DisplayName("a task whose caller never comes for it runs on the thread after a while")
  void anAbandonedReservationRunsOnTheThread() throws InterruptedException {
    KernelThread k = newThread();
    try {
      List<String> log = new CopyOnWriteArrayList<>();
      Recording a = new Recording("a", log, new CountDownLatch(0));
      Recording b = new Recording("b", log, new CountDownLatch(0));
      Thread.sleep(50); // the thread waits on an empty queue when the reserved task comes
      k.queue(a);
      k.submit(b);
      assertTrue(b.ended.await(10, TimeUnit.SECONDS), "the tasks behind it must still run");
      assertEquals(List.of("a", "b"), log);
      assertNotSame(Thread.currentThread(), a.ranOn);
      assertFalse(k.runInline(a), "a task the thread ran does not run again");
    } finally {
      assertTrue(k.stop(5_000));
    }
  }
}
