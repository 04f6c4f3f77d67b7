package org.sparkccl.proxy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.sparkccl.idle.IdleStrategies;

/**
 * A proxy that owns a transport's progress (UCX's worker) lets waiting kernels move the operations
 * of other transports (the sockets of trees and doubling), and never lets them move its own.
 */
@DisplayName("kernels assist a proxy that owns a transport")
class OwnedProxyAssistTest {

  /** Finishes after a random number of progress calls; remembers which threads made them. */
  static class CountedOp extends ProxyOp {
    private final Object key = new Object();
    private final boolean needsOwner;
    private final int steps;
    private int made;
    final Set<Thread> progressedBy = ConcurrentHashMap.newKeySet();

    CountedOp(boolean needsOwner, int steps) {
      this.needsOwner = needsOwner;
      this.steps = steps;
    }

    @Override
    boolean needsTransportOwner() {
      return needsOwner;
    }

    @Override
    public Object peerKey() {
      return key;
    }

    @Override
    public boolean progress(long nowNanos) {
      progressedBy.add(Thread.currentThread());
      if (made < steps) {
        made++;
        return true;
      }
      return false;
    }

    @Override
    public boolean isDone() {
      return made == steps;
    }

    @Override
    public String what() {
      return "counted op of " + steps + " steps";
    }
  }

  /** Never finishes, as a UCX operation whose peer never writes; or fails when moved. */
  static final class StalledOp extends CountedOp {
    private final boolean fails;

    StalledOp(boolean needsOwner, boolean fails) {
      super(needsOwner, 1);
      this.fails = fails;
    }

    @Override
    public boolean progress(long nowNanos) {
      progressedBy.add(Thread.currentThread());
      if (fails) {
        throw new IllegalStateException("the peer reset the connection");
      }
      return false;
    }

    @Override
    public boolean isDone() {
      return false;
    }

    @Override
    public String what() {
      return fails ? "failing op" : "stalled op";
    }
  }

  /** A transport's wait without a transport: blocks until signalled (at most 10 s). */
  static final class SemaphoreWait implements OwnedWait {
    private final Semaphore signals = new Semaphore(0);

    /** The proxy is in this wait. */
    volatile boolean waiting;

    @Override
    public void await() {
      waiting = true;
      try {
        signals.tryAcquire(10, TimeUnit.SECONDS);
        signals.drainPermits();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      } finally {
        waiting = false;
      }
    }

    @Override
    public void signal() {
      signals.release();
    }
  }

  private static ProxyThread ownedProxy(
      AtomicReference<RuntimeException> error, Set<Thread> pollers) {
    return ownedProxy(error, pollers, new SemaphoreWait());
  }

  private static ProxyThread ownedProxy(
      AtomicReference<RuntimeException> error, Set<Thread> pollers, SemaphoreWait wait) {
    ProxyThread proxy =
        new ProxyThread(
            "sparkccl-test-owned-proxy",
            IdleStrategies.defaults(),
            e -> error.compareAndSet(null, e));
    proxy.setOwnedPoller(
        () -> {
          pollers.add(Thread.currentThread());
          return false;
        },
        wait);
    proxy.start();
    return proxy;
  }

