package org.sparkccl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.sparkccl.config.CclConfig;
import org.sparkccl.config.Transport;
import org.sparkccl.device.DeviceBuffer;
import org.sparkccl.device.HostDevice;
import org.sparkccl.memory.DirectMemory;

/**
 * Many communicators in a row, each created, used and closed one of three ways (a checked
 * allReduce; an allReduce aborted while its peer never calls; one that times out): the process's
 * threads, open file descriptors and off-heap bytes must come back to where they were. 300 in the
 * test suite over sockets; {@code bench/faults.sh} runs 1,000, and 300 over UCX ({@code
 * -Dsparkccl.soak.count}, {@code -Dsparkccl.soak.transport}).
 */
@DisplayName("soak")
class SoakTest {
  private static final Duration WAIT = Duration.ofSeconds(60);
  private static final Duration SHORT_TIMEOUT = Duration.ofMillis(300);

  /**
   * What the process holds at one moment. Threads are kept by id, not counted: a thread that an
   * earlier test in this JVM left winding down may end during the soak, which is not a leak.
   */
  private record Counters(Set<Long> threads, int fds, long offHeapBytes) {
    static Counters now() {
      String[] fds = new File("/proc/self/fd").list();
      Set<Long> ids = new HashSet<>();
      for (long id : ManagementFactory.getThreadMXBean().getAllThreadIds()) {
        ids.add(id);
      }
      return new Counters(ids, fds == null ? -1 : fds.length, DirectMemory.outstandingBytes());
    }

    /** Threads alive now that were not in {@code before}, with their names. */
    List<String> newThreads(Counters before) {
      List<String> out = new ArrayList<>();
      for (ThreadInfo t :
          ManagementFactory.getThreadMXBean()
              .getThreadInfo(threads.stream().mapToLong(Long::longValue).toArray())) {
        if (t != null && !before.threads.contains(t.getThreadId())) {
          out.add(t.getThreadName());
        }
      }
      return out;
    }

    /** Nothing more than {@code before} holds: no new thread or descriptor, the same off-heap. */
    boolean backTo(Counters before) {
      return newThreads(before).isEmpty()
          && fds <= before.fds
          && offHeapBytes == before.offHeapBytes;
    }

    @Override
    public String toString() {
      return "threads=" + threads.size() + ", fds=" + fds + ", offHeapBytes=" + offHeapBytes;
    }
  }

  @Test
  @DisplayName(
      "communicators created, used and closed (normal, aborted, timed out) give back every thread,"
          + " file descriptor and off-heap byte")
  void manyCommunicatorsLeaveNothingBehind() throws InterruptedException {
    int count = Integer.getInteger("sparkccl.soak.count", 300);
    for (int i = 0; i < 6; i++) { // the JVM opens its own files and threads on first use
      once(i);
    }
    Counters before = settle(null);
    int[] kinds = new int[3];
    long[] kindNanos = new long[3];
    long t0 = System.nanoTime();
    for (int i = 0; i < count; i++) {
      long t = System.nanoTime();
      int kind = once(i);
      kinds[kind]++;
      kindNanos[kind] += System.nanoTime() - t;
      if ((i + 1) % 100 == 0) {
        System.out.println("SoakTest: " + (i + 1) + " communicators, now " + Counters.now());
      }
    }
    long ms = (System.nanoTime() - t0) / 1_000_000;
    Counters after = settle(before);
    System.out.printf(
        "SoakTest: %d communicators (%d normal, %d aborted, %d timed out) in %d ms (mean ms per"
            + " kind: %s); before %s, after %s%n",
        count,
        kinds[0],
        kinds[1],
        kinds[2],
        ms,
        java.util.Arrays.toString(
            new long[] {
              kindNanos[0] / Math.max(1, kinds[0]) / 1_000_000,
              kindNanos[1] / Math.max(1, kinds[1]) / 1_000_000,
              kindNanos[2] / Math.max(1, kinds[2]) / 1_000_000
            }),
        before,
        after);
    assertEquals(before.offHeapBytes(), after.offHeapBytes(), "off-heap bytes left");
    assertTrue(
        after.fds() <= before.fds(),
        "file descriptors left open: " + before.fds() + " before, " + after.fds() + " after");
    assertEquals(List.of(), after.newThreads(before), "threads left running");
  }

  /**
   * Waits at most 10 s for the counters to come back to {@code target} (or, with no target, to stay
   * unchanged for 200 ms); threads told to stop may still be leaving their loops.
   */
  private static Counters settle(Counters target) throws InterruptedException {
    long end = System.nanoTime() + 10_000_000_000L;
    Counters now = Counters.now();
    while (System.nanoTime() < end) {
      Thread.sleep(200);
      Counters next = Counters.now();
      if (target == null ? next.equals(now) : next.backTo(target)) {
        return next;
      }
      now = next;
    }
    return now;
  }

  /** One communicator of 2 ranks, used and closed the way {@code i} picks; returns that way. */
  private static int once(int i) {
    int kind = i % 3;
    // sockets, whatever the run's transport: file descriptors are what they hold, and over UCX an
    // aborted or timed-out communicator takes about 1 s to close here (300 would take 4 minutes)
    CclConfig config =
        CclConfig.builder()
            .transport(
                Transport.valueOf(
                    System.getProperty("sparkccl.soak.transport", "socket")
                        .toUpperCase(Locale.ROOT)))
            .buffSize(64 << 10)
            .nChannels(1 + i % 2)
            .timeout(kind == 2 ? SHORT_TIMEOUT : WAIT)
            .build();
    Communicator[] comms = RankHarness.createAll(2, config, WAIT);
    if (kind == 0) {
      RankHarness.closingAfter(
          comms,
          WAIT,
          () ->
              assertNull(
                  RankHarness.allReduceAndCheck(
                      comms, 1000 + 37 * i, DataType.FLOAT32, ReduceOp.SUM, i % 2 == 0, i, WAIT)));
      return kind;
    }
    DeviceBuffer buf = HostDevice.INSTANCE.allocate(4L << 16);
    try {
      // rank 1 never calls: rank 0's allReduce ends by abort or by its timeout, never by a hang
      CompletableFuture<Void> f =
          comms[0].allReduceAsync(buf, buf, 1 << 16, DataType.FLOAT32, ReduceOp.SUM);
      if (kind == 1) {
        comms[0].abort();
      }
      Throwable e = RankHarness.await(f, SHORT_TIMEOUT.plusSeconds(5), "iteration " + i);
      assertTrue(e instanceof CclException, "iteration " + i + ": " + e);
      assertTrue(kind == 1 || e.getMessage().contains("timeout"), "iteration " + i + ": " + e);
    } finally {
      RankHarness.closeAll(comms, WAIT);
      buf.close();
    }
    return kind;
  }
}
