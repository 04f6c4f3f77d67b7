package org.sparkccl.proxy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.Pipe;
import java.nio.channels.SelectionKey;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.IntStream;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.sparkccl.CclException;
import org.sparkccl.config.IdleMode;
import org.sparkccl.idle.IdleStrategies;

/**
 * Work the proxy does outside its progress passes (the socket announcements it writes, a ring
 * connection's notices it reads): it never waits for the progress lock a kernel holds, and it
 * leaves what a kernel enqueued to that kernel until it wakes the proxy.
 */
@DisplayName("proxy work outside progress passes")
class OutsidePassTasksTest {

  @Test
  @Timeout(30)
  @DisplayName("a task runs while another thread holds the progress lock")
  void aTaskRunsWhileAKernelIsInAPass() {
    AtomicReference<RuntimeException> error = new AtomicReference<>();
    ProxyThread proxy = ProxyWakeupTest.startProxy(error);
    try {
      CountDownLatch ran = new CountDownLatch(1);
      assertRunsWhileLocked(proxy, () -> proxy.executeOutsidePasses(ran::countDown), ran, "task");
      assertNull(error.get(), "the proxy reported an error");
    } finally {
      ProxyWakeupTest.closeAndCheckStopped(proxy);
    }
  }

  /**
   * Tasks held back for a moment (the socket ring's announcements): never run before their delay,
   * run in the order queued, and run by a proxy that blocks in its selector with nothing else to
   * wake it (its wait is cut to the task's time).
   */
  @ParameterizedTest(name = "idle={0}")
  @EnumSource(
      value = IdleMode.class,
      names = {"SPIN", "BACKOFF"})
  @Timeout(60)
  @DisplayName("a later task runs after its delay, in order, also on a proxy blocked in select")
  void laterTasksRunAfterTheirDelayInOrder(IdleMode mode) throws InterruptedException {
    AtomicReference<RuntimeException> error = new AtomicReference<>();
    ProxyThread proxy =
        ProxyWakeupTest.startReportingProxy(
            error, new CountDownLatch(1), new IdleStrategies(mode, 50_000));
    SplittableRandom random = new SplittableRandom(20261205);
    try {
      for (int round = 0; round < 20; round++) {
        // idle for a while first: a proxy that backs off is then blocked in its selector
        LockSupport.parkNanos(random.nextLong(TimeUnit.MILLISECONDS.toNanos(5)));
        int n = 1 + random.nextInt(4);
        List<Integer> order = new CopyOnWriteArrayList<>();
        long[] ranAt = new long[n];
        CountDownLatch ran = new CountDownLatch(n);
        long queued = System.nanoTime();
        for (int i = 0; i < n; i++) {
          int k = i;
          proxy.executeOutsidePassesLater(
              () -> {
                ranAt[k] = System.nanoTime();
                order.add(k);
                ran.countDown();
              });
        }
        assertTrue(ran.await(5, TimeUnit.SECONDS), "round " + round + ": tasks left after 5 s");
        assertEquals(IntStream.range(0, n).boxed().toList(), order, "round " + round + ": order");
        for (int i = 0; i < n; i++) {
          assertTrue(
              ranAt[i] - queued >= ProxyThread.LATER_NANOS,
              "round " + round + ": task " + i + " ran " + (ranAt[i] - queued) + " ns after");
        }
      }
      assertNull(error.get(), "the proxy reported an error");
    } finally {
      ProxyWakeupTest.closeAndCheckStopped(proxy);
    }
  }