  /** Waits (at most 10 s) until {@code condition} holds; whether it did. */
  private static boolean within10s(BooleanSupplier condition) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        return false;
      }
      Thread.sleep(0, 50_000);
    }
    return true;
  }

  /** The calling thread assists, as a waiting kernel does, until {@code done}; false after 10 s. */
  private static boolean assistUntil(ProxyThread proxy, BooleanSupplier done) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (!done.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        return false;
      }
      boolean unused = proxy.assist();
      Thread.onSpinWait();
    }
    return true;
  }

  @Test
  @DisplayName("with none of its own operations queued, a kernel moves the others itself")
  void kernelsMoveOtherTransportsOperations() throws InterruptedException {
    AtomicReference<RuntimeException> error = new AtomicReference<>();
    Set<Thread> pollers = ConcurrentHashMap.newKeySet();
    SemaphoreWait wait = new SemaphoreWait();
    ProxyThread proxy = ownedProxy(error, pollers, wait);
    try {
      SplittableRandom rnd = new SplittableRandom(20261205);
      for (int round = 0; round < 200; round++) {
        // a proxy still in its brief spin (after starting) passes, and moves what is linked then
        assertTrue(
            within10s(() -> wait.waiting), "round " + round + ": the idle proxy never waited");
        List<CountedOp> ops = new ArrayList<>();
        for (int i = rnd.nextInt(1, 5); i > 0; i--) {
          CountedOp op = new CountedOp(false, rnd.nextInt(1, 20));
          ops.add(op);
          proxy.enqueue(op);
        }
        assertFalse(proxy.ownerWorkPending(), "socket-like operations counted as the owner's");
        assertTrue(
            assistUntil(proxy, () -> ops.stream().allMatch(CountedOp::isUnlinked)),
            "round " + round + ": the kernel's assists stalled");
        for (CountedOp op : ops) {
          // nothing woke the proxy: the operations were the kernel's alone
          assertEquals(Set.of(Thread.currentThread()), op.progressedBy, op.what());
        }
      }
      assertTrue(proxy.isIdle(), "operations left counted");
      assertNull(error.get(), "the proxy reported an error");
    } finally {
      proxy.close(10_000);
    }
    assertFalse(pollers.contains(Thread.currentThread()), "the kernel polled the owned transport");
  }

  @Test
  @DisplayName("a kernel never moves the owner's operations, and the proxy does once woken")
  void ownerOperationsStayOnTheProxyThread() throws InterruptedException {
    AtomicReference<RuntimeException> error = new AtomicReference<>();
    Set<Thread> pollers = ConcurrentHashMap.newKeySet();
    ProxyThread proxy = ownedProxy(error, pollers);
    try {
      SplittableRandom rnd = new SplittableRandom(7);
      for (int round = 0; round < 200; round++) {
        CountedOp owners = new CountedOp(true, rnd.nextInt(1, 20));
        CountedOp other = new CountedOp(false, rnd.nextInt(1, 20));
        proxy.enqueue(owners);
        proxy.enqueue(other);
        assertTrue(
            proxy.ownerWorkPending(), "round " + round + ": the owner's operation uncounted");
        // a kernel that assists anyway (a caller that did not look first) skips the owner's
        for (int i = 0; i < 40; i++) {
          boolean unused = proxy.assist();
        }
        assertFalse(
            owners.progressedBy.contains(Thread.currentThread()),
            "round " + round + ": the assisting kernel moved the owner's operation");
        proxy.wake(); // what a kernel does when it sees ownerWorkPending()
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while ((!owners.isUnlinked() || !other.isUnlinked()) && System.nanoTime() < deadline) {
          Thread.sleep(0, 50_000);
        }
        assertTrue(owners.isUnlinked() && other.isUnlinked(), "round " + round + ": not finished");
        assertEquals(Set.of(proxy.thread()), owners.progressedBy, owners.what());
        assertFalse(
            proxy.ownerWorkPending(), "round " + round + ": the owner's count not released");
      }
      assertNull(error.get(), "the proxy reported an error");
    } finally {
      proxy.close(10_000);
    }
    assertEquals(1, pollers.size(), "the owned transport was polled off the proxy thread");
  }

  @Test
  @DisplayName("an operation of the owner's submitted while the proxy waits wakes it")
  void submittedOwnerOperationsWakeAWaitingProxy() throws InterruptedException {
    AtomicReference<RuntimeException> error = new AtomicReference<>();
    SemaphoreWait wait = new SemaphoreWait();
    ProxyThread proxy = ownedProxy(error, ConcurrentHashMap.newKeySet(), wait);
    try {
      SplittableRandom rnd = new SplittableRandom(5);
      for (int round = 0; round < 100; round++) {
        assertTrue(within10s(() -> wait.waiting), "round " + round + ": the proxy never waited");
        CountedOp op = new CountedOp(true, rnd.nextInt(1, 20));
        proxy.submit(op);
        // the wait lasts 10 s unless signalled: finishing sooner means the submission woke it
        long start = System.nanoTime();
        assertTrue(within10s(op::isUnlinked), "round " + round + ": the operation never moved");
        assertTrue(
            System.nanoTime() - start < TimeUnit.SECONDS.toNanos(5),
            "round " + round + ": the proxy waited out its wait");
        assertEquals(Set.of(proxy.thread()), op.progressedBy, op.what());
        assertFalse(proxy.ownerWorkPending(), "round " + round + ": the count not released");
      }
      assertNull(error.get(), "the proxy reported an error");
    } finally {
      proxy.close(10_000);
    }
  }

  @Test
  @DisplayName("dropped operations of the owner's release their count, and the proxy waits again")
  void droppedOwnerOperationsReleaseTheirCount() throws InterruptedException {
    AtomicReference<RuntimeException> error = new AtomicReference<>();
    SemaphoreWait wait = new SemaphoreWait();
    ProxyThread proxy = ownedProxy(error, ConcurrentHashMap.newKeySet(), wait);
    try {
      SplittableRandom rnd = new SplittableRandom(11);
      for (int round = 0; round < 30; round++) {
        List<StalledOp> ops = new ArrayList<>();
        for (int i = rnd.nextInt(1, 5); i > 0; i--) {
          ops.add(new StalledOp(rnd.nextBoolean() || i == 1, false));
        }
        ops.forEach(proxy::submit);
        assertTrue(
            within10s(() -> ops.stream().allMatch(op -> op.progressedBy.contains(proxy.thread()))),
            "round " + round + ": the proxy never linked the operations");
        assertTrue(proxy.ownerWorkPending(), "round " + round + ": nothing counted");
        proxy.dropAll(); // what a failure does
        assertTrue(
            within10s(() -> proxy.isIdle() && !proxy.ownerWorkPending()),
            "round " + round + ": the dropped operations stayed counted");
        // with nothing counted the proxy blocks again instead of polling every 20 us
        assertTrue(within10s(() -> wait.waiting), "round " + round + ": the proxy kept polling");
        assertTrue(ops.stream().noneMatch(CountedOp::isUnlinked), "a dropped op was finished");
      }
      assertNull(error.get(), "the proxy reported an error");
    } finally {
      proxy.close(10_000);
    }
  }

  @Test
  @DisplayName("a pass that fails drops the owner's operations too, on whichever thread it ran")
  void aFailedPassDropsTheOwnersOperations() throws InterruptedException {
    SplittableRandom rnd = new SplittableRandom(13);
    for (int round = 0; round < 20; round++) {
      AtomicReference<RuntimeException> error = new AtomicReference<>();
      SemaphoreWait wait = new SemaphoreWait();
      ProxyThread proxy = ownedProxy(error, ConcurrentHashMap.newKeySet(), wait);
      try {
        List<StalledOp> owners = new ArrayList<>();
        for (int i = rnd.nextInt(1, 4); i > 0; i--) {
          owners.add(new StalledOp(true, false));
        }
        owners.forEach(proxy::submit);
        assertTrue(
            within10s(
                () -> owners.stream().allMatch(op -> op.progressedBy.contains(proxy.thread()))),
            "round " + round + ": the proxy never linked the operations");
        StalledOp failing = new StalledOp(false, true);
        proxy.enqueue(failing);
        // a kernel assists; the proxy, which polls while its own are linked, may get there first
        boolean unused = assistUntil(proxy, () -> error.get() != null);
        assertTrue(
            error.get() != null && error.get().getMessage().contains("failing op"),
            "round " + round + ": the failure was not reported: " + error.get());
        assertTrue(
            within10s(() -> proxy.isIdle() && !proxy.ownerWorkPending()),
            "round " + round + ": operations stayed counted after the failure");
        assertTrue(within10s(() -> wait.waiting), "round " + round + ": the proxy kept polling");
        assertTrue(owners.stream().noneMatch(CountedOp::isUnlinked), "a dropped op was finished");
      } finally {
        proxy.close(10_000);
      }
    }
  }
}
