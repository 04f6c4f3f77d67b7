package org.sparkccl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.sparkccl.bootstrap.LocalBootstrap;
import org.sparkccl.config.Algorithm;
import org.sparkccl.config.CclConfig;
import org.sparkccl.config.IdleMode;
import org.sparkccl.config.Key;
import org.sparkccl.config.LogLevel;
import org.sparkccl.config.Transport;
import org.sparkccl.device.DeviceBuffer;
import org.sparkccl.device.HostDevice;

/** Bad calls, bad configuration, and failures: abort, a rank that never calls, a timeout. */
@DisplayName("errors")
class ErrorsTest {
  private static final Duration WAIT = Duration.ofSeconds(60);

  private static CclConfig config(Duration timeout) {
    return config(timeout, Algorithm.AUTO);
  }

  /** {@code c}, with every ring collective's bytes on the proxy thread where {@code proxyMoves}. */
  private static CclConfig proxyMoves(CclConfig c, boolean proxyMoves) {
    return c.toBuilder().ringProxyMinBytes(proxyMoves ? 1 : 0).build();
  }

  private static CclConfig config(Duration timeout, Algorithm algo) {
    return TestConfig.builder().algo(algo).buffSize(64 << 10).nChannels(2).timeout(timeout).build();
  }

  private static IllegalArgumentException expectIae(Executable call, String... words) {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, call);
    assertNotNull(e.getMessage(), "the exception has no message");
    for (String w : words) {
      assertTrue(
          e.getMessage().contains(w),
          "message \"" + e.getMessage() + "\" should contain \"" + w + "\"");
    }
    return e;
  }

  private static boolean mentionsTimeout(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof CclTimeoutException
          || (t.getMessage() != null
              && t.getMessage().toLowerCase(java.util.Locale.ROOT).contains("timeout"))) {
        return true;
      }
    }
    return false;
  }

  // ------------------------------------------------------------------ argument checks

  @Test
  @DisplayName("bad allReduce arguments are rejected on every rank and leave the ranks usable")
  void badArgumentsAreRejectedWithAMessageThatSaysWhatIsExpected() {
    int n = 2;
    Communicator[] comms = RankHarness.createAll(n, config(Duration.ofSeconds(30)), WAIT);
    DeviceBuffer buf = HostDevice.INSTANCE.allocate(400);
    DeviceBuffer closed = HostDevice.INSTANCE.allocate(400);
    closed.close();
    boolean ok = false;
    try {
      for (Communicator c : comms) {
        DataType f32 = DataType.FLOAT32;
        ReduceOp sum = ReduceOp.SUM;
        expectIae(() -> c.allReduceAsync(null, buf, 10, f32, sum), "send", "null", "expected");
        expectIae(() -> c.allReduceAsync(buf, null, 10, f32, sum), "recv", "null", "expected");
        expectIae(() -> c.allReduceAsync(closed, buf, 10, f32, sum), "send", "closed", "expected");
        expectIae(() -> c.allReduceAsync(buf, closed, 10, f32, sum), "recv", "closed", "expected");
        expectIae(() -> c.allReduceAsync(buf, buf, -1, f32, sum), "count=-1", "negative", ">= 0");
        // 101 floats need 404 bytes; the buffer holds 400
        expectIae(() -> c.allReduceAsync(buf, buf, 101, f32, sum), "count=101", "404", "400");
        expectIae(
            () -> c.allReduceAsync(buf, buf, 51, DataType.FLOAT64, sum), "count=51", "408", "400");
        for (DataType t : DataType.values()) {
          if (!t.isFloatingPoint()) {
            expectIae(
                () -> c.allReduceAsync(buf, buf, 10, t, ReduceOp.AVG),
                "avg",
                t.wireName(),
                "floating-point");
          }
        }
        assertFalse(c.isAborted(), "a rejected call must not abort rank " + c.rank());
      }
      // the rejected calls were not counted as collectives: a real one still lines up and is right
      assertNull(
          RankHarness.allReduceAndCheck(comms, 1003, DataType.INT32, ReduceOp.SUM, false, 7, WAIT));
      ok = true;
    } finally {
      RankHarness.closeBuffer(buf);
      if (ok) {
        RankHarness.closeAll(comms, WAIT);
      } else {
        RankHarness.closeQuietly(comms);
      }
    }
  }

  @Test
  @DisplayName("a call after close throws IllegalStateException")
  void callAfterCloseIsRejected() {
    Communicator[] comms = RankHarness.createAll(1, config(Duration.ofSeconds(5)), WAIT);
    RankHarness.closeAll(comms, WAIT);
    try (DeviceBuffer b = HostDevice.INSTANCE.allocate(64)) {
      IllegalStateException e =
          assertThrows(
              IllegalStateException.class,
              () -> comms[0].allReduceAsync(b, b, 4, DataType.FLOAT32, ReduceOp.SUM));
      assertTrue(e.getMessage().contains("closed"), e.getMessage());
    }
  }

  // ------------------------------------------------------------------ abort and failures

  /** Milliseconds from the abort to a rank's failure; fails if the rank gave up before it. */
  private static long afterAbortMs(long failedAt, long abortedAt, int rank, Throwable error) {
    assertTrue(abortedAt != 0, "abort() was never called; rank " + rank + ": " + error);
    assertTrue(
        failedAt - abortedAt >= 0,
        "rank "
            + rank
            + " returned "
            + (abortedAt - failedAt) / 1_000_000
            + " ms before abort(), with "
            + error);
    return (failedAt - abortedAt) / 1_000_000;
  }

  @Test
  @DisplayName(
      "abort() from another thread fails a blocked allReduce promptly, and later calls at once")
  void abortFromAnotherThreadFailsABlockedCallPromptly() {
    int n = 3;
    Communicator[] comms = RankHarness.createAll(n, config(Duration.ofSeconds(60)), WAIT);
    CountDownLatch calling = new CountDownLatch(2);
    CountDownLatch finished = new CountDownLatch(1);
    AtomicLong abortedAt = new AtomicLong();
    long[] failedAt = new long[n];
    DeviceBuffer[] bufs = {
      HostDevice.INSTANCE.allocate(4 * 100_000), HostDevice.INSTANCE.allocate(4 * 100_000)
    };
    Throwable[] errors;
    try {
      errors =
          RankHarness.runCollect(
              n + 1,
              WAIT,
              r -> {
                if (r == n) { // the aborting thread
                  assertTrue(calling.await(30, TimeUnit.SECONDS), "ranks did not start");
                  Thread.sleep(300); // let ranks 0 and 1 block inside the collective
                  abortedAt.set(System.nanoTime());
                  comms[0].abort();
                  return;
                }
                if (r == 2) { // never calls
                  assertTrue(finished.await(30, TimeUnit.SECONDS), "test did not finish");
                  return;
                }
                DeviceBuffer b = bufs[r];
                calling.countDown();
                try {
                  comms[r].allReduce(b, b, 100_000, DataType.FLOAT32, ReduceOp.SUM);
                } finally {
                  failedAt[r] = System.nanoTime();
                  if (r == 0) {
                    finished.countDown();
                  }
                }
              });
    } finally {
      finished.countDown();
      // communicators first: their kernels must stop before the buffers are freed
      RankHarness.closeQuietly(comms);
      for (DeviceBuffer b : bufs) {
        RankHarness.closeBuffer(b);
      }
    }
    for (int r = 0; r < 2; r++) {
      long failedAfterAbortMs = afterAbortMs(failedAt[r], abortedAt.get(), r, errors[r]);
      assertTrue(
          errors[r] instanceof CclException,
          "rank " + r + " should fail with a CclException, got " + errors[r]);
      assertTrue(
          failedAfterAbortMs < 5000,
          "rank " + r + " failed " + failedAfterAbortMs + " ms after abort(); expected < 5 s");
    }
    assertTrue(comms[0].isAborted(), "isAborted() after abort()");
    assertNull(errors[n], "the aborting thread failed: " + errors[n]);
  }

  /**
   * A Spark task whose Python worker dies is aborted twice at once: by the task's failure listener
   * and by the worker's session, which then closes the communicator. The close must not release the
   * links before the first abort has told the peers, or a peer waits out its whole timeout.
   */
  @Test
  @DisplayName("a rank aborted from two threads while one of them closes it still tells its peers")
  void abortRacingCloseStillTellsThePeers() throws Exception {
    Duration timeout = Duration.ofSeconds(30);
    CclConfig cfg =
        TestConfig.builder().idle(IdleMode.SPIN).buffSize(64 << 10).timeout(timeout).build();
    for (int round = 0; round < 25; round++) {
      Communicator[] comms = RankHarness.createAll(2, cfg, WAIT);
      DeviceBuffer b = HostDevice.INSTANCE.allocate(4 * 1024);
      try {
        assertNull(
            RankHarness.allReduceAndCheck(
                comms, 1024, DataType.FLOAT32, ReduceOp.SUM, true, round, WAIT));
        CompletableFuture<Void> waiting =
            comms[0].allReduceAsync(b, b, 1024, DataType.FLOAT32, ReduceOp.SUM);
        Thread listener = new Thread(comms[1]::abort, "failure-listener");
        Thread session =
            new Thread(
                () -> {
                  comms[1].abort();
                  comms[1].close();
                },
                "worker-session");
        long t0 = System.nanoTime();
        listener.start();
        session.start();
        Throwable e = RankHarness.await(waiting, timeout.dividedBy(2), "rank 0, round " + round);
        long ms = (System.nanoTime() - t0) / 1_000_000;
        assertTrue(e instanceof CclException, "round " + round + ": rank 0 got " + e);
        assertTrue(
            ms < 5000,
            "round " + round + ": rank 0 heard of the abort after " + ms + " ms; expected < 5 s");
        listener.join(WAIT.toMillis());
        session.join(WAIT.toMillis());
      } finally {
        RankHarness.closeQuietly(comms);
        RankHarness.closeBuffer(b);
      }
    }
  }

  @Test
  @DisplayName("every call after abort() throws CclAbortedException at once")
  void callsAfterAbortThrowImmediately() {
    Communicator[] comms = RankHarness.createAll(2, config(Duration.ofSeconds(60)), WAIT);
    try (DeviceBuffer b = HostDevice.INSTANCE.allocate(4 * 1000)) {
      comms[1].abort();
      comms[1].abort(); // idempotent
      assertTrue(comms[1].isAborted());
      for (int i = 0; i < 3; i++) {
        long t0 = System.nanoTime();
        CclAbortedException e =
            assertThrows(
                CclAbortedException.class,
                () -> comms[1].allReduceAsync(b, b, 1000, DataType.FLOAT32, ReduceOp.SUM));
        long ms = (System.nanoTime() - t0) / 1_000_000;
        assertTrue(ms < 1000, "a call on an aborted communicator took " + ms + " ms");
        assertTrue(e.getMessage().contains("rank 1"), "message should name the rank: " + e);
        assertTrue(e.getMessage().contains("abort"), "message should say aborted: " + e);
      }
    } finally {
      RankHarness.closeQuietly(comms);
    }
  }

  @ParameterizedTest(name = "ring bytes on the proxy thread: {0}")
  @ValueSource(booleans = {false, true})
  @DisplayName("a rank that never calls makes the others fail with a timeout, not hang")
  void rankThatNeverCallsLeadsToATimeout(boolean proxyMoves) {
    int n = 3;
    Duration timeout = Duration.ofSeconds(2);
    Communicator[] comms = RankHarness.createAll(n, proxyMoves(config(timeout), proxyMoves), WAIT);
    DeviceBuffer[] bufs = new DeviceBuffer[n];
    try {
      long t0 = System.nanoTime();
      CompletableFuture<?>[] f = new CompletableFuture<?>[2];
      for (int r = 0; r < 2; r++) {
        bufs[r] = HostDevice.INSTANCE.allocate(4 * 50_000);
        f[r] = comms[r].allReduceAsync(bufs[r], bufs[r], 50_000, DataType.FLOAT32, ReduceOp.SUM);
      }
      Throwable[] e = new Throwable[2];
      long[] ms = new long[2];
      for (int r = 0; r < 2; r++) {
        e[r] = RankHarness.await(f[r], timeout.plusSeconds(15), "rank " + r);
        ms[r] = (System.nanoTime() - t0) / 1_000_000;
      }
      boolean anyTimeout = false;
      for (int r = 0; r < 2; r++) {
        assertTrue(
            e[r] instanceof CclException, "rank " + r + ": expected a CclException, got " + e[r]);
        assertTrue(
            ms[r] <= timeout.toMillis() + 8000,
            "rank " + r + " failed after " + ms[r] + " ms; expected about the 2 s timeout");
        assertTrue(
            ms[r] >= timeout.toMillis() * 9 / 10,
            "rank "
                + r
                + " failed after "
                + ms[r]
                + " ms, before the 2 s timeout ran out: "
                + e[r]);
        assertTrue(e[r].getMessage().contains("rank "), "message should name a rank: " + e[r]);
        assertTrue(e[r].getMessage().contains("allReduce"), "message should name the op: " + e[r]);
        anyTimeout |= mentionsTimeout(e[r]);
      }
      assertTrue(
          anyTimeout,
          "no rank reported a timeout (CclTimeoutException or a message mentioning it): "
              + e[0]
              + " / "
              + e[1]);
    } finally {
      RankHarness.closeQuietly(comms);
      for (DeviceBuffer b : bufs) {
        RankHarness.closeBuffer(b);
      }
    }
  }

  @ParameterizedTest(name = "algo={0}")
  @EnumSource(
      value = Algorithm.class,
      names = {"TREE", "RD", "RH"})
  @DisplayName(
      "on trees, recursive doubling and Rabenseifner, a rank that never calls makes the others"
          + " fail in time, naming the rank waited for")
  void rankThatNeverCallsTimesOutThePointToPointAlgorithms(Algorithm algo) {
    int n = 4;
    int absent = 3;
    Duration timeout = Duration.ofSeconds(2);
    CclConfig config =
        TestConfig.builder()
            .transport(Transport.SOCKET)
            .algo(algo)
            .buffSize(64 << 10)
            .timeout(timeout)
            .build();
    Communicator[] comms = RankHarness.createAll(n, config, WAIT);
    DeviceBuffer[] bufs = new DeviceBuffer[n];
    try {
      long t0 = System.nanoTime();
      CompletableFuture<?>[] f = new CompletableFuture<?>[absent];
      for (int r = 0; r < absent; r++) {
        bufs[r] = HostDevice.INSTANCE.allocate(4 * 64);
        f[r] = comms[r].allReduceAsync(bufs[r], bufs[r], 64, DataType.FLOAT32, ReduceOp.SUM);
      }
      boolean anyTimeout = false;
      for (int r = 0; r < absent; r++) {
        Throwable e = RankHarness.await(f[r], timeout.plusSeconds(15), "rank " + r);
        long ms = (System.nanoTime() - t0) / 1_000_000;
        assertTrue(
            e instanceof CclException,
            algo + ", rank " + r + ": expected a CclException, got " + e);
        assertTrue(ms <= timeout.toMillis() + 8000, algo + ", rank " + r + " failed after " + ms);
        assertTrue(
            e.getMessage().contains("allReduce #1") && e.getMessage().contains("rank "),
            algo + ", rank " + r + ": the message should name the call and a rank: " + e);
        // which rank's deadline runs out first varies: a kernel waiting on an edge, or a proxy
        anyTimeout |= mentionsTimeout(e);
      }
      assertTrue(anyTimeout, algo + ": no rank reported a timeout");
    } finally {
      RankHarness.closeQuietly(comms);
      for (DeviceBuffer b : bufs) {
        RankHarness.closeBuffer(b);
      }
    }
  }

  /**
   * 4 KiB by recursive doubling (forced) over point-to-point links, shared-memory lanes where the
   * run allows them; 4 MiB by the tuner's choice, the ring, its bytes moved by waiting kernels or
   * by the proxy thread alone ({@code ring.proxyMinBytes}).
   */
  @ParameterizedTest(name = "{0} floats, ring bytes on the proxy thread: {1}")
  @CsvSource({"1024, false", "1048576, false", "1048576, true"})
  @DisplayName(
      "a rank that aborts in the middle of a collective makes the other ranks fail, not hang")
  void rankThatAbortsMidCollectiveFailsTheOthers(int count, boolean proxyMoves) {
    int n = 3;
    boolean small = count < 1 << 20;
    Duration timeout = Duration.ofSeconds(20);
    CclConfig config = config(timeout, small ? Algorithm.RD : Algorithm.AUTO);
    Communicator[] comms = RankHarness.createAll(n, proxyMoves(config, proxyMoves), WAIT);
    AtomicInteger[] done = {new AtomicInteger(), new AtomicInteger(), new AtomicInteger()};
    AtomicLong abortedAt = new AtomicLong();
    long[] failedAt = new long[n];
    DeviceBuffer[] bufs = new DeviceBuffer[n];
    for (int r = 0; r < n; r++) {
      bufs[r] = HostDevice.INSTANCE.allocate(4L * count);
    }
    Throwable[] errors;
    try {
      errors =
          RankHarness.runCollect(
              n + 1,
              WAIT,
              r -> {
                if (r == n) { // aborts rank 1 once every rank has finished one collective
                  long end = System.nanoTime() + 30_000_000_000L;
                  while (done[0].get() < 1 || done[1].get() < 1 || done[2].get() < 1) {
                    assertTrue(System.nanoTime() < end, "ranks made no progress");
                    Thread.sleep(1);
                  }
                  abortedAt.set(System.nanoTime());
                  comms[1].abort();
                  return;
                }
                DeviceBuffer b = bufs[r];
                try {
                  for (int i = 0; i < 1000; i++) {
                    comms[r].allReduce(b, b, count, DataType.FLOAT32, ReduceOp.MAX);
                    done[r].incrementAndGet();
                  }
                } finally {
                  failedAt[r] = System.nanoTime();
                }
              });
    } finally {
      RankHarness.closeQuietly(comms); // before the buffers: kernels must stop first
      for (DeviceBuffer b : bufs) {
        RankHarness.closeBuffer(b);
      }
    }
    assertNull(errors[n], "the aborting thread failed: " + errors[n]);
    for (int r = 0; r < n; r++) {
      long failedAfterAbortMs = afterAbortMs(failedAt[r], abortedAt.get(), r, errors[r]);
      assertTrue(
          errors[r] instanceof CclException,
          "rank " + r + " should fail with a CclException, got " + errors[r]);
      assertTrue(
          failedAfterAbortMs < timeout.toMillis() / 2,
          "rank "
              + r
              + " failed "
              + failedAfterAbortMs
              + " ms after rank 1 aborted; expected"
              + " well within the "
              + timeout.toSeconds()
              + " s timeout: "
              + errors[r]);
      assertTrue(errors[r].getMessage().contains("rank "), "message names a rank: " + errors[r]);
    }
    // a small call's rank may learn of the abort between two calls: its next call then fails at
    // once, before it has an operation to name
    if (!small) {
      for (int r : new int[] {0, 2}) {
        assertTrue(
            errors[r].getMessage().contains("allReduce"),
            "rank " + r + "'s message should name the operation: " + errors[r]);
      }
    }
  }

  // ------------------------------------------------------------------ configuration

  @Test
  @DisplayName("invalid configuration values are rejected with a message naming the key")
  void invalidConfigValuesNameTheKey() {
    Map<String, Consumer<CclConfig.Builder>> bad =
        Map.of(
            "buffSize", b -> b.buffSize(4096),
            "buffSize ", b -> b.buffSize((64 << 10) + 1),
            "nChannels", b -> b.nChannels(0),
            "nChannels ", b -> b.nChannels(Key.MAX_CHANNELS + 1),
            "socket.nThreads", b -> b.socketThreads(17),
            "socket.nSocksPerThread", b -> b.socketThreads(16).socketsPerThread(5),
            "timeout", b -> b.timeout(Duration.ZERO),
            "timeout ", b -> b.timeout(Duration.ofSeconds(-1)),
            "algo", b -> b.set(Key.ALGO, "bfs"),
            "debug", b -> b.set(Key.DEBUG, "LOUD"));
    for (Map.Entry<String, Consumer<CclConfig.Builder>> e : bad.entrySet()) {
      String key = e.getKey().trim();
      CclConfig.Builder b = CclConfig.builder();
      IllegalArgumentException x =
          assertThrows(
              IllegalArgumentException.class,
              () -> {
                e.getValue().accept(b);
                b.build();
              },
              key);
      assertTrue(
          x.getMessage().startsWith(key + "="),
          "message for a bad " + key + " should start with \"" + key + "=\": " + x.getMessage());
      assertTrue(x.getMessage().contains("expected"), "message says what is expected: " + x);
    }
    // the limits themselves are accepted
    CclConfig ok =
        CclConfig.builder()
            .buffSize(8 * 1024)
            .nChannels(Key.MAX_CHANNELS)
            .socketThreads(16)
            .socketsPerThread(4)
            .timeout(Duration.ofMillis(1))
            .set(Key.ALGO, "RING")
            .build();
    assertEquals(1024, ok.stepSize());
    assertEquals(Algorithm.RING, ok.algo());
  }

  @Test
  @DisplayName("fromMap parses sizes and durations with their suffixes")
  void fromMapParsesSuffixes() {
    CclConfig c =
        CclConfig.fromMap(
            Map.of(
                "buffSize",
                "4M",
                "nChannels",
                " 3 ",
                "timeout",
                "30s",
                "socket.nThreads",
                "2",
                "socket.nSocksPerThread",
                "4",
                "algo",
                "ring",
                "debug",
                "info"));
    assertEquals(4 << 20, c.buffSize());
    assertEquals(512 << 10, c.stepSize());
    assertEquals(3, c.nChannels());
    assertEquals(Duration.ofSeconds(30), c.timeout());
    assertEquals(2, c.socketThreads());
    assertEquals(4, c.socketsPerThread());
    assertEquals(8, c.socketCount());
    assertEquals(LogLevel.INFO, c.debug());

    assertEquals(512 << 10, CclConfig.fromMap(Map.of("buffSize", "512K")).buffSize());
    assertEquals(1 << 30, CclConfig.fromMap(Map.of("buffSize", "1G")).buffSize());
    assertEquals(65536, CclConfig.fromMap(Map.of("buffSize", "65536")).buffSize());
    assertEquals(Duration.ofMillis(500), CclConfig.fromMap(Map.of("timeout", "500ms")).timeout());
    assertEquals(Duration.ofMinutes(2), CclConfig.fromMap(Map.of("timeout", "2m")).timeout());
    assertEquals(Duration.ofSeconds(45), CclConfig.fromMap(Map.of("timeout", "45")).timeout());
    assertEquals(Duration.ofMillis(1500), CclConfig.fromMap(Map.of("timeout", "1.5s")).timeout());

    CclConfig defaults = CclConfig.fromMap(Map.of());
    assertEquals(4 << 20, defaults.buffSize());
    assertEquals(CclConfig.CHANNELS_AUTO, defaults.nChannels());
    assertEquals(
        CclConfig.CHANNELS_AUTO, CclConfig.fromMap(Map.of("nChannels", " AUTO ")).nChannels());
    assertEquals("auto", defaults.asMap().get("nChannels"));
    assertEquals("3", CclConfig.fromMap(Map.of("nChannels", "3")).asMap().get("nChannels"));
    assertEquals(Duration.ofMinutes(2), defaults.timeout());

    expectIae(() -> CclConfig.fromMap(Map.of("buffSize", "4X")), "buffSize=4X", "expected");
    expectIae(() -> CclConfig.fromMap(Map.of("buffSize", "-4M")), "buffSize", "expected");
    expectIae(() -> CclConfig.fromMap(Map.of("timeout", "soon")), "timeout=soon", "expected");
    expectIae(() -> CclConfig.fromMap(Map.of("nChannels", "two")), "nChannels=two");
    expectIae(() -> CclConfig.fromMap(Map.of("buffSize", "4G")), "buffSize");
    assertEquals("SPARKCCL_SOCKET_NTHREADS", Key.SOCKET_N_THREADS.environmentVariable());
    assertEquals("spark.ccl.socket.nThreads", Key.SOCKET_N_THREADS.sparkConf());
    assertEquals("sparkccl.socket.nThreads", Key.SOCKET_N_THREADS.systemProperty());
  }

  @Test
  @DisplayName("unknown dtype and op names are rejected with the list of accepted names")
  void unknownNamesListTheAcceptedOnes() {
    IllegalArgumentException e = expectIae(() -> DataType.fromName("float33"), "float33");
    for (DataType t : DataType.values()) {
      assertTrue(e.getMessage().contains(t.wireName()), "message lists " + t + ": " + e);
    }
    IllegalArgumentException o = expectIae(() -> ReduceOp.fromName("median"), "median");
    for (ReduceOp op : ReduceOp.values()) {
      assertTrue(o.getMessage().contains(op.wireName()), "message lists " + op + ": " + o);
    }
    assertEquals(DataType.BFLOAT16, DataType.fromName(" BFloat16 "));
    assertEquals(ReduceOp.AVG, ReduceOp.fromName("AVG"));
    for (DataType t : DataType.values()) {
      assertEquals(t, DataType.fromName(t.wireName()));
    }
    assertEquals(
        List.of(1, 1, 4, 4, 8, 8, 2, 2, 4, 8),
        java.util.Arrays.stream(DataType.values()).map(DataType::size).toList(),
        "element sizes of int8, uint8, int32, uint32, int64, uint64, float16, bfloat16, float32,"
            + " float64");
  }

  @Test
  @DisplayName("a bootstrap group rejects a rank outside 0..n-1")
  void localBootstrapRejectsBadRanks() {
    LocalBootstrap.Group g = LocalBootstrap.group(2);
    expectIae(() -> g.rank(2), "rank=2", "0..1");
    expectIae(() -> LocalBootstrap.group(0), "nRanks=0");
  }
}
