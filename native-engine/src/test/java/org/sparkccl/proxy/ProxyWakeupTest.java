package org.sparkccl.proxy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.sparkccl.CclException;
import org.sparkccl.NeedsUcx;
import org.sparkccl.config.Key;
import org.sparkccl.fifo.Fifo;
import org.sparkccl.idle.IdleStrategies;
import org.sparkccl.transport.ucx.UcxTransport;

/** The proxy thread never loses a wake-up, and costs no CPU while idle. */
@DisplayName("proxy thread wake-ups")
class ProxyWakeupTest {

  /** Completes on its first progress call. */
  static class OneShot extends ProxyOp {
    final Object key;
    final int id;
    final CountDownLatch done = new CountDownLatch(1);
    volatile boolean finished;
    volatile long progressedAt;

    OneShot(Object key, int id) {
      this.key = key;
      this.id = id;
    }

    @Override
    public Object peerKey() {
      return key;
    }

    @Override
    public boolean progress(long nowNanos) {
      if (!finished) {
        progressedAt = System.nanoTime();
        finished = true;
        done.countDown();
        return true;
      }
      return false;
    }

    @Override
    public boolean isDone() {
      return finished;
    }

    @Override
    public String what() {
      return "one-shot op #" + id;
    }
  }

  static ProxyThread startProxy(AtomicReference<RuntimeException> error) {
    return startReportingProxy(error, new CountDownLatch(1));
  }

  /** A started proxy whose first reported failure goes to {@code error}, counting down once. */
  static ProxyThread startReportingProxy(
      AtomicReference<RuntimeException> error, CountDownLatch reported) {
    return startReportingProxy(error, reported, IdleStrategies.defaults());
  }

  /** As {@link #startReportingProxy(AtomicReference, CountDownLatch)}, idling as {@code idle}. */
  static ProxyThread startReportingProxy(
      AtomicReference<RuntimeException> error, CountDownLatch reported, IdleStrategies idle) {
    ProxyThread p =
        new ProxyThread(
            "sparkccl-test-proxy",
            idle,
            e -> {
              error.compareAndSet(null, e);
              reported.countDown();
            });
    p.start();
    return p;
  }

  static void closeAndCheckStopped(ProxyThread p) {
    p.close(10_000);
    assertFalse(p.thread().isAlive(), "the proxy thread still runs after close()");
  }

  @Test
  @DisplayName(
      "20,000 ops submitted one at a time, with the proxy going idle in between, all complete")
  void noWakeUpIsLostAcrossIdleTransitions() {
    AtomicReference<RuntimeException> error = new AtomicReference<>();
    ProxyThread proxy = startProxy(error);
    try {
      submitOneAtATime(proxy, error, 20_000);
    } finally {
      closeAndCheckStopped(proxy);
    }
  }

  /**
   * Tasks handed over by {@link ProxyThread#execute} (or {@link ProxyThread#executeOutsidePasses})
   * after the same random pauses: the proxy writes its selector's wake-up event only while it
   * blocks there, so a task that arrives while it spins must still be seen, and one that arrives as
   * it goes to block must still wake it.
   */
  @ParameterizedTest(name = "outside passes: {0}")
  @ValueSource(booleans = {false, true})
  @DisplayName("5,000 tasks executed one at a time, with the proxy going idle in between, all run")
  void noTaskIsLostAcrossIdleTransitions(boolean outsidePasses) throws InterruptedException {
    AtomicReference<RuntimeException> error = new AtomicReference<>();
    ProxyThread proxy = startProxy(error);
    try {
      SplittableRandom rnd = new SplittableRandom(43);
      for (int i = 0; i < 5_000; i++) {
        long pauseNanos = pauseAtRandom(rnd);
        CountDownLatch ran = new CountDownLatch(1);
        if (outsidePasses) {
          proxy.executeOutsidePasses(ran::countDown);
        } else {
          proxy.execute(ran::countDown);
        }
        if (!ran.await(5, TimeUnit.SECONDS)) {
          fail(
              lostWakeUp("task #" + i + " did not run within 5 s of execute()", pauseNanos, proxy));
        }
      }
      assertNull(error.get(), "proxy reported an error");
    } finally {
      closeAndCheckStopped(proxy);
    }
  }

