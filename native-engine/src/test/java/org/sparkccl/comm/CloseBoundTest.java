package org.sparkccl.comm;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.sparkccl.TestConfig;
import org.sparkccl.bootstrap.LocalBootstrap;
import org.sparkccl.config.CclConfig;
import org.sparkccl.config.Transport;
import org.sparkccl.kernel.KernelTask;

/**
 * {@code close()} ends within its stop budget even when no kernel thread stops: the budget is
 * shared by every channel, not spent again on each (with 4 channels that was once 40 s).
 */
@DisplayName("close is bounded however many kernel threads hang")
class CloseBoundTest {
  @Test
  @Timeout(60)
  void closeEndsWithinTheStopBudgetWhenEveryKernelThreadHangs() throws Exception {
    int channels = 4;
    CclConfig config =
        TestConfig.builder()
            .transport(Transport.LOCAL)
            .nChannels(channels)
            .timeout(Duration.ofSeconds(2))
            .build();
    CommCore core = CommCore.create(LocalBootstrap.group(1).rank(0), config);
    CountDownLatch hang = new CountDownLatch(1);
    CountDownLatch hanging = new CountDownLatch(channels);
    try {
      for (CommChannel ch : core.context().channels) {
        // a kernel that ignores the abort, as one stuck in a device call would
        ch.kernelThread.submit(
            new KernelTask() {
              @Override
              public void run() {
                hanging.countDown();
                try {
                  hang.await(60, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                  Thread.currentThread().interrupt();
                }
              }

              @Override
              public void cancel() {}
            });
      }
      assertTrue(hanging.await(10, TimeUnit.SECONDS), "every kernel thread is busy");
      long t0 = System.nanoTime();
      core.close();
      long took = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
      assertTrue(
          took < Lifecycle.STOP_MILLIS + 2_000,
          "close took "
              + took
              + " ms; expected at most the stop budget of "
              + Lifecycle.STOP_MILLIS
              + " ms and a little");
    } finally {
      hang.countDown();
    }
  }
}
