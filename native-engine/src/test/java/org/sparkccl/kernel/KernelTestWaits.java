package org.sparkccl.kernel;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.sparkccl.fifo.Fifo;

/**
 * What tests that play a kernel's peer wait on: a guard with a 30 s deadline, a kernel's return, a
 * step published.
 */
final class KernelTestWaits {
  private KernelTestWaits() {}

  /** A guard that never aborts; waits fail after 30 s with {@code what} in the text. */
  static KernelGuard guard(String what) {
    return new KernelGuard() {
      @Override
      public void checkAbort() {}

      @Override
      public long timeoutNanos() {
        return TimeUnit.SECONDS.toNanos(30);
      }

      @Override
      public String describe(boolean sending) {
        return what + (sending ? ", sending" : ", receiving");
      }
    };
  }

  /** Whether the kernel has returned within 200 ms (a kernel that should wait has not). */
  static boolean ended(CompletableFuture<Void> ran) throws Exception {
    try {
      ran.get(200, TimeUnit.MILLISECONDS);
      return true;
    } catch (java.util.concurrent.TimeoutException e) {
      return false;
    }
  }

  /** Waits up to 30 s for {@code step} of {@code fifo} to be published. */
  static void awaitFilled(Fifo fifo, long step) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (!fifo.isFilled(step)) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("step " + step + " was never published");
      }
      Thread.sleep(1);
    }
  }
}
