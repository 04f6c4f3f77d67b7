package org.sparkccl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.sparkccl.bootstrap.LocalBootstrap;
import org.sparkccl.config.CclConfig;
import org.sparkccl.config.Transport;
import org.sparkccl.device.DeviceBuffer;
import org.sparkccl.device.HostDevice;
import org.sparkccl.memory.DirectMemory;
import org.sparkccl.transport.ucx.UcxTransport;

/**
 * Communicators that are created, used, aborted and closed leave no threads and no memory. What the
 * engine holds is counted process-wide: its threads by name, the off-heap bytes {@link
 * DirectMemory} has handed out (FIFOs, UCX control blocks, host buffers) and the UCX objects {@link
 * UcxTransport} has created; each must come back to where it was before.
 */
@DisplayName("resources")
class LeakTest {
  private static final Duration WAIT = Duration.ofSeconds(60);

  /** How long threads may take to end, and counters to settle, once every close returned. */
  private static final Duration SETTLE = Duration.ofSeconds(10);

  /** The engine's threads, by the prefix of their names; the last one catches any other. */
  private static final List<String> PREFIXES =
      List.of(
          "sparkccl-proxy-r",
          "sparkccl-kernel-r",
          "sparkccl-socket-",
          "sparkccl-bootstrap-",
          "sparkccl-");

  /** What the engine holds in this JVM at one moment. */
  private record Resources(Set<Thread> threads, long offHeapBytes, long ucxObjects) {
    static Resources now() {
      Set<Thread> s = Collections.newSetFromMap(new IdentityHashMap<>());
      for (Thread t : Thread.getAllStackTraces().keySet()) {
        if (t.isAlive() && t.getName().startsWith("sparkccl-")) {
          s.add(t);
        }
      }
      return new Resources(s, DirectMemory.outstandingBytes(), UcxTransport.liveObjects());
    }

    /** Engine threads alive now that were not in {@code baseline}, by prefix. */
    Map<String, List<Thread>> newThreads(Resources baseline) {
      Map<String, List<Thread>> m = new TreeMap<>();
      for (Thread t : threads) {
        if (!baseline.threads.contains(t)) {
          m.computeIfAbsent(prefix(t), k -> new ArrayList<>()).add(t);
        }
      }
      return m;
    }

    boolean sameAs(Resources baseline) {
      return newThreads(baseline).isEmpty()
          && offHeapBytes == baseline.offHeapBytes
          && ucxObjects == baseline.ucxObjects;
    }
  }

  private static String prefix(Thread t) {
    return PREFIXES.stream().filter(p -> t.getName().startsWith(p)).findFirst().orElseThrow();
  }

  private static int count(Map<String, List<Thread>> byPrefix, String prefix) {
    return byPrefix.getOrDefault(prefix, List.of()).size();
  }

  private static String describe(Map<String, List<Thread>> byPrefix) {
    return byPrefix.entrySet().stream()
        .map(
            e ->
                e.getKey()
                    + "*: "
                    + e.getValue().size()
                    + " "
                    + e.getValue().stream()
                        .collect(
                            Collectors.groupingBy(
                                t -> t.getName() + " (" + t.getState() + ")",
                                TreeMap::new,
                                Collectors.counting())))
        .collect(Collectors.joining("; "));
  }

  /**
   * Waits, at most {@link #SETTLE}, for the engine's threads and counters to be back at {@code
   * baseline}; then asserts each. A thread told to stop may still be leaving its loop when close
   * returns; one still alive after this wait is a leak, not a slow exit.
   */
  private static void assertBackTo(Resources baseline, String what) throws InterruptedException {
    long end = System.nanoTime() + SETTLE.toNanos();
    Resources now = Resources.now();
    while (!now.sameAs(baseline) && System.nanoTime() < end) {
      Thread.sleep(20);
      now = Resources.now();
    }
    Map<String, List<Thread>> left = now.newThreads(baseline);
    assertTrue(
        left.isEmpty(),
        what
            + ": engine threads still alive "
            + SETTLE.toSeconds()
            + " s later: "
            + describe(left));
    assertEquals(
        baseline.offHeapBytes,
        now.offHeapBytes,
        what + ": off-heap bytes outstanding after every communicator and buffer was closed");
    assertEquals(
        baseline.ucxObjects,
        now.ucxObjects,
        what + ": UCX contexts, workers, endpoints, registrations or remote keys left");
  }

