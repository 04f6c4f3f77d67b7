package org.sparkccl.transport.ucx;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.sparkccl.NeedsUcx;
import org.sparkccl.config.Key;
import org.sparkccl.fifo.Fifo;
import org.sparkccl.proxy.OwnedWait;

/**
 * The idle proxy's wait in a real UCX worker: a tick of the period ends it, and UCX's signal then
 * outlives that wait, so the next wait returns at once. A kernel's wake-up signalled just before
 * that next wait must still end it (or the next one): the proxy then looks for the kernel's work.
 */
@DisplayName("the UCX idle wait")
class UcxIdleWaitTest {

  @Test
  @DisplayName("after a tick, a wake-up signalled before the next wait is not lost")
  void aWakeUpAfterATickIsNotLost() throws Exception {
    NeedsUcx.assume("aWakeUpAfterATickIsNotLost");
    Fifo send = new Fifo(Key.MIN_STEP_SIZE);
    Fifo recv = new Fifo(Key.MIN_STEP_SIZE);
    UcxTransport ucx = UcxTransport.open(0, 1, new Fifo[] {send}, new Fifo[] {recv});
    OwnedWait wait = ucx.idleWait();
    try {
      for (int round = 0; round < 20; round++) {
        // the proxy waits; the period ends that wait (its signal stays behind in UCX)
        CountDownLatch ticked = awaitOnAnotherThread(wait);
        Thread.sleep(20); // the wait has begun
        wait.tick();
        assertTrue(ticked.await(5, TimeUnit.SECONDS), "a tick did not end the wait");
        // a kernel queues work and signals while the proxy is between its look and its next wait:
        // the proxy waits until that signal has ended one of its waits, then looks again
        wait.signal();
        CountDownLatch woken = awaitOnAnotherThread(wait);
        boolean ended = woken.await(5, TimeUnit.SECONDS);
        if (!ended) {
          wait.signal(); // lets the waiting thread go before the test fails
        }
        assertTrue(ended, "round " + round + ": a wait after a tick lost the signal before it");
      }
    } finally {
      ucx.close(false);
      send.close();
      recv.close();
    }
  }

  /**
   * Runs one {@link OwnedWait#await()} on a new thread, as the proxy thread would; the latch opens
   * when it returns.
   */
  private static CountDownLatch awaitOnAnotherThread(OwnedWait wait) {
    CountDownLatch done = new CountDownLatch(1);
    Thread t =
        new Thread(
            () -> {
              wait.await();
              done.countDown();
            },
            "test-idle-wait");
    t.setDaemon(true);
    t.start();
    return done;
  }
}
