package org.sparkccl;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.function.BiFunction;
import java.util.stream.Stream;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.sparkccl.config.CclConfig;
import org.sparkccl.config.Key;
import org.sparkccl.device.DeviceBuffer;
import org.sparkccl.device.HostDevice;

/**
 * Ranks that disagree on a call: another collective, another count, dtype, op or root, another
 * order, or a send and a recv of different sizes. Each must be detected from the call descriptors
 * in the messages, not end in the timeout: every rank must fail well before it, with a message
 * naming both sides.
 *
 * <p>A rank whose own part of the mismatched call could legitimately finish before anyone saw the
 * mismatch (the root of a broadcast, whose data has already left; a small send) may return normally
 * from it; its next call must then fail with the mismatch. So for every rank, the mismatched call
 * or the next one throws.
 */
@DisplayName("mismatched calls")
class MismatchTest {
  /** Long, so that detection, not the timeout, must be what ends every call. */
  private static final Duration TIMEOUT = Duration.ofSeconds(10);

  /** Every rank must have failed this soon after the ranks started calling. */
  private static final long DETECT_MS = 5_000;

  private static final Duration DEADLINE = Duration.ofSeconds(60);
  private static final int COUNT = 1024;

  /** Large enough for every call below: 2 x 1024 float64. */
  private static final int BUF_BYTES = 2 * COUNT * 8;

  private static CclConfig config(String algo) {
    return TestConfig.builder()
        .buffSize(64 << 10)
        .nChannels(2)
        .set(Key.ALGO, algo)
        .timeout(TIMEOUT)
        .build();
  }

  /** What a rank calls, with the signature the error messages must give it. */
  record Call(String signature, Body body) {
    @Override
    public String toString() {
      return signature;
    }
  }

  @FunctionalInterface
  interface Body {
    void run(Communicator c, DeviceBuffer buf);
  }

  static Call allReduce(int count, DataType t, ReduceOp op) {
    return new Call(
        "allReduce(count=" + count + ", " + t.wireName() + ", " + op.wireName() + ")",
        (c, b) -> c.allReduce(b, b, count, t, op));
  }

  static Call broadcast(int count, DataType t, int root) {
    return new Call(
        "broadcast(count=" + count + ", " + t.wireName() + ", root=" + root + ")",
        (c, b) -> c.broadcast(b, count, t, root));
  }

  static Call reduce(int count, DataType t, int root) {
    return new Call(
        "reduce(count="
            + count
            + ", "
            + t.wireName()
            + ", "
            + ReduceOp.SUM.wireName()
            + ", root="
            + root
            + ")",
        (c, b) -> c.reduce(b, b, count, t, ReduceOp.SUM, root));
  }

  static Call send(int count, DataType t, int peer) {
    return new Call(
        "send(count=" + count + ", " + t.wireName() + ", peer=" + peer + ")",
        (c, b) -> c.send(b, count, t, peer));
  }

  static Call recv(int count, DataType t, int peer) {
    return new Call(
        "recv(count=" + count + ", " + t.wireName() + ", peer=" + peer + ")",
        (c, b) -> c.recv(b, count, t, peer));
  }

  static final Call AR = allReduce(COUNT, DataType.FLOAT32, ReduceOp.SUM);

  /**
   * One mismatch on {@code n} ranks.
   *
   * @param calls rank, n -> the rank's calls: the mismatched one first, then the next one
   * @param mustContain what every rank's error message must contain: both sides
   * @param everyCallFails whether no rank's part of the mismatched call can complete (an allReduce
   *     needs every rank's data), so that every rank must fail in that call
   * @param warmUp whether the ranks first run a matching allReduce, so the mismatch is not at the
   *     first operation
   * @param algo the forced algorithm ({@code ring} or {@code tree}), since each detects mismatches
   *     from the messages it exchanges
   */
  record Case(
      String name,
      int n,
      BiFunction<Integer, Integer, List<Call>> calls,
      List<String> mustContain,
      boolean everyCallFails,
      boolean warmUp,
      String algo) {
    @Override
    public String toString() {
      return name
          + ", "
          + n
          + " ranks, algo="
          + algo
          + (warmUp ? ", after a matching allReduce" : "");
    }
  }

  /** {@code odd} calls {@code oddCall}, the others {@code usual}; all then call allReduce. */
  static BiFunction<Integer, Integer, List<Call>> oneRank(int odd, Call oddCall, Call usual) {
    return (rank, n) -> List.of(rank == odd ? oddCall : usual, AR);
  }

