package org.sparkccl.proxy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.channels.Selector;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The socket watcher holds the selector for the whole of the proxy's wait: it ends that wait when
 * the period passes or a socket is ready, and gives the selector back when the proxy asks.
 */
@DisplayName("the proxy's socket watcher")
class SocketWatcherTest {
  private static final long PERIOD_NANOS = TimeUnit.MILLISECONDS.toNanos(200);

  /** Counts what the watcher does to the proxy's wait. */
  private static final class CountingWait implements OwnedWait {
    final AtomicInteger signals = new AtomicInteger();
    final AtomicInteger ticks = new AtomicInteger();

    /** Waits are the proxy's alone: the watcher must never call this. */
    final AtomicInteger awaits = new AtomicInteger();

    @Override
    public void await() {
      awaits.incrementAndGet();
    }

    @Override
    public void signal() {
      signals.incrementAndGet();
    }

    @Override
    public long periodNanos() {
      return PERIOD_NANOS;
    }

    @Override
    public void tick() {
      ticks.incrementAndGet();
    }
  }

  /** What a test does with a running watcher, its selector and the wait it ends. */
  private interface WatcherTest {
    void run(SocketWatcher watcher, Selector selector, CountingWait wait) throws Exception;
  }

  /**
   * Runs {@code test} against a started watcher, then stops it and checks that it never called the
   * proxy's wait.
   */
  private static void withWatcher(WatcherTest test) throws Exception {
    CountingWait wait = new CountingWait();
    try (Selector selector = Selector.open()) {
      SocketWatcher watcher = new SocketWatcher(selector, wait, "test-socket-watcher");
      watcher.start();
      try {
        test.run(watcher, selector, wait);
      } finally {
        watcher.stop();
      }
    }
    assertEquals(0, wait.awaits.get(), "the watcher called the proxy's wait");
  }

  @Test
  @DisplayName("a wake-up left from the proxy's last wait neither ends the lend nor skips the tick")
  void aStaleWakeUpDoesNotEndTheLend() throws Exception {
    withWatcher(
        (watcher, selector, wait) -> {
          for (int round = 0; round < 3; round++) {
            // the proxy asked for the selector back after a wait the watcher had already left
            selector.wakeup();
            long start = System.nanoTime();
            watcher.lend();
            Thread.sleep(50);
            assertTrue(
                watcher.isLent(), "round " + round + ": the watcher gave the selector back early");
            assertEquals(round, wait.ticks.get(), "round " + round + ": ticked before the period");
            while (watcher.isLent() && System.nanoTime() - start < 5 * PERIOD_NANOS) {
              Thread.sleep(5);
            }
            assertFalse(watcher.isLent(), "round " + round + ": the watcher kept the selector");
            assertTrue(
                System.nanoTime() - start >= PERIOD_NANOS,
                "round " + round + ": the lend ended before the period");
            assertEquals(round + 1, wait.ticks.get(), "round " + round + ": no tick at the period");
            assertEquals(0, wait.signals.get(), "a signal with no socket ready");
          }
        });
  }

  @Test
  @DisplayName("gives the selector back when the proxy reclaims it, without a tick or a signal")
  void reclaimEndsTheLend() throws Exception {
    withWatcher(
        (watcher, selector, wait) -> {
          for (int round = 0; round < 20; round++) {
            watcher.lend();
            if (round % 2 == 0) {
              Thread.sleep(2); // the select has begun; in odd rounds it may not have
            }
            watcher.reclaim();
            long start = System.nanoTime();
            while (watcher.isLent() && System.nanoTime() - start < PERIOD_NANOS / 2) {
              Thread.onSpinWait();
            }
            assertFalse(watcher.isLent(), "round " + round + ": the selector did not come back");
          }
          assertEquals(0, wait.ticks.get(), "ticks");
          assertEquals(0, wait.signals.get(), "signals");
        });
  }
}
