package org.sparkccl.proxy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.sparkccl.idle.IdleStrategies;

/**
 * The proxy's lanes ({@link ProxyThread#assist(int)}): the kernels of several channels each move
 * their own channel's operations, at the same time, and never another lane's.
 */
@DisplayName("proxy lanes")
class ProxyLanesTest {

  /** Counts its passes; done once told to finish. */
  private static class Counted extends ProxyOp {
    private final Object key = new Object();
    final AtomicInteger passes = new AtomicInteger();
    volatile boolean finish;

    @Override
    public Object peerKey() {
      return key;
    }

    @Override
    public boolean progress(long nowNanos) {
      passes.incrementAndGet();
      return true;
    }

    @Override
    public boolean isDone() {
      return finish;
    }

    @Override
    public String what() {
      return "counted op";
    }
  }

  /** Stays in its first pass until {@code until} opens (at most 10 s), then is done. */
  private static final class HeldInPass extends Counted {
    private final CountDownLatch until;

    HeldInPass(CountDownLatch until) {
      this.until = until;
    }

    /** Waits (10 s at most) until a kernel's pass holds this operation, so holds its lane. */
    void awaitInPass() {
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (passes.get() == 0) {
        assertTrue(System.nanoTime() < deadline, "the kernel's assist never began its pass");
        Thread.onSpinWait();
      }
    }