  static List<String> sides(Call a, Call b) {
    return List.of("called " + a.signature(), "called " + b.signature(), "operation #");
  }

  static Stream<Case> cases() {
    List<Case> all = new ArrayList<>();
    for (String algo : new String[] {"ring", "tree"}) {
      for (int n : new int[] {3, 4}) {
        all.addAll(cases(n, algo));
      }
    }
    return all.stream();
  }

  static List<Case> cases(int n, String algo) {
    List<Case> all = new ArrayList<>();
    boolean warm = n == 4;
    Call bc0 = broadcast(COUNT, DataType.FLOAT32, 0);
    all.add(
        new Case(
            "rank 1 calls broadcast while the others call allReduce",
            n,
            oneRank(1, bc0, AR),
            sides(AR, bc0),
            false,
            warm,
            algo));
    all.add(
        new Case(
            "rank 0 (the broadcast root) calls broadcast while the others call allReduce",
            n,
            oneRank(0, bc0, AR),
            sides(AR, bc0),
            false,
            warm,
            algo));
    Call twice = allReduce(2 * COUNT, DataType.FLOAT32, ReduceOp.SUM);
    all.add(
        new Case(
            "rank 1 calls allReduce with twice the count",
            n,
            oneRank(1, twice, AR),
            sides(AR, twice),
            true,
            warm,
            algo));
    Call f64 = allReduce(COUNT, DataType.FLOAT64, ReduceOp.SUM);
    all.add(
        new Case(
            "the last rank calls allReduce with float64 instead of float32",
            n,
            oneRank(n - 1, f64, AR),
            sides(AR, f64),
            true,
            warm,
            algo));
    Call max = allReduce(COUNT, DataType.FLOAT32, ReduceOp.MAX);
    all.add(
        new Case(
            "rank 0 calls allReduce with max instead of sum",
            n,
            oneRank(0, max, AR),
            sides(AR, max),
            true,
            warm,
            algo));
    Call bc1 = broadcast(COUNT, DataType.FLOAT32, 1);
    all.add(
        new Case(
            "rank 1 calls broadcast with root 1, the others with root 0",
            n,
            oneRank(1, bc1, bc0),
            sides(bc0, bc1),
            false,
            warm,
            algo));
    all.add(
        new Case(
            "the last rank calls broadcast with root 1, the others with root 0",
            n,
            oneRank(n - 1, bc1, bc0),
            sides(bc0, bc1),
            false,
            warm,
            algo));
    all.add(
        new Case(
            "rank 1 calls allReduce then broadcast, the others broadcast then allReduce",
            n,
            (rank, nr) -> rank == 1 ? List.of(AR, bc0) : List.of(bc0, AR),
            sides(AR, bc0),
            false,
            warm,
            algo));
    return all;
  }

  /** What one rank did. */
  private static final class Outcome {
    int failedCall = -1; // index into the rank's calls; -1: none threw
    RuntimeException error;
    long ms;
    boolean aborted;
    String[] calls;
  }

