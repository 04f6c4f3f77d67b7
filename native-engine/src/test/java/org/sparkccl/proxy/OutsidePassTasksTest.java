package org.sparkccl.proxy;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.Pipe;
import java.nio.channels.SelectionKey;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.sparkccl.CclException;

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