    @Override
    public boolean progress(long nowNanos) {
      super.progress(nowNanos);
      try {
        if (!until.await(10, TimeUnit.SECONDS)) {
          throw new IllegalStateException("held in its pass for 10 s");
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      finish = true;
      return true;
    }
  }

  private static ProxyThread unstarted(int lanes, AtomicReference<RuntimeException> error) {
    // not started: only the assisting threads move anything until a test starts it
    return new ProxyThread(
        "sparkccl-test-proxy", IdleStrategies.defaults(), e -> error.compareAndSet(null, e), lanes);
  }

  @Test
  @DisplayName("a kernel's assist moves its own lane's operations and leaves the others'")
  void assistMovesOnlyItsLane() {
    AtomicReference<RuntimeException> error = new AtomicReference<>();
    ProxyThread proxy = unstarted(3, error);
    try {
      Counted[] ops = {new Counted(), new Counted(), new Counted()};
      for (int lane = 0; lane < ops.length; lane++) {
        proxy.enqueue(ops[lane], lane);
      }
      assertTrue(proxy.assist(1));
      assertEquals(0, ops[0].passes.get(), "lane 0's operation moved in lane 1's assist");
      assertEquals(1, ops[1].passes.get());
      assertEquals(0, ops[2].passes.get(), "lane 2's operation moved in lane 1's assist");
      for (Counted op : ops) {
        op.finish = true;
      }
      for (int lane = 0; lane < ops.length; lane++) {
        boolean unused = proxy.assist(lane);
        assertTrue(ops[lane].isUnlinked(), "lane " + lane + "'s finished operation is linked");
      }
      assertTrue(proxy.isIdle());
    } finally {
      proxy.close(5_000);
    }
    assertNull(error.get());
  }

  @Test
  @DisplayName(
      "two kernels move their lanes at the same time: one in a pass does not hold off the other")
  void lanesMoveAtOnce() throws InterruptedException {
    AtomicReference<RuntimeException> error = new AtomicReference<>();
    ProxyThread proxy = unstarted(2, error);
    CountDownLatch laneOneMoved = new CountDownLatch(1);
    // lane 0's operation stays in its pass until lane 1's has moved: with one lock for both lanes,
    // lane 1's assist would find it taken for as long as the pass lasts
    HeldInPass waiting = new HeldInPass(laneOneMoved);
    Counted other =
        new Counted() {
          @Override
          public boolean progress(long nowNanos) {
            super.progress(nowNanos);
            laneOneMoved.countDown();
            finish = true;
            return true;
          }
        };
    try {
      proxy.enqueue(waiting, 0);
      proxy.enqueue(other, 1);
      Thread laneZero = new Thread(() -> proxy.assist(0), "lane-0-kernel");
      laneZero.start();
      waiting.awaitInPass();
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (!other.isUnlinked() && System.nanoTime() < deadline) {
        boolean unused = proxy.assist(1);
      }
      laneZero.join(TimeUnit.SECONDS.toMillis(15));
      assertTrue(other.isUnlinked(), "lane 1's operation never moved while lane 0 was in a pass");
      assertTrue(waiting.isUnlinked());
    } finally {
      proxy.close(5_000);
    }
    assertNull(error.get());
  }

  @Test
  @DisplayName(
      "the proxy thread moves a lane no kernel holds while a kernel's pass holds another (a channel"
          + " whose kernel has ended leaves its last sends to it)")
  void proxyMovesFreeLanesWhileAKernelHoldsOne() throws InterruptedException {
    AtomicReference<RuntimeException> error = new AtomicReference<>();
    ProxyThread proxy = unstarted(2, error);
    CountDownLatch release = new CountDownLatch(1);
    HeldInPass holding = new HeldInPass(release);
    Counted leftover = new Counted();
    leftover.finish = true; // done after its first pass
    proxy.start();
    Thread kernel = new Thread(() -> proxy.assist(0), "lane-0-kernel");
    boolean movedWhileHeld = false;
    try {
      proxy.enqueue(holding, 0);
      kernel.start();
      holding.awaitInPass();
      // the other channel's kernel queued a send, ended its task and woke the proxy
      proxy.enqueue(leftover, 1);
      proxy.wake();
      // well inside the 10 s that lane 0's pass lasts at most
      long moveDeadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
      while (!leftover.isUnlinked() && System.nanoTime() < moveDeadline) {
        Thread.sleep(1);
      }
      movedWhileHeld = leftover.isUnlinked();
    } finally {
      release.countDown();
      kernel.join(TimeUnit.SECONDS.toMillis(30));
      proxy.close(5_000);
    }
    assertTrue(movedWhileHeld, "lane 1's operation waited for lane 0's kernel to let go");
    assertNull(error.get());
  }

  @Test
  @DisplayName(
      "two kernels whose passes fail at once both report, though the failure's handler takes every"
          + " lane (no deadlock)")
  void failuresInTwoLanesAtOnceAreReported() throws InterruptedException {
    List<RuntimeException> reported = Collections.synchronizedList(new ArrayList<>());
    AtomicReference<ProxyThread> self = new AtomicReference<>();
    // as the communicator's handler does: it tells the peers inside a pass of its own
    ProxyThread proxy =
        new ProxyThread(
            "sparkccl-test-proxy",
            IdleStrategies.defaults(),
            e -> {
              self.get().runExclusive(() -> {});
              reported.add(e);
            },
            2);
    self.set(proxy);
    CyclicBarrier bothInPass = new CyclicBarrier(2);
    Thread[] kernels = new Thread[2];
    try {
      for (int lane = 0; lane < 2; lane++) {
        int l = lane;
        proxy.enqueue(
            new Counted() {
              @Override
              public boolean progress(long nowNanos) {
                try {
                  bothInPass.await(10, TimeUnit.SECONDS);
                } catch (Exception e) {
                  throw new IllegalStateException("the other lane's pass did not begin", e);
                }
                throw new IllegalStateException("lane " + l + " failed");
              }
            },
            lane);
        kernels[lane] = new Thread(() -> proxy.assist(l), "lane-" + lane + "-kernel");
        kernels[lane].setDaemon(true); // left behind if they deadlock
      }
      for (Thread k : kernels) {
        k.start();
      }
      for (Thread k : kernels) {
        k.join(TimeUnit.SECONDS.toMillis(20));
        assertTrue(!k.isAlive(), k.getName() + " never returned from its pass (deadlock?)");
      }
    } finally {
      if (Arrays.stream(kernels).noneMatch(k -> k != null && k.isAlive())) {
        proxy.close(5_000);
      }
    }
    assertEquals(2, reported.size(), "failures reported: " + reported);
  }

  @Test
  @DisplayName("a proxy needs at least one lane")
  void refusesNoLanes() {
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> new ProxyThread("p", IdleStrategies.defaults(), x -> {}, 0));
    assertTrue(e.getMessage().contains("laneCount=0"), e.getMessage());
  }
}