  /**
   * Runs {@code calls} on every rank from a common start, each rank stopping at its first
   * exception, and checks that every rank failed in time, in the mismatched call or the next, with
   * a CclException whose message contains every string of {@code mustContain}.
   */
  private static void runAndCheck(
      String name,
      int n,
      BiFunction<Integer, Integer, List<Call>> calls,
      List<String> mustContain,
      boolean everyCallFails,
      boolean warmUp,
      String algo) {
    Communicator[] comms = RankHarness.createAll(n, config(algo), DEADLINE);
    DeviceBuffer[] bufs = new DeviceBuffer[n];
    Outcome[] out = new Outcome[n];
    CyclicBarrier start = new CyclicBarrier(n);
    Throwable[] harness;
    try {
      for (int r = 0; r < n; r++) {
        bufs[r] = randomBuffer(DataType.FLOAT32, r + 1);
        out[r] = new Outcome();
      }
      harness =
          RankHarness.runCollect(
              n,
              DEADLINE,
              rank -> {
                Communicator comm = comms[rank];
                Outcome o = out[rank];
                if (warmUp) {
                  comm.allReduce(bufs[rank], bufs[rank], 2 * COUNT, DataType.FLOAT64, ReduceOp.MAX);
                }
                List<Call> mine = calls.apply(rank, n);
                o.calls = mine.stream().map(Call::signature).toArray(String[]::new);
                start.await(30, TimeUnit.SECONDS);
                long t0 = System.nanoTime();
                try {
                  for (int i = 0; i < mine.size(); i++) {
                    o.failedCall = i;
                    mine.get(i).body().run(comm, bufs[rank]);
                  }
                  o.failedCall = -1;
                } catch (RuntimeException e) {
                  o.error = e;
                } finally {
                  o.ms = (System.nanoTime() - t0) / 1_000_000;
                  o.aborted = comm.isAborted();
                }
              });
    } finally {
      // communicators first: their kernels must stop before the buffers are freed
      RankHarness.closeQuietly(comms);
      for (DeviceBuffer b : bufs) {
        RankHarness.closeBuffer(b);
      }
    }
    RankHarness.assertNoErrors(harness, name + ": the test's own rank code failed:");

    List<String> problems = new ArrayList<>();
    StringBuilder report = new StringBuilder();
    boolean anyPrimary = false;
    for (int r = 0; r < n; r++) {
      Outcome o = out[r];
      RuntimeException e = o.error;
      report
          .append("\n  rank ")
          .append(r)
          .append(" (")
          .append(String.join(", then ", o.calls))
          .append("): ")
          .append(e == null ? "no exception" : "call " + o.failedCall + " threw " + e)
          .append(" after ")
          .append(o.ms)
          .append(" ms");
      String who = "rank " + r + ": ";
      if (e == null) {
        problems.add(who + "neither the mismatched call nor the next one threw");
        continue;
      }
      if (o.failedCall > 1) {
        problems.add(
            who + "only call " + o.failedCall + " threw, not the mismatched one or the next");
      }
      if (everyCallFails && o.failedCall != 0) {
        problems.add(who + "its part of the mismatched call completed, which it cannot");
      }
      if (!(e instanceof CclException)) {
        problems.add(who + "expected a CclException, got " + e.getClass().getName());
      }
      String msg = String.valueOf(e.getMessage());
      // A rank may first meet a later consequence of the mismatch (its next call against a
      // neighbour still in the mismatched one); that report must still name both sides.
      boolean primary = mustContain.stream().allMatch(msg::contains);
      // The call after the mismatch fails as aborted (another rank told this one), or, where this
      // rank reads the peer's data itself (shared memory), with the mismatch of the earlier calls.
      boolean reportsEarlier = e instanceof CclMismatchException && primary;
      if (o.failedCall == 1 && !(e instanceof CclAbortedException) && !reportsEarlier) {
        problems.add(
            who
                + "the call after the mismatch should throw CclAbortedException, or the mismatch"
                + " of the earlier calls, got "
                + e);
      }
      boolean namesBothSides =
          msg.matches(
              "(?s).*rank \\d+ called \\w+.* as operation #\\d+ but rank \\d+ called \\w+.*"
                  + " as operation #\\d+.*");
      anyPrimary |= primary;
      if (!primary && !namesBothSides) {
        for (String s : mustContain) {
          if (!msg.contains(s)) {
            problems.add(who + "message should contain \"" + s + "\": " + msg);
          }
        }
      }
      // a rank told of the mismatch by another raises the same kind as the rank that saw it
      if (!causedBy(e, CclMismatchException.class)) {
        problems.add(
            who
                + "the cause should be a CclMismatchException, detected here or told by another"
                + " rank: "
                + e);
      }
      if (o.ms >= DETECT_MS) {
        problems.add(
            who
                + "failed after "
                + o.ms
                + " ms; detection should take well under "
                + DETECT_MS
                + " ms (timeout "
                + TIMEOUT.toMillis()
                + " ms)");
      }
      if (!o.aborted) {
        problems.add(who + "isAborted() is false after the failure");
      }
    }
    // A single rank may meet a consequence first (its next call against a neighbour still in the
    // mismatched one), but the ranks that meet the mismatched calls themselves must report them:
    // if none does, the user never learns which call was wrong.
    if (!anyPrimary) {
      problems.add(
          "no rank reported the mismatched calls themselves (a message containing "
              + String.join(", ", mustContain)
              + "); every rank reported only a later consequence");
    }
    assertTrue(
        problems.isEmpty(),
        name + ":\n" + String.join("\n", problems) + "\nwhat each rank did:" + report);
  }

  /** A host buffer of {@link #BUF_BYTES} random 4-byte {@code type} values from {@code seed}. */
  private static DeviceBuffer randomBuffer(DataType type, long seed) {
    ByteBuffer img = Reference.heap(BUF_BYTES);
    Reference.fill(img, BUF_BYTES / 4, type, new SplittableRandom(seed), false);
    DeviceBuffer buf = HostDevice.INSTANCE.allocate(BUF_BYTES);
    buf.copyFromHost(img, 0);
    return buf;
  }