  @Test
  @Timeout(30)
  @DisplayName(
      "a ready socket whose handler needs no pass is handled while another thread holds the lock")
  void aHandlerThatNeedsNoPassRunsWhileAKernelIsInAPass() throws IOException {
    AtomicReference<RuntimeException> error = new AtomicReference<>();
    ProxyThread proxy = ProxyWakeupTest.startProxy(error);
    Pipe pipe = Pipe.open();
    try {
      pipe.source().configureBlocking(false);
      CountDownLatch handled = new CountDownLatch(1);
      ReadyHandler notices =
          new ReadyHandler() {
            @Override
            public void onReady() {
              try {
                while (pipe.source().read(ByteBuffer.allocate(64)) > 0) {
                  handled.countDown();
                }
              } catch (IOException e) {
                throw new UncheckedIOException(e);
              }
            }

            @Override
            public boolean runsInPass() {
              return false;
            }
          };
      pipe.source().register(proxy.selector(), SelectionKey.OP_READ, notices);
      proxy.wake(); // a select already under way does not watch a key registered after it began
      Runnable write =
          () -> {
            try {
              pipe.sink().write(ByteBuffer.wrap(new byte[] {42}));
            } catch (IOException e) {
              throw new UncheckedIOException(e);
            }
          };
      assertRunsWhileLocked(proxy, write, handled, "handler");
      assertNull(error.get(), "the proxy reported an error");
    } finally {
      ProxyWakeupTest.closeAndCheckStopped(proxy);
      pipe.sink().close();
      pipe.source().close();
    }
  }

  @Test
  @Timeout(30)
  @DisplayName(
      "an operation a kernel enqueued is not taken by the pass after a task; wake() hands it over")
  void leavesEnqueuedOperationsToTheirKernel() throws InterruptedException {
    AtomicReference<RuntimeException> error = new AtomicReference<>();
    ProxyThread proxy = ProxyWakeupTest.startProxy(error);
    try {
      for (int i = 0; i < 20; i++) {
        ProxyWakeupTest.OneShot op = new ProxyWakeupTest.OneShot(new Object(), i);
        proxy.enqueue(op);
        CountDownLatch ran = new CountDownLatch(1);
        proxy.executeOutsidePasses(ran::countDown);
        assertTrue(ran.await(5, TimeUnit.SECONDS), "task #" + i + " did not run within 5 s");
        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(2)); // the proxy's passes after it
        assertFalse(
            op.finished,
            "op #"
                + i
                + " was progressed by the proxy after a task alone: a kernel that assists would"
                + " lose its sends to the proxy thread");
        proxy.wake();
        assertTrue(op.done.await(5, TimeUnit.SECONDS), "op #" + i + " not progressed after wake()");
      }
      assertNull(error.get(), "the proxy reported an error");
    } finally {
      ProxyWakeupTest.closeAndCheckStopped(proxy);
    }
  }

  @Test
  @Timeout(30)
  @DisplayName("a task that throws fails the proxy's operations through onError")
  void aFailingTaskReachesOnError() throws InterruptedException {
    AtomicReference<RuntimeException> error = new AtomicReference<>();
    CountDownLatch reported = new CountDownLatch(1);
    ProxyThread proxy = ProxyWakeupTest.startReportingProxy(error, reported);
    try {
      CclException thrown = new CclException("announcing the call failed (the socket is closed)");
      proxy.executeOutsidePasses(
          () -> {
            throw thrown;
          });
      assertTrue(reported.await(5, TimeUnit.SECONDS), "onError was not called");
      assertSame(thrown, error.get(), "onError got another exception");
    } finally {
      ProxyWakeupTest.closeAndCheckStopped(proxy);
    }
  }

  /**
   * Holds the progress lock, as a kernel in a pass does, runs {@code trigger} and checks that
   * {@code done} counts down meanwhile.
   */
  private static void assertRunsWhileLocked(
      ProxyThread proxy, Runnable trigger, CountDownLatch done, String what) {
    AtomicBoolean ranInside = new AtomicBoolean();
    proxy.runExclusive(
        () -> {
          trigger.run();
          ranInside.set(await(done));
        });
    assertTrue(
        ranInside.get(),
        "the "
            + what
            + " did not run within 5 s while this thread held the progress lock (it waited for a"
            + " pass)");
  }

  private static boolean await(CountDownLatch latch) {
    try {
      return latch.await(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }
}