  /**
   * The same with the idle proxy blocked in a real UCX worker's wait (armed, on its event file
   * descriptor) rather than in the selector: {@code wake()} must signal the worker, or an op
   * submitted after an idle period would wait for the next UCX event, which never comes. Prints the
   * median time from submission to progress after the longer pauses.
   */
  @Test
  @DisplayName(
      "with a UCX worker's wait as the idle wait, no wake-up is lost and the idle proxy burns no CPU")
  void noWakeUpIsLostWhileWaitingInTheUcxWorker() throws InterruptedException {
    NeedsUcx.assume("noWakeUpIsLostWhileWaitingInTheUcxWorker");
    Fifo send = new Fifo(Key.MIN_STEP_SIZE);
    Fifo recv = new Fifo(Key.MIN_STEP_SIZE);
    UcxTransport ucx = UcxTransport.open(0, 1, new Fifo[] {send}, new Fifo[] {recv});
    AtomicReference<RuntimeException> error = new AtomicReference<>();
    ProxyThread proxy =
        new ProxyThread(
            "sparkccl-test-proxy", IdleStrategies.defaults(), e -> error.compareAndSet(null, e));
    proxy.setOwnedPoller(ucx::poll, ucx.idleWait());
    proxy.start();
    try {
      submitOneAtATime(proxy, error, 4_000);
      // well past the yield window, so that every sample is a wake-up from the worker's wait
      long[] afterIdle = new long[200];
      for (int i = 0; i < afterIdle.length; i++) {
        LockSupport.parkNanos(2_000_000);
        OneShot op = new OneShot(new Object(), i);
        long t0 = System.nanoTime();
        proxy.submit(op);
        assertTrue(op.done.await(5, TimeUnit.SECONDS), "op after 2 ms idle never completed");
        afterIdle[i] = op.progressedAt - t0;
      }
      Arrays.sort(afterIdle);
      System.out.printf(
          "ucx idle wait: submit to progress after 2 ms idle: median %.1f us, p90 %.1f us"
              + " (%d samples)%n",
          afterIdle[afterIdle.length / 2] / 1000.0,
          afterIdle[afterIdle.length * 9 / 10] / 1000.0,
          afterIdle.length);
      ThreadMXBean mx = ManagementFactory.getThreadMXBean();
      if (mx.isThreadCpuTimeSupported()) {
        mx.setThreadCpuTimeEnabled(true);
        Thread.sleep(100); // past the yield window: the proxy now waits in the worker
        long id = proxy.thread().getId();
        long before = mx.getThreadCpuTime(id);
        Thread.sleep(500);
        long cpuMs = (mx.getThreadCpuTime(id) - before) / 1_000_000;
        assertTrue(cpuMs < 50, "idle proxy thread used " + cpuMs + " ms of CPU in 500 ms");
      }
      OneShot late = new OneShot(new Object(), -1);
      proxy.submit(late);
      assertTrue(late.done.await(5, TimeUnit.SECONDS), "op after the idle period never completed");
    } finally {
      closeAndCheckStopped(proxy);
      ucx.close(false);
      send.close();
      recv.close();
    }
  }

  /**
   * Parks for none (the proxy is still spinning; 60%), a few microseconds (yielding; 30%) or past
   * the yield window (blocked in select; 10%); returns the pause.
   */
  private static long pauseAtRandom(SplittableRandom rnd) {
    int kind = rnd.nextInt(100);
    long pauseNanos =
        kind < 60 ? 0 : kind < 90 ? 1_000 + rnd.nextInt(20_000) : 200_000 + rnd.nextInt(300_000);
    if (pauseNanos > 0) {
      LockSupport.parkNanos(pauseNanos);
    }
    return pauseNanos;
  }

  private static String lostWakeUp(String what, long pauseNanos, ProxyThread proxy) {
    return what
        + " after a pause of "
        + pauseNanos / 1000
        + " us: a lost wake-up (proxy thread state "
        + proxy.thread().getState()
        + ")";
  }