  /**
   * While {@code n} communicators of {@code config} are open, the counters must see them: otherwise
   * a renamed thread or memory allocated elsewhere would let the leak checks pass without looking
   * at anything.
   */
  private static void assertCounted(
      Resources baseline, CclConfig config, int n, boolean socketHelpers, String what) {
    Resources now = Resources.now();
    Map<String, List<Thread>> fresh = now.newThreads(baseline);
    String threads = what + ": engine threads while open: " + describe(fresh);
    assertTrue(count(fresh, "sparkccl-proxy-r") >= n, threads);
    assertTrue(count(fresh, "sparkccl-kernel-r") >= n * config.nChannels(), threads);
    if (socketHelpers) {
      assertTrue(count(fresh, "sparkccl-socket-") >= n, threads);
    }
    long fifoBytes = 2L * n * config.nChannels() * config.buffSize();
    assertTrue(
        now.offHeapBytes - baseline.offHeapBytes >= fifoBytes,
        what
            + ": off-heap bytes while open grew by "
            + (now.offHeapBytes - baseline.offHeapBytes)
            + ", less than the "
            + fifoBytes
            + " of the ring FIFOs");
    if (config.transport() == Transport.UCX) {
      assertTrue(now.ucxObjects > baseline.ucxObjects, what + ": no UCX objects while open");
    }
  }

  @Test
  @DisplayName(
      "30 communicators of 3 ranks, some aborted mid-collective, leave no threads, off-heap"
          + " memory or UCX objects")
  void createUseAbortAndCloseLeavesNothingBehind() throws InterruptedException {
    Resources before = Resources.now();
    int n = 3;
    int iterations = 30;
    for (int it = 0; it < iterations; it++) {
      boolean helpers = it % 3 == 1;
      boolean abortMidway = it % 5 == 4;
      CclConfig config =
          TestConfig.builder()
              .buffSize(helpers ? 512 << 10 : 64 << 10) // 64K slots: the helpers carry data
              .nChannels(1 + it % 3)
              .socketThreads(helpers ? 2 : 0)
              .socketsPerThread(helpers ? 2 : 1)
              .timeout(Duration.ofSeconds(10))
              .build();
      String what = "iteration " + it + " (" + config + (abortMidway ? ", aborted" : "") + ")";
      LocalBootstrap.Group group = LocalBootstrap.group(n);
      // every rank connected before any starts sending: early senders are AllReduceTest's topic
      CyclicBarrier connected = new CyclicBarrier(n);
      // and none closes before rank 0 has counted what the open communicators hold
      CyclicBarrier counted = new CyclicBarrier(n);
      int iteration = it;
      Throwable[] errors =
          RankHarness.runCollect(
              n,
              WAIT,
              rank -> {
                // buffers outlive the communicator: its kernels stop before they are freed
                try (DeviceBuffer a = HostDevice.INSTANCE.allocate(4L << 20);
                    DeviceBuffer b = HostDevice.INSTANCE.allocate(4L << 20);
                    Communicator comm = Communicator.create(group.rank(rank), config)) {
                  connected.await(30, TimeUnit.SECONDS);
                  try {
                    if (rank == 0) {
                      assertCounted(
                          before,
                          comm.config(),
                          n,
                          helpers && comm.ringTransport().equals("socket"),
                          what);
                    }
                  } finally {
                    counted.await(30, TimeUnit.SECONDS);
                  }
                  if (abortMidway) {
                    runAndAbort(comm, rank, a);
                  } else {
                    runAndCheck(comm, rank, n, iteration, a, b);
                  }
                }
              });
      RankHarness.assertNoErrors(errors, what);
    }
    assertBackTo(before, iterations + " communicators closed");
  }

