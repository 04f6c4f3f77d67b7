package org.sparkccl;

import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.LongSupplier;
import org.sparkccl.config.CclConfig;
import org.sparkccl.device.DeviceBuffer;
import org.sparkccl.memory.DirectMemory;

/**
 * Many communicators of 2 thread ranks in a row, each created, used and closed one of three ways (a
 * checked allReduce; an allReduce aborted while its peer never calls; one that times out), with
 * what the process holds counted before and after: threads, open file descriptors, off-heap bytes
 * and, where a probe is given, device memory in use. {@link SoakTest} runs it on host memory and
 * {@link GpuSoakMain} on a GPU.
 */
final class SoakRun {
  private static final Duration WAIT = Duration.ofSeconds(60);
  private static final Duration SHORT_TIMEOUT = Duration.ofMillis(300);

  /**
   * What the process holds at one moment. Threads are kept by id, not counted: a thread that an
   * earlier test in this JVM left winding down may end during the soak, which is not a leak.
   */
  record Counters(Set<Long> threads, int fds, long offHeapBytes, long deviceBytes) {
    static Counters now(LongSupplier deviceBytes) {
      String[] fds = new File("/proc/self/fd").list();
      Set<Long> ids = new HashSet<>();
      for (long id : ManagementFactory.getThreadMXBean().getAllThreadIds()) {
        ids.add(id);
      }
      return new Counters(
          ids,
          fds == null ? -1 : fds.length,
          DirectMemory.outstandingBytes(),
          deviceBytes.getAsLong());
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

    /** Nothing more than {@code before} holds: no new thread or descriptor, the same memory. */
    boolean backTo(Counters before) {
      return newThreads(before).isEmpty()
          && fds <= before.fds
          && offHeapBytes == before.offHeapBytes
          && deviceBytes == before.deviceBytes;
    }

    @Override
    public String toString() {
      return "threads="
          + threads.size()
          + ", fds="
          + fds
          + ", offHeapBytes="
          + offHeapBytes
          + ", deviceBytes="
          + deviceBytes;
    }
  }

  /** The counters before and after, and how many communicators ended each way. */
  record Result(Counters before, Counters after, int[] kinds, long[] meanMillis, long millis) {
    @Override
    public String toString() {
      return String.format(
          Locale.ROOT,
          "%d communicators (%d normal, %d aborted, %d timed out) in %d ms (mean ms per kind: %s);"
              + " before %s, after %s",
          kinds[0] + kinds[1] + kinds[2],
          kinds[0],
          kinds[1],
          kinds[2],
          millis,
          Arrays.toString(meanMillis),
          before,
          after);
    }
  }

  private final String name;
  private final CclConfig base;
  private final LongSupplier deviceBytes;

  /**
   * @param base the transport and device of every communicator (size and timeout vary)
   * @param deviceBytes device memory in use now, or a constant where there is no device to watch
   */
  SoakRun(String name, CclConfig base, LongSupplier deviceBytes) {
    this.name = name;
    this.base = base;
    this.deviceBytes = deviceBytes;
  }

  Result run(int count) throws InterruptedException {
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
        System.out.println(
            name + ": " + (i + 1) + " communicators, now " + Counters.now(deviceBytes));
      }
    }
    long ms = (System.nanoTime() - t0) / 1_000_000;
    long[] mean = new long[3];
    for (int k = 0; k < 3; k++) {
      mean[k] = kindNanos[k] / Math.max(1, kinds[k]) / 1_000_000;
    }
    return new Result(before, settle(before), kinds, mean, ms);
  }

  /**
   * Waits at most 10 s for the counters to come back to {@code target} (or, with no target, to stay
   * unchanged for 200 ms); threads told to stop may still be leaving their loops.
   */
  private Counters settle(Counters target) throws InterruptedException {
    long end = System.nanoTime() + 10_000_000_000L;
    Counters now = Counters.now(deviceBytes);
    while (System.nanoTime() < end) {
      Thread.sleep(200);
      Counters next = Counters.now(deviceBytes);
      if (target == null ? next.equals(now) : next.backTo(target)) {
        return next;
      }
      now = next;
    }
    return now;
  }

  /** One communicator of 2 ranks, used and closed the way {@code i} picks; returns that way. */
  private int once(int i) {
    int kind = i % 3;
    CclConfig config =
        base.toBuilder()
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
    DeviceBuffer buf = comms[0].device().allocate(4L << 16);
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