  /**
   * Submits {@code n} ops one at a time after random pauses (none, a few microseconds, or past the
   * yield window) and checks each completes; returns, for the ops after the longest pauses, the
   * nanoseconds from submission to progress.
   */
  private static long[] submitOneAtATime(
      ProxyThread proxy, AtomicReference<RuntimeException> error, int n) {
    List<Long> afterIdle = new ArrayList<>();
    {
      SplittableRandom rnd = new SplittableRandom(42);
      Object sharedKey = new Object();
      for (int i = 0; i < n; i++) {
        long pauseNanos = pauseAtRandom(rnd);
        OneShot op = new OneShot(rnd.nextBoolean() ? sharedKey : new Object(), i);
        long t0 = System.nanoTime();
        proxy.submit(op);
        boolean completed;
        try {
          completed = op.done.await(5, TimeUnit.SECONDS);
          if (pauseNanos >= 200_000) {
            afterIdle.add(op.progressedAt - t0);
          }
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new AssertionError(e);
        }
        if (!completed) {
          fail(
              lostWakeUp(
                  "op #" + i + " was not progressed within 5 s of submit()", pauseNanos, proxy));
        }
      }
      assertNull(error.get(), "proxy reported an error");
      long end = System.nanoTime() + 5_000_000_000L;
      while (!proxy.isIdle() && System.nanoTime() < end) {
        LockSupport.parkNanos(100_000);
      }
      assertTrue(proxy.isIdle(), "proxy not idle after every op completed");
    }
    return afterIdle.stream().mapToLong(Long::longValue).toArray();
  }

  @Test
  @DisplayName("ops submitted concurrently from several threads all complete")
  void concurrentSubmittersAllComplete() throws InterruptedException {
    AtomicReference<RuntimeException> error = new AtomicReference<>();
    ProxyThread proxy = startProxy(error);
    int perThread = 5_000;
    List<OneShot> ops = new ArrayList<>();
    Thread[] submitters = new Thread[3];
    try {
      for (int s = 0; s < submitters.length; s++) {
        List<OneShot> mine = new ArrayList<>();
        Object key = new Object();
        for (int i = 0; i < perThread; i++) {
          mine.add(new OneShot(i % 2 == 0 ? key : new Object(), s * perThread + i));
        }
        ops.addAll(mine);
        submitters[s] =
            new Thread(
                () -> {
                  SplittableRandom rnd = new SplittableRandom(mine.get(0).id);
                  for (OneShot op : mine) {
                    proxy.submit(op);
                    if (rnd.nextInt(50) == 0) {
                      LockSupport.parkNanos(rnd.nextInt(300_000));
                    }
                  }
                },
                "submitter-" + s);
        submitters[s].start();
      }
      for (Thread t : submitters) {
        t.join(30_000);
        assertFalse(t.isAlive(), t.getName() + " did not finish submitting");
      }
      long end = System.nanoTime() + 10_000_000_000L;
      for (OneShot op : ops) {
        long left = end - System.nanoTime();
        assertTrue(
            op.done.await(Math.max(1, left), TimeUnit.NANOSECONDS),
            "op #" + op.id + " never completed (lost wake-up?)");
      }
      assertNull(error.get(), "proxy reported an error");
    } finally {
      closeAndCheckStopped(proxy);
    }
  }

  @Test
  @DisplayName("ops on the same connection run one after the other, in submission order")
  void opsWithTheSameKeyRunInOrder() throws InterruptedException {
    AtomicReference<RuntimeException> error = new AtomicReference<>();
    ProxyThread proxy = startProxy(error);
    Object key = new Object();
    CountDownLatch firstStarted = new CountDownLatch(1);
    CountDownLatch secondDone = new CountDownLatch(1);
    List<String> order = java.util.Collections.synchronizedList(new ArrayList<>());
    java.util.concurrent.atomic.AtomicBoolean release =
        new java.util.concurrent.atomic.AtomicBoolean();
    ProxyOp first =
        new ProxyOp() {
          boolean done;

          @Override
          public Object peerKey() {
            return key;
          }

          @Override
          public boolean progress(long now) {
            firstStarted.countDown();
            if (release.get() && !done) {
              done = true;
              order.add("first");
              return true;
            }
            return false;
          }

          @Override
          public boolean isDone() {
            return done;
          }

          @Override
          public String what() {
            return "first";
          }
        };
    ProxyOp second =
        new ProxyOp() {
          boolean done;

          @Override
          public Object peerKey() {
            return key;
          }

          @Override
          public boolean progress(long now) {
            if (!done) {
              done = true;
              order.add("second");
              secondDone.countDown();
            }
            return true;
          }

          @Override
          public boolean isDone() {
            return done;
          }

          @Override
          public String what() {
            return "second";
          }
        };
    try {
      proxy.submit(first);
      proxy.submit(second);
      assertTrue(firstStarted.await(5, TimeUnit.SECONDS), "first op never progressed");
      Thread.sleep(50);
      assertEquals(List.of(), order, "the second op ran while the first was unfinished");
      release.set(true);
      proxy.wake();
      assertTrue(secondDone.await(5, TimeUnit.SECONDS), "second op never ran after the first");
      assertEquals(List.of("first", "second"), order);
      assertNull(error.get());
    } finally {
      closeAndCheckStopped(proxy);
    }
  }