  /** One allReduce of {@code count} int64 sums, checked against every rank's regenerated input. */
  private static void runAndCheck(
      Communicator comm, int rank, int n, int iteration, DeviceBuffer send, DeviceBuffer recv) {
    int count = 20_000 + 77 * iteration;
    DataType t = DataType.INT64;
    ByteBuffer[] inputs = new ByteBuffer[n];
    for (int r = 0; r < n; r++) {
      inputs[r] = Reference.heap(count * 8);
      Reference.fill(inputs[r], count, t, new SplittableRandom(iteration * 100L + r), false);
    }
    send.copyFromHost(inputs[rank].duplicate().order(ByteOrder.nativeOrder()), 0);
    comm.allReduce(send, recv, count, t, ReduceOp.SUM);
    ByteBuffer got = Reference.heap(count * 8);
    recv.copyToHost(0, got);
    String m = Reference.allReduce(inputs, count, t, ReduceOp.SUM).mismatches(got);
    assertNull(m, "rank " + rank + ": " + m);
  }

  /** Starts a large allReduce; rank 1 aborts right away. Every rank must end, in any way. */
  private static void runAndAbort(Communicator comm, int rank, DeviceBuffer buf) {
    int count = 1 << 20;
    CompletableFuture<Void> f;
    try {
      f = comm.allReduceAsync(buf, buf, count, DataType.FLOAT32, ReduceOp.SUM);
    } catch (CclAbortedException e) {
      // rank 1's abort notice can reach this rank before it even launches: also a clean end
      assertTrue(rank != 1, "the aborting rank launched before aborting, yet: " + e);
      return;
    }
    if (rank == 1) {
      comm.abort();
    }
    Throwable e = RankHarness.await(f, Duration.ofSeconds(30), "rank " + rank);
    assertTrue(
        e == null || e instanceof CclException,
        "rank " + rank + " ended with " + e + "; expected success or a CclException");
    if (rank == 1) {
      assertTrue(e instanceof CclException, "the aborting rank's own collective must fail");
    }
  }

  @Test
  @DisplayName("closing a communicator right after a collective returns does not wait or leak")
  void closeRightAfterTheCollectiveIsQuick() throws InterruptedException {
    Resources before = Resources.now();
    for (int it = 0; it < 5; it++) {
      Communicator[] comms =
          RankHarness.createAll(
              2, TestConfig.builder().buffSize(64 << 10).nChannels(2).build(), WAIT);
      assertNull(
          RankHarness.allReduceAndCheck(
              comms, 70_001, DataType.FLOAT64, ReduceOp.SUM, it % 2 == 0, it, WAIT));
      long t0 = System.nanoTime();
      RankHarness.closeAll(comms, WAIT);
      long ms = (System.nanoTime() - t0) / 1_000_000;
      assertTrue(ms < 5000, "close took " + ms + " ms");
    }
    assertBackTo(before, "5 communicators closed right after their collective");
  }

  @Test
  @DisplayName(
      "a closed communicator's failed collectives release their buffers: their memory, the"
          + " communicator's threads and memory are all gone")
  void abortedCollectivesReleaseTheirBuffers() throws InterruptedException {
    Resources before = Resources.now();
    Communicator[] comms =
        RankHarness.createAll(
            3,
            TestConfig.builder().buffSize(64 << 10).timeout(Duration.ofSeconds(30)).build(),
            WAIT);
    List<DeviceBuffer> bufs = new ArrayList<>();
    try {
      CompletableFuture<?>[] f = new CompletableFuture<?>[2];
      for (int r = 0; r < 2; r++) { // rank 2 never calls
        DeviceBuffer b = HostDevice.INSTANCE.allocate(4 * 100_000);
        bufs.add(b);
        f[r] = comms[r].allReduceAsync(b, b, 100_000, DataType.FLOAT32, ReduceOp.SUM);
      }
      comms[0].abort();
      for (int r = 0; r < 2; r++) {
        Throwable e = RankHarness.await(f[r], Duration.ofSeconds(10), "rank " + r);
        assertTrue(e instanceof CclException, "rank " + r + ": " + e);
      }
    } finally {
      RankHarness.closeQuietly(comms);
    }
    for (DeviceBuffer b : bufs) {
      b.close(); // frees at once, or when a failed collective still holding it lets go
      assertTrue(b.isClosed());
    }
    // the failed collectives completed, so nothing may still hold the buffers' memory
    assertBackTo(before, "aborted communicators and their buffers closed");
  }
}
