package org.sparkccl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.sparkccl.bootstrap.LocalBootstrap;
import org.sparkccl.config.CclConfig;
import org.sparkccl.device.DeviceBuffer;
import org.sparkccl.device.HostDevice;
import org.sparkccl.memory.DirectMemory;
import org.sparkccl.transport.ucx.UcxTransport;

/** Communicators that are created, used, aborted and closed leave no threads and no memory. */
@DisplayName("resources")
class LeakTest {
  private static final Duration WAIT = Duration.ofSeconds(60);

  private static Set<Thread> engineThreads() {
    Set<Thread> s = Collections.newSetFromMap(new IdentityHashMap<>());
    for (Thread t : Thread.getAllStackTraces().keySet()) {
      if (t.getName().startsWith("sparkccl-") && t.isAlive()) {
        s.add(t);
      }
    }
    return s;
  }

  private static String describe(Set<Thread> threads) {
    return threads.stream()
        .map(t -> t.getName() + " (" + t.getState() + ")")
        .sorted()
        .collect(Collectors.joining(", "));
  }

  @Test
  @DisplayName(
      "30 communicators of 3 ranks, some aborted mid-collective, leave no threads or"
          + " off-heap memory")
  void createUseAbortAndCloseLeavesNothingBehind() throws InterruptedException {
    Set<Thread> before = engineThreads();
    long bytesBefore = DirectMemory.outstandingBytes();
    long ucxBefore = UcxTransport.liveObjects();
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
                  if (abortMidway) {
                    runAndAbort(comm, rank, a);
                  } else {
                    runAndCheck(comm, rank, n, iteration, a, b);
                  }
                }
              });
      RankHarness.assertNoErrors(errors, what);
    }
    long end = System.nanoTime() + 10_000_000_000L;
    Set<Thread> left = engineThreads();
    left.removeAll(before);
    while (!left.isEmpty() && System.nanoTime() < end) {
      Thread.sleep(20);
      left = engineThreads();
      left.removeAll(before);
    }
    assertTrue(left.isEmpty(), "engine threads still alive 10 s after close: " + describe(left));
    assertEquals(
        bytesBefore,
        DirectMemory.outstandingBytes(),
        "off-heap bytes outstanding after every communicator and buffer was closed");
    assertEquals(
        ucxBefore,
        UcxTransport.liveObjects(),
        "UCX contexts, workers, endpoints, registrations or remote keys left after close");
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
    send.copyFromHost(inputs[rank].duplicate(), 0);
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
  void closeRightAfterTheCollectiveIsQuick() {
    long bytesBefore = DirectMemory.outstandingBytes();
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
    assertEquals(bytesBefore, DirectMemory.outstandingBytes(), "off-heap bytes after close");
  }

  @Test
  @DisplayName("a closed communicator's failed collectives release their buffers")
  void abortedCollectivesReleaseTheirBuffers() {
    Communicator[] comms =
        RankHarness.createAll(
            3,
            TestConfig.builder().buffSize(64 << 10).timeout(Duration.ofSeconds(30)).build(),
            WAIT);
    List<DeviceBuffer> bufs = new java.util.ArrayList<>();
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
  }
}