  @Test
  @DisplayName("an op that throws is reported to onError with what it was doing")
  void failingOpIsReportedWithItsDescription() throws InterruptedException {
    AtomicReference<RuntimeException> error = new AtomicReference<>();
    CountDownLatch reported = new CountDownLatch(1);
    ProxyThread proxy = startReportingProxy(error, reported);
    try {
      proxy.submit(
          new OneShot(new Object(), 7) {
            @Override
            public boolean progress(long nowNanos) {
              throw new CclException("socket exploded");
            }

            @Override
            public String what() {
              return "rank 3: allReduce #9: sending to rank 4 (channel 1)";
            }
          });
      assertTrue(reported.await(5, TimeUnit.SECONDS), "onError was not called");
      RuntimeException e = error.get();
      assertNotNull(e);
      assertTrue(e instanceof CclException, "expected a CclException, got " + e);
      assertTrue(
          e.getMessage().contains("rank 3: allReduce #9: sending to rank 4 (channel 1)")
              && e.getMessage().contains("socket exploded"),
          "message should name the op and the cause: " + e.getMessage());
    } finally {
      closeAndCheckStopped(proxy);
    }
  }

  @Test
  @DisplayName("an idle proxy thread burns (almost) no CPU")
  void idleProxyBurnsNoCpu() throws InterruptedException {
    ThreadMXBean mx = ManagementFactory.getThreadMXBean();
    if (!mx.isThreadCpuTimeSupported()) {
      System.out.println("SKIPPED idleProxyBurnsNoCpu: this JVM cannot measure thread CPU time");
    }
    Assumptions.assumeTrue(
        mx.isThreadCpuTimeSupported(), "this JVM cannot measure per-thread CPU time");
    if (!mx.isThreadCpuTimeEnabled()) {
      mx.setThreadCpuTimeEnabled(true);
    }
    AtomicReference<RuntimeException> error = new AtomicReference<>();
    ProxyThread proxy = startProxy(error);
    try {
      for (int i = 0; i < 100; i++) {
        OneShot op = new OneShot(new Object(), i);
        proxy.submit(op);
        assertTrue(op.done.await(5, TimeUnit.SECONDS), "op #" + i + " never completed");
      }
      Thread.sleep(100); // past the ~200 us yield window: the proxy now blocks in select
      long id = proxy.thread().getId();
      long before = mx.getThreadCpuTime(id);
      Thread.sleep(500);
      long after = mx.getThreadCpuTime(id);
      assertTrue(before >= 0 && after >= 0, "the proxy thread is not alive");
      long cpuMs = (after - before) / 1_000_000;
      assertTrue(cpuMs < 50, "idle proxy thread used " + cpuMs + " ms of CPU in 500 ms");
      // and it still wakes up for new work afterwards
      OneShot late = new OneShot(new Object(), -1);
      proxy.submit(late);
      assertTrue(late.done.await(5, TimeUnit.SECONDS), "op after the idle period never completed");
    } finally {
      closeAndCheckStopped(proxy);
    }
  }

  @Test
  @DisplayName("close() stops a proxy that is busy with ops that cannot move")
  void closeStopsABusyProxy() {
    ProxyThread proxy = startProxy(new AtomicReference<>());
    proxy.submit(
        new OneShot(new Object(), 1) {
          @Override
          public boolean progress(long nowNanos) {
            return false; // never moves, never done
          }
        });
    LockSupport.parkNanos(Duration.ofMillis(20).toNanos());
    long t0 = System.nanoTime();
    closeAndCheckStopped(proxy);
    long ms = (System.nanoTime() - t0) / 1_000_000;
    assertTrue(ms < 2000, "close() took " + ms + " ms");
  }
}
