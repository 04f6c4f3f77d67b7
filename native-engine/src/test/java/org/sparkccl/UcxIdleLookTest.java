package org.sparkccl;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.sparkccl.config.CclConfig;
import org.sparkccl.config.Transport;
import org.sparkccl.device.DeviceBuffer;
import org.sparkccl.device.HostDevice;

/**
 * An idle proxy over UCX ends its wait in the worker every 10 ms while the communicator checks its
 * calls, to look at the board its successor's announcements land in (a put raises no event): that
 * look must stay a look, not become a spin, on a machine whose cores the ranks share.
 */
@DisplayName("an idle UCX communicator")
class UcxIdleLookTest {
  private static final Duration WAIT = Duration.ofSeconds(60);
  private static final long MEASURE_MS = 1_000;
  private static final int WINDOWS = 2;

  /**
   * At most this share of a core per proxy thread (or its socket watcher) while idle: 0.1-0.7% each
   * on the 2-core VM, and 2.2-4.1% for the proxy when it spun after each look.
   */
  private static final double MAX_SHARE = 0.02;

  @Test
  @DisplayName("burns little CPU while idle, with the check on (looking every 10 ms) and off")
  void idleProxiesOnlyLook() throws Exception {
    ThreadMXBean mx = ManagementFactory.getThreadMXBean();
    Assumptions.assumeTrue(mx.isThreadCpuTimeSupported(), "no per-thread CPU time here");
    mx.setThreadCpuTimeEnabled(true);
    for (boolean checks : new boolean[] {true, false}) {
      Set<Thread> before = Thread.getAllStackTraces().keySet();
      CclConfig config =
          CclConfig.builder()
              .transport(Transport.UCX)
              .checkCalls(checks)
              .timeout(Duration.ofSeconds(30))
              .build();
      Communicator[] comms = RankHarness.createAll(2, config, WAIT);
      try {
        assertEquals("ucx", comms[0].ringTransport());
        RankHarness.run(2, WAIT, rank -> oneCheckedAllReduce(comms[rank], rank));
        List<Thread> proxies = new ArrayList<>();
        for (Thread t : Thread.getAllStackTraces().keySet()) {
          if (!before.contains(t) && t.getName().startsWith("sparkccl-proxy-r")) {
            proxies.add(t);
          }
        }
        assertEquals(4, proxies.size(), "proxy and socket watcher threads: " + proxies);
        Thread.sleep(300); // past every back-off: the proxies wait in their workers
        long[] ms = idleCpuMillis(mx, proxies);
        for (int i = 0; i < ms.length; i++) {
          System.out.printf(
              "idle UCX communicator, checkCalls=%s: %s used %d ms of CPU in the quietest %d ms%n",
              checks, proxies.get(i).getName(), ms[i], MEASURE_MS);
          assertTrue(
              ms[i] < MAX_SHARE * MEASURE_MS,
              proxies.get(i).getName()
                  + " used "
                  + ms[i]
                  + " ms of CPU in each of "
                  + WINDOWS
                  + " windows of "
                  + MEASURE_MS
                  + " ms idle");
        }
      } finally {
        RankHarness.closeAll(comms, WAIT);
      }
    }
  }

  /**
   * Each thread's CPU time in the quietest of {@link #WINDOWS} windows of {@link #MEASURE_MS}: a
   * thread that spins spins in every window, while a burst left from the tests before (seen once:
   * 20 ms in one window of a watcher that took 0-6 ms in eight later runs) falls in one.
   */
  private static long[] idleCpuMillis(ThreadMXBean mx, List<Thread> threads)
      throws InterruptedException {
    long[] least = new long[threads.size()];
    Arrays.fill(least, Long.MAX_VALUE);
    for (int w = 0; w < WINDOWS; w++) {
      long[] start = new long[threads.size()];
      for (int i = 0; i < start.length; i++) {
        start[i] = mx.getThreadCpuTime(threads.get(i).getId());
      }
      Thread.sleep(MEASURE_MS);
      for (int i = 0; i < start.length; i++) {
        long ms = (mx.getThreadCpuTime(threads.get(i).getId()) - start[i]) / 1_000_000;
        least[i] = Math.min(least[i], ms);
      }
    }
    return least;
  }

  /** One allReduce (max of random values), so that the proxies have worked before they idle. */
  private static void oneCheckedAllReduce(Communicator comm, int rank) {
    float[][] values = new float[2][];
    for (int r = 0; r < 2; r++) {
      SplittableRandom random = new SplittableRandom(100 + r);
      values[r] = new float[] {(float) random.nextGaussian(), (float) random.nextGaussian()};
    }
    float[] max = {Math.max(values[0][0], values[1][0]), Math.max(values[0][1], values[1][1])};
    try (DeviceBuffer buf = HostDevice.INSTANCE.allocate(8)) {
      buf.copyFromHost(values[rank], 0);
      comm.allReduce(buf, buf, 2, DataType.FLOAT32, ReduceOp.MAX);
      float[] got = new float[2];
      buf.copyToHost(0, got);
      assertArrayEquals(max, got, "rank " + rank);
    }
  }
}