  private static boolean causedBy(Throwable e, Class<? extends Throwable> type) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (type.isInstance(t)) {
        return true;
      }
    }
    return false;
  }

  /**
   * Rank 1 broadcasts as root 1 while the others broadcast from root 2. On the binary trees every
   * rank that waits gets its parent's data with the call it expects, and rank 1, a leaf of the
   * others' tree, waits for nothing in its own: no header and no stall reveals the mismatch, only
   * the announcements that tree ranks owe their ring predecessors. Then each rank either runs
   * allGathers (rings: the tree's connections carry nothing more) or pauses, until it fails or 5 s
   * pass; every rank must fail with the mismatch.
   */
  @ParameterizedTest(name = "after {1} matching broadcasts, then {0}")
  @CsvSource({"allGathers, 0", "a pause, 0", "a pause, " + BOARD_WRAPS})
  @DisplayName("a mismatch only the announcements reveal still fails every rank")
  void aMismatchOnlyTheAnnouncementsRevealFailsEveryRank(String then, int before) {
    int n = 4;
    Communicator[] comms = RankHarness.createAll(n, config("tree"), DEADLINE);
    DeviceBuffer[] bufs = new DeviceBuffer[n];
    DeviceBuffer[] gathered = new DeviceBuffer[n];
    RuntimeException[] errors = new RuntimeException[n];
    Throwable[] harness;
    try {
      for (int r = 0; r < n; r++) {
        bufs[r] = randomBuffer(DataType.FLOAT32, r + 7);
        gathered[r] = HostDevice.INSTANCE.allocate((long) n * BUF_BYTES);
      }
      boolean pause = then.equals("a pause");
      harness =
          RankHarness.runCollect(
              n,
              DEADLINE,
              rank -> {
                Communicator comm = comms[rank];
                try {
                  // a rank whose tree edges are sockets may be thousands of calls behind the root
                  // (the socket buffers hold them): the mismatch can fail it while it is still in
                  // these broadcasts, as an abort caused by the mismatch
                  matchingBroadcasts(comm, rank, bufs[rank], before);
                  comm.broadcast(bufs[rank], COUNT, DataType.FLOAT32, rank == 1 ? 1 : 2);
                  long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(DETECT_MS);
                  while (System.nanoTime() < deadline && !(pause && comm.isAborted())) {
                    if (pause) {
                      Thread.sleep(1);
                    } else {
                      comm.allGather(bufs[rank], gathered[rank], COUNT, DataType.FLOAT32);
                    }
                  }
                  if (pause && comm.isAborted()) {
                    comm.allGather(bufs[rank], gathered[rank], COUNT, DataType.FLOAT32);
                  }
                } catch (RuntimeException e) {
                  errors[rank] = e;
                }
              });
    } finally {
      RankHarness.closeQuietly(comms);
      for (int r = 0; r < n; r++) {
        RankHarness.closeBuffer(bufs[r]);
        RankHarness.closeBuffer(gathered[r]);
      }
    }
    RankHarness.assertNoErrors(harness, "the test's own rank code failed:");
    for (int r = 0; r < n; r++) {
      RuntimeException e = errors[r];
      assertTrue(e != null, "rank " + r + " never failed in " + DETECT_MS + " ms of " + then);
      String msg = String.valueOf(e.getMessage());
      assertTrue(
          causedBy(e, CclMismatchException.class)
              && msg.contains("root=1")
              && msg.contains("root=2"),
          "rank " + r + " should fail with the broadcast's mismatch, got " + e);
    }
  }

  /**
   * Matching broadcasts before the mismatch: more than a UCX announcement board holds (1,024), all
   * announced by their root, which runs ahead of its ring predecessor.
   */
  private static final int BOARD_WRAPS = 3_000;

  /**
   * {@code calls} tree broadcasts of two floats from root 2, the values new for each call; each is
   * checked against the root's.
   */
  private static void matchingBroadcasts(Communicator comm, int rank, DeviceBuffer buf, int calls) {
    float[] values = new float[2];
    for (int i = 0; i < calls; i++) {
      float[] sent = {i * 0.25f + 1, -i - 0.5f};
      if (rank == 2) {
        buf.copyFromHost(sent, 0);
      }
      comm.broadcast(buf, sent.length, DataType.FLOAT32, 2);
      buf.copyToHost(0, values);
      if (values[0] != sent[0] || values[1] != sent[1]) {
        throw new AssertionError(
            "rank " + rank + ", broadcast " + i + ": " + Arrays.toString(values) + " received");
      }
    }
  }

  @ParameterizedTest(name = "every rank fails fast naming both sides: {0}")
  @MethodSource("cases")
  void everyRankFailsFastNamingBothSides(Case c) {
    runAndCheck(
        c.toString(), c.n(), c.calls(), c.mustContain(), c.everyCallFails(), c.warmUp(), c.algo());
  }

  /**
   * Tree broadcasts and reduces on 4 ranks where one rank disagrees on the root or the kind, chosen
   * so that every rank completes the mismatched call without reading a wrong header or stalling:
   * only the announcements of the ranks that receive nothing in their own view (a broadcast's root,
   * a reduce's leaves) reveal these, and every rank must still fail.
   */
  static Stream<Case> treeCases() {
    int n = 4;
    Call r0 = reduce(COUNT, DataType.FLOAT32, 0);
    Call r1 = reduce(COUNT, DataType.FLOAT32, 1);
    Call r2 = reduce(COUNT, DataType.FLOAT32, 2);
    Call r3 = reduce(COUNT, DataType.FLOAT32, 3);
    Call b0 = broadcast(COUNT, DataType.FLOAT32, 0);
    return Stream.of(
        new Case(
            "rank 0 reduces to root 1, the others to root 0",
            n,
            oneRank(0, r1, r0),
            sides(r0, r1),
            false,
            true,
            "tree"),
        new Case(
            "rank 2 reduces to root 3, the others to root 2",
            n,
            oneRank(2, r3, r2),
            sides(r2, r3),
            false,
            false,
            "tree"),
        new Case(
            "rank 3 reduces to root 0, the others broadcast from root 0",
            n,
            oneRank(3, r0, b0),
            sides(b0, r0),
            false,
            true,
            "tree"),
        new Case(
            "rank 0 broadcasts from root 0, the others reduce to root 0",
            n,
            oneRank(0, b0, r0),
            sides(r0, b0),
            false,
            false,
            "tree"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("treeCases")
  void treeCollectivesThatDisagreeFailEveryRank(Case c) {
    runAndCheck(
        c.toString(), c.n(), c.calls(), c.mustContain(), c.everyCallFails(), c.warmUp(), c.algo());
  }

  @ParameterizedTest(
      name =
          "a send of 100 floats met by a recv of 200 fails both ranks with a send/recv"
              + " mismatch: {0} ranks")
  @ValueSource(ints = {2, 3})
  void sendAndRecvOfDifferentSizesFailBothRanks(int n) {
    Call s = send(100, DataType.FLOAT32, 1);
    Call r = recv(200, DataType.FLOAT32, 0);
    // a third rank takes part in nothing but the allReduce after, which must fail too
    runAndCheck(
        "rank 0 sends 100 floats to rank 1, which receives 200, " + n + " ranks",
        n,
        (rank, nr) -> rank == 0 ? List.of(s, AR) : rank == 1 ? List.of(r, AR) : List.of(AR),
        List.of("send/recv", "count=100", "count=200"),
        false,
        n == 3,
        "auto");
  }

  /**
   * The same mismatch that {@link #everyRankFailsFastNamingBothSides} catches (float32 against
   * int32 of the same byte count, so the ring's steps still line up) passes unnoticed with {@code
   * checkCalls=false}: the key really switches the check off, on every rank.
   */
  @ParameterizedTest(name = "checkCalls=false lets a float32/int32 mismatch pass: algo={0}")
  @ValueSource(strings = {"ring", "tree"})
  void checkCallsFalseSwitchesTheCheckOff(String algo) {
    int n = 3;
    CclConfig off = config(algo).toBuilder().checkCalls(false).build();
    Communicator[] comms = RankHarness.createAll(n, off, DEADLINE);
    DeviceBuffer[] bufs = new DeviceBuffer[n];
    Throwable[] errors;
    try {
      for (int r = 0; r < n; r++) {
        bufs[r] = randomBuffer(DataType.INT32, r + 1);
      }
      errors =
          RankHarness.runCollect(
              n,
              DEADLINE,
              rank -> {
                DataType t = rank == 1 ? DataType.INT32 : DataType.FLOAT32;
                comms[rank].allReduce(bufs[rank], bufs[rank], COUNT, t, ReduceOp.SUM);
                comms[rank].allReduce(bufs[rank], bufs[rank], COUNT, DataType.INT32, ReduceOp.MAX);
              });
    } finally {
      RankHarness.closeQuietly(comms);
      for (DeviceBuffer b : bufs) {
        RankHarness.closeBuffer(b);
      }
    }
    RankHarness.assertNoErrors(errors, "with checkCalls=false no rank may notice the mismatch:");
  }
}
