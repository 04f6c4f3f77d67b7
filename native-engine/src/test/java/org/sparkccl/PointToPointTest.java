package org.sparkccl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.sparkccl.config.CclConfig;
import org.sparkccl.device.DeviceBuffer;
import org.sparkccl.device.HostDevice;

/**
 * Point-to-point send and receive with ranks as threads of this JVM: blocking pairs for every data
 * type, groups (ring exchange and all-to-all, both call orders, messages far larger than the
 * FIFOs), nested groups, p2p interleaved with collectives, argument errors and timeouts.
 *
 * <p>Every block is random and rebuilt by the receiver from its seed, so each check is against an
 * image made without the engine; the bytes after each received block must stay untouched.
 */
@DisplayName("point-to-point send/recv")
class PointToPointTest {
  private static final Duration WAIT = Duration.ofSeconds(60);

  /** 64 KiB buffers: 8 KiB slots, so large messages take many slices. */
  private static final int SMALL_BUFF = 64 << 10;

  private static final int PAD = RankHarness.PAD;

  private static CclConfig config(Duration timeout) {
    return TestConfig.builder().buffSize(SMALL_BUFF).nChannels(2).timeout(timeout).build();
  }

  // ------------------------------------------------------------------ block helpers

  /**
   * The image a sender sends: {@code count} random elements of {@code t} (never zero) then {@link
   * #PAD} random bytes. Both ends rebuild it from {@code seed}.
   */
  static ByteBuffer block(int count, DataType t, long seed) {
    SplittableRandom rnd = new SplittableRandom(seed);
    int bytes = count * t.size();
    ByteBuffer b = Reference.heap(bytes + PAD);
    Reference.fill(b, count, t, rnd, false);
    Reference.fillBytes(b, bytes, bytes + PAD, rnd);
    return b;
  }

  /** Random bytes that a receive buffer holds before the call (the tail must stay so). */
  static ByteBuffer garbage(int bytes, long seed) {
    ByteBuffer b = Reference.heap(bytes);
    Reference.fillBytes(b, 0, bytes, new SplittableRandom(seed ^ 0x5DEECE66DL));
    return b;
  }

  static DeviceBuffer upload(ByteBuffer image) {
    DeviceBuffer b = HostDevice.INSTANCE.allocate(image.capacity());
    b.copyFromHost(image.duplicate().clear().order(ByteOrder.nativeOrder()), 0);
    return b;
  }

  static ByteBuffer download(DeviceBuffer b) {
    ByteBuffer out = Reference.heap((int) b.byteSize());
    b.copyToHost(0, out);
    return out;
  }

  /**
   * Checks a received buffer: its first {@code bytes} are the sender's, the rest as before.
   *
   * @return null when right, otherwise what is wrong
   */
  static String checkReceived(ByteBuffer got, ByteBuffer sent, ByteBuffer before, int bytes) {
    StringBuilder p = new StringBuilder();
    int at = got.slice(0, bytes).mismatch(sent.slice(0, bytes));
    if (at >= 0) {
      p.append(" data differs from what was sent (first at byte ")
          .append(at)
          .append(" of ")
          .append(bytes)
          .append(");");
    }
    int tail = got.capacity() - bytes;
    int t = got.slice(bytes, tail).mismatch(before.slice(bytes, tail));
    if (t >= 0) {
      p.append(" bytes after count were overwritten (first at byte ")
          .append(bytes + t)
          .append(");");
    }
    return p.length() == 0 ? null : p.toString();
  }

  /** Checks that a send buffer still holds what it held before the call. */
  static String checkUnchanged(DeviceBuffer b, ByteBuffer image) {
    int at = download(b).mismatch(image.duplicate().clear());
    return at < 0 ? null : " the send buffer was modified (first at byte " + at + ");";
  }

  // ------------------------------------------------------------------ blocking pairs

  /** Two ranks {@code a} and {@code b} of a communicator of {@code n}: a sends, b replies. */
  record Pair(int n, int a, int b) {
    @Override
    public String toString() {
      return n + " ranks, rank " + a + " -> rank " + b + " and back";
    }
  }

  static Stream<Pair> pairs() {
    return Stream.of(new Pair(2, 0, 1), new Pair(3, 0, 2));
  }

  @ParameterizedTest(name = "blocking send/recv of every dtype and count arrives intact: {0}")
  @MethodSource("pairs")
  void blockingSendRecvOfEveryDtypeAndCountArrivesIntact(Pair pair) {
    int[] counts = {1, 7, 1003, 50_001};
    Communicator[] comms = RankHarness.createAll(pair.n(), config(Duration.ofSeconds(30)), WAIT);
    Queue<String> wrong = new ConcurrentLinkedQueue<>();
    RankHarness.closingAfter(
        comms,
        WAIT,
        () -> {
          RankHarness.run(
              pair.n(),
              WAIT,
              rank -> {
                if (rank != pair.a() && rank != pair.b()) {
                  return; // a bystander: p2p between others must not need it
                }
                Communicator comm = comms[rank];
                int other = rank == pair.a() ? pair.b() : pair.a();
                long seed = 100;
                for (DataType t : DataType.values()) {
                  for (int count : counts) {
                    // leg 0: a -> b, leg 1: b -> a
                    for (int leg = 0; leg < 2; leg++) {
                      seed++;
                      int from = leg == 0 ? pair.a() : pair.b();
                      String name =
                          t
                              + " count="
                              + count
                              + " rank "
                              + from
                              + " -> rank "
                              + (leg == 0 ? pair.b() : pair.a());
                      int bytes = count * t.size();
                      ByteBuffer sent = block(count, t, seed);
                      if (rank == from) {
                        DeviceBuffer buf = upload(sent);
                        comm.send(buf, count, t, other);
                        String m = checkUnchanged(buf, sent);
                        if (m != null) {
                          wrong.add(name + ": rank " + rank + ":" + m);
                        }
                        buf.close();
                      } else {
                        ByteBuffer before = garbage(bytes + PAD, seed);
                        DeviceBuffer buf = upload(before);
                        comm.recv(buf, count, t, other);
                        String m = checkReceived(download(buf), sent, before, bytes);
                        if (m != null) {
                          wrong.add(name + ": rank " + rank + ":" + m);
                        }
                        buf.close();
                      }
                    }
                  }
                }
              });
        });
    if (!wrong.isEmpty()) {
      fail(pair + ": " + wrong.size() + " transfers wrong:\n" + String.join("\n", wrong));
    }
  }

  @Test
  @DisplayName(
      "a higher rank sends first to a lower rank that receives only a second later (over sockets"
          + " the lower rank connects the pair's one socket then): both legs arrive intact")
  void higherRankSendingFirstWaitsForTheLowerRankToConnect() {
    int count = 50_001; // many slices of the small FIFO
    DataType t = DataType.FLOAT32;
    Communicator[] comms = RankHarness.createAll(3, config(Duration.ofSeconds(30)), WAIT);
    Queue<String> wrong = new ConcurrentLinkedQueue<>();
    RankHarness.closingAfter(
        comms,
        WAIT,
        () ->
            RankHarness.run(
                3,
                WAIT,
                rank -> {
                  if (rank == 2) {
                    sendBlock(comms[2], 0, count, t, 7001);
                    receiveAndCheck(comms[2], 0, count, t, 7002, wrong);
                  } else if (rank == 0) {
                    Thread.sleep(1_000);
                    receiveAndCheck(comms[0], 2, count, t, 7001, wrong);
                    sendBlock(comms[0], 2, count, t, 7002);
                  }
                }));
    if (!wrong.isEmpty()) {
      fail(String.join("\n", wrong));
    }
  }

  /** Sends the block of {@code seed} to {@code peer}. */
  private static void sendBlock(Communicator comm, int peer, int count, DataType t, long seed) {
    DeviceBuffer out = upload(block(count, t, seed));
    comm.send(out, count, t, peer);
    out.close();
  }

  /** Receives the block of {@code seed} from {@code peer}; adds what is wrong to {@code wrong}. */
  private static void receiveAndCheck(
      Communicator comm, int peer, int count, DataType t, long seed, Queue<String> wrong) {
    int bytes = count * t.size();
    ByteBuffer before = garbage(bytes + PAD, seed);
    DeviceBuffer in = upload(before);
    comm.recv(in, count, t, peer);
    String m = checkReceived(download(in), block(count, t, seed), before, bytes);
    if (m != null) {
      wrong.add("rank " + peer + " -> rank " + comm.rank() + ":" + m);
    }
    in.close();
  }

  // ------------------------------------------------------------------ groups

  enum Pattern {
    RING("ring exchange (send to next, recv from prev)"),
    ALL_TO_ALL("all-to-all");

    private final String text;

    Pattern(String text) {
      this.text = text;
    }

    @Override
    public String toString() {
      return text;
    }
  }

  enum Api {
    GROUP("group() in try-with-resources"),
    START_END("groupStart()/groupEnd()");

    private final String text;

    Api(String text) {
      this.text = text;
    }

    @Override
    public String toString() {
      return text;
    }
  }

  /** One send or receive of a group: the peer, the element count, the seed of the block. */
  private record Transfer(boolean send, int peer, int count, long seed) {}

  /**
   * Elements rank {@code src} sends to rank {@code dst}: about {@code base}, different for every
   * ordered pair, so a block delivered to the wrong receive could not go unnoticed.
   */
  private static int countOf(int base, int src, int dst) {
    return base + 13 * src + 7 * dst;
  }

  private static long seedOf(long variant, int src, int dst) {
    return variant * 1_000L + src * 31L + dst;
  }

  /** Rank {@code rank}'s transfers of one exchange, in the order it calls them. */
  private static List<Transfer> transfers(
      Pattern pattern, boolean sendsFirst, int rank, int n, int base, long variant) {
    List<Integer> sendTo = new ArrayList<>();
    List<Integer> recvFrom = new ArrayList<>();
    if (pattern == Pattern.RING) {
      sendTo.add((rank + 1) % n);
      recvFrom.add((rank - 1 + n) % n);
    } else {
      for (int k = 1; k < n; k++) { // a different peer order on every rank
        sendTo.add((rank + k) % n);
        recvFrom.add((rank - k + n) % n);
      }
    }
    List<Transfer> sends = new ArrayList<>();
    for (int p : sendTo) {
      sends.add(new Transfer(true, p, countOf(base, rank, p), seedOf(variant, rank, p)));
    }
    List<Transfer> recvs = new ArrayList<>();
    for (int p : recvFrom) {
      recvs.add(new Transfer(false, p, countOf(base, p, rank), seedOf(variant, p, rank)));
    }
    List<Transfer> all = new ArrayList<>(sendsFirst ? sends : recvs);
    all.addAll(sendsFirst ? recvs : sends);
    return all;
  }

  /**
   * Runs one rank's exchange as a group and checks it.
   *
   * @return what is wrong, or null
   */
  private static String exchange(
      Communicator comm, Api api, List<Transfer> transfers, DataType t, String name) {
    int n = transfers.size();
    DeviceBuffer[] bufs = new DeviceBuffer[n];
    ByteBuffer[] images = new ByteBuffer[n];
    List<CompletableFuture<Void>> futures = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      Transfer x = transfers.get(i);
      images[i] =
          x.send() ? block(x.count(), t, x.seed()) : garbage(x.count() * t.size() + PAD, x.seed());
      bufs[i] = upload(images[i]);
    }
    if (api == Api.GROUP) {
      try (Communicator.Group g = comm.group()) {
        for (int i = 0; i < n; i++) {
          futures.add(call(comm, transfers.get(i), bufs[i], t));
        }
      }
    } else {
      comm.groupStart();
      for (int i = 0; i < n; i++) {
        futures.add(call(comm, transfers.get(i), bufs[i], t));
      }
      comm.groupEnd();
    }
    StringBuilder p = new StringBuilder();
    for (int i = 0; i < n; i++) {
      Transfer x = transfers.get(i);
      String what = (x.send() ? " send to rank " : " recv from rank ") + x.peer();
      // whether each future is done the moment groupEnd returns has a test of its own below
      Throwable e = RankHarness.await(futures.get(i), WAIT, name + ": rank " + comm.rank() + what);
      if (e != null) {
        p.append(what)
            .append(": its future failed though the group ended normally: ")
            .append(e)
            .append(';');
        continue;
      }
      String m =
          x.send()
              ? checkUnchanged(bufs[i], images[i])
              : checkReceived(
                  download(bufs[i]),
                  block(x.count(), t, x.seed()),
                  images[i],
                  x.count() * t.size());
      if (m != null) {
        p.append(what).append(':').append(m);
      }
    }
    for (DeviceBuffer b : bufs) {
      b.close();
    }
    return p.length() == 0 ? null : name + ": rank " + comm.rank() + ":" + p;
  }

  private static CompletableFuture<Void> call(
      Communicator comm, Transfer x, DeviceBuffer buf, DataType t) {
    return x.send()
        ? comm.sendAsync(buf, x.count(), t, x.peer())
        : comm.recvAsync(buf, x.count(), t, x.peer());
  }

  @ParameterizedTest(
      name =
          "grouped ring exchanges and all-to-alls of large messages complete in either call"
              + " order: {0} ranks")
  @ValueSource(ints = {2, 3, 4, 5})
  void groupedExchangesOfLargeMessagesCompleteInEitherCallOrder(int n) {
    // 200_000 floats are 800 KB: about a hundred 8 KiB slices per message, far more than the
    // 8-slot FIFOs hold, so without the group the ranks that send first would wait forever
    int base = 200_000;
    Communicator[] comms = RankHarness.createAll(n, config(Duration.ofSeconds(30)), WAIT);
    Queue<String> wrong = new ConcurrentLinkedQueue<>();
    AtomicInteger variants = new AtomicInteger();
    RankHarness.closingAfter(
        comms,
        WAIT,
        () -> {
          long variant = 0;
          for (Pattern pattern : Pattern.values()) {
            DataType t = pattern == Pattern.RING ? DataType.FLOAT32 : DataType.INT32;
            for (boolean sendsFirst : new boolean[] {true, false}) {
              for (Api api : Api.values()) {
                long v = ++variant;
                String order = sendsFirst ? "sends first" : "receives first";
                String name = n + " ranks, " + pattern + ", " + order + ", " + api;
                try {
                  RankHarness.run(
                      n,
                      WAIT,
                      rank -> {
                        String m =
                            exchange(
                                comms[rank],
                                api,
                                transfers(pattern, sendsFirst, rank, n, base, v),
                                t,
                                name);
                        if (m != null) {
                          wrong.add(m);
                        }
                      });
                } catch (AssertionError e) {
                  throw new AssertionError(name + ": " + e.getMessage(), e);
                }
                variants.incrementAndGet();
              }
            }
          }
        });
    assertEquals(8, variants.get(), "variants run");
    if (!wrong.isEmpty()) {
      fail(wrong.size() + " rank(s) wrong:\n" + String.join("\n", wrong));
    }
  }

  @Test
  @DisplayName("nested groups launch only at the outermost groupEnd, and then complete")
  void nestedGroupsLaunchAtTheOutermostEnd() {
    int n = 3;
    int count = 200_000;
    DataType t = DataType.FLOAT32;
    Communicator[] comms = RankHarness.createAll(n, config(Duration.ofSeconds(30)), WAIT);
    Queue<String> wrong = new ConcurrentLinkedQueue<>();
    RankHarness.closingAfter(
        comms,
        WAIT,
        () -> {
          RankHarness.run(
              n,
              WAIT,
              rank -> {
                Communicator comm = comms[rank];
                int next = (rank + 1) % n;
                int prev = (rank - 1 + n) % n;
                ByteBuffer out = block(count, t, seedOf(7, rank, next));
                ByteBuffer before = garbage(count * 4 + PAD, seedOf(7, prev, rank));
                DeviceBuffer sendBuf = upload(out);
                DeviceBuffer recvBuf = upload(before);
                comm.groupStart();
                comm.groupStart();
                CompletableFuture<Void> s = comm.sendAsync(sendBuf, count, t, next);
                comm.groupEnd(); // inner: nothing starts yet
                boolean sendStartedEarly = s.isDone();
                CompletableFuture<Void> r;
                try (Communicator.Group g = comm.group()) { // depth 2 again, ends back at 1
                  r = comm.recvAsync(recvBuf, count, t, prev);
                }
                boolean recvStartedEarly = r.isDone();
                comm.groupEnd(); // outermost: launches both and waits
                if (sendStartedEarly || recvStartedEarly) {
                  wrong.add(
                      "rank "
                          + rank
                          + ": a transfer completed before the outermost groupEnd (send "
                          + sendStartedEarly
                          + ", recv "
                          + recvStartedEarly
                          + ")");
                }
                Throwable se = RankHarness.await(s, WAIT, "rank " + rank + " send");
                Throwable re = RankHarness.await(r, WAIT, "rank " + rank + " recv");
                if (se != null || re != null) {
                  wrong.add(
                      "rank "
                          + rank
                          + ": a transfer failed though groupEnd returned normally: "
                          + se
                          + " / "
                          + re);
                }
                String m =
                    checkReceived(
                        download(recvBuf),
                        block(count, t, seedOf(7, prev, rank)),
                        before,
                        count * 4);
                if (m != null) {
                  wrong.add("rank " + rank + " recv from rank " + prev + ":" + m);
                }
                m = checkUnchanged(sendBuf, out);
                if (m != null) {
                  wrong.add("rank " + rank + ":" + m);
                }
                sendBuf.close();
                recvBuf.close();
                // the group depth is back to 0: a further groupEnd is an error
                assertThrows(IllegalStateException.class, comm::groupEnd, "rank " + rank);
              });
        });
    assertTrue(wrong.isEmpty(), String.join("\n", wrong));
  }

  /**
   * A user's callback on the first future of the group is slow (it runs on whichever thread
   * completes that future): the other future must still be done when groupEnd returns, since
   * groupEnd "waits for its transfers". Without the callback the window is microseconds wide and
   * only shows on a loaded machine (it did, in the exchange test above, on 4 and 5 ranks).
   */
  @Test
  @DisplayName("when groupEnd returns, every send and recv future of the group is done")
  void everyFutureOfAGroupIsDoneWhenGroupEndReturns() {
    int n = 2;
    int rounds = 100;
    DataType t = DataType.INT64;
    Communicator[] comms = RankHarness.createAll(n, config(Duration.ofSeconds(30)), WAIT);
    Queue<String> wrong = new ConcurrentLinkedQueue<>();
    RankHarness.closingAfter(
        comms,
        WAIT,
        () -> {
          RankHarness.run(
              n,
              WAIT,
              rank -> {
                Communicator comm = comms[rank];
                int other = 1 - rank;
                try (DeviceBuffer s = HostDevice.INSTANCE.allocate(8 * 64);
                    DeviceBuffer r = HostDevice.INSTANCE.allocate(8 * 64)) {
                  int late = 0;
                  for (int i = 0; i < rounds; i++) {
                    int count = 1 + i % 64;
                    CompletableFuture<Void> sf;
                    CompletableFuture<Void> rf;
                    if (i % 2 == 0) {
                      try (Communicator.Group g = comm.group()) {
                        sf = comm.sendAsync(s, count, t, other);
                        sf.whenComplete((v, e) -> sleepQuietly(3));
                        rf = comm.recvAsync(r, count, t, other);
                      }
                    } else {
                      comm.groupStart();
                      rf = comm.recvAsync(r, count, t, other);
                      rf.whenComplete((v, e) -> sleepQuietly(3));
                      sf = comm.sendAsync(s, count, t, other);
                      comm.groupEnd();
                    }
                    if (!sf.isDone() || !rf.isDone()) {
                      late++;
                    }
                    // wait anyway, so that one late future does not end the test's exchange
                    assertNull(RankHarness.await(sf, WAIT, "send, round " + i));
                    assertNull(RankHarness.await(rf, WAIT, "recv, round " + i));
                  }
                  if (late > 0) {
                    wrong.add(
                        "rank "
                            + rank
                            + ": in "
                            + late
                            + " of "
                            + rounds
                            + " groups a send or recv"
                            + " future was not yet done when groupEnd returned");
                  }
                }
              });
        });
    assertTrue(wrong.isEmpty(), String.join("\n", wrong));
  }

  private static void sleepQuietly(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  // ------------------------------------------------------------------ p2p among collectives

  @Test
  @DisplayName(
      "collectives and send/recv interleaved on one communicator, some p2p only between some"
          + " ranks, all give the right results")
  void collectivesAndPointToPointInterleavedGiveTheRightResults() {
    int n = 4;
    Communicator[] comms = RankHarness.createAll(n, config(Duration.ofSeconds(30)), WAIT);
    Queue<String> wrong = new ConcurrentLinkedQueue<>();
    RankHarness.closingAfter(
        comms,
        WAIT,
        () -> {
          RankHarness.run(
              n,
              WAIT,
              rank -> {
                Communicator comm = comms[rank];
                for (int round = 0; round < 2; round++) {
                  long s = 10_000L * (round + 1);
                  String r = "round " + round + ": ";
                  // allReduce, float32 sum
                  allReduceStep(comm, 10_007, DataType.FLOAT32, ReduceOp.SUM, s + 1, r, wrong);
                  // blocking send/recv between ranks 0 and 1 only; ranks 2 and 3 go straight on
                  if (rank <= 1) {
                    pairStep(comm, 1 - rank, 50_001, DataType.INT32, s + 2, r, wrong);
                  }
                  // broadcast from rank 2, int64, in place
                  broadcastStep(comm, 30_011, DataType.INT64, 2, s + 3, r, wrong);
                  // a grouped ring exchange with an allReduce called inside the group
                  groupWithCollectiveStep(comm, 40_009, s + 4, r, wrong);
                  // a grouped exchange between ranks 1 and 3 only, both ways at once
                  if (rank == 1 || rank == 3) {
                    String m =
                        exchange(
                            comm,
                            Api.START_END,
                            List.of(
                                new Transfer(
                                    true,
                                    4 - rank,
                                    countOf(70_000, rank, 4 - rank),
                                    seedOf(s + 5, rank, 4 - rank)),
                                new Transfer(
                                    false,
                                    4 - rank,
                                    countOf(70_000, 4 - rank, rank),
                                    seedOf(s + 5, 4 - rank, rank))),
                            DataType.FLOAT64,
                            r + "exchange between ranks 1 and 3");
                    if (m != null) {
                      wrong.add(m);
                    }
                  }
                  // allGather, uint8
                  allGatherStep(comm, 9_001, DataType.UINT8, s + 6, r, wrong);
                  // allReduce, int64 max
                  allReduceStep(comm, 3, DataType.INT64, ReduceOp.MAX, s + 7, r, wrong);
                }
              });
        });
    assertTrue(wrong.isEmpty(), wrong.size() + " step(s) wrong:\n" + String.join("\n", wrong));
  }

  /** Every rank's input of a collective step, rebuilt on each rank from the seed. */
  private static ByteBuffer[] inputs(int n, int count, DataType t, long seed) {
    ByteBuffer[] in = new ByteBuffer[n];
    for (int r = 0; r < n; r++) {
      in[r] = Reference.heap(count * t.size());
      Reference.fill(in[r], count, t, new SplittableRandom(seed * 101 + r), false);
    }
    return in;
  }

  private static void allReduceStep(
      Communicator comm,
      int count,
      DataType t,
      ReduceOp op,
      long seed,
      String round,
      Queue<String> wrong) {
    ByteBuffer[] in = inputs(comm.nRanks(), count, t, seed);
    try (DeviceBuffer buf = HostDevice.INSTANCE.allocate((long) count * t.size())) {
      buf.copyFromHost(in[comm.rank()].duplicate().clear().order(ByteOrder.nativeOrder()), 0);
      comm.allReduce(buf, buf, count, t, op);
      String m = Reference.allReduce(in, count, t, op).mismatches(download(buf));
      if (m != null) {
        wrong.add(
            round
                + "allReduce "
                + t
                + " "
                + op
                + " count="
                + count
                + ": rank "
                + comm.rank()
                + ": "
                + m);
      }
    }
  }

  private static void pairStep(
      Communicator comm,
      int other,
      int count,
      DataType t,
      long seed,
      String round,
      Queue<String> wrong) {
    int rank = comm.rank();
    int bytes = count * t.size();
    ByteBuffer out = block(count, t, seedOf(seed, rank, other));
    ByteBuffer before = garbage(bytes + PAD, seedOf(seed, other, rank));
    try (DeviceBuffer s = upload(out);
        DeviceBuffer r = upload(before)) {
      // the lower rank sends first, the other receives first: no group needed
      if (rank < other) {
        comm.send(s, count, t, other);
        comm.recv(r, count, t, other);
      } else {
        comm.recv(r, count, t, other);
        comm.send(s, count, t, other);
      }
      String m =
          checkReceived(download(r), block(count, t, seedOf(seed, other, rank)), before, bytes);
      if (m != null) {
        wrong.add(round + "send/recv rank " + other + " -> rank " + rank + ":" + m);
      }
    }
  }

  private static void broadcastStep(
      Communicator comm,
      int count,
      DataType t,
      int root,
      long seed,
      String round,
      Queue<String> wrong) {
    int bytes = count * t.size();
    ByteBuffer rootData = block(count, t, seed);
    ByteBuffer before = comm.rank() == root ? rootData : garbage(bytes + PAD, seed + comm.rank());
    try (DeviceBuffer buf = upload(before)) {
      comm.broadcast(buf, count, t, root);
      String m = checkReceived(download(buf), rootData, before, bytes);
      if (m != null) {
        wrong.add(
            round
                + "broadcast "
                + t
                + " count="
                + count
                + " root="
                + root
                + ": rank "
                + comm.rank()
                + ":"
                + m);
      }
    }
  }

  private static void allGatherStep(
      Communicator comm, int count, DataType t, long seed, String round, Queue<String> wrong) {
    int n = comm.nRanks();
    int block = count * t.size();
    ByteBuffer[] in = inputs(n, count, t, seed);
    try (DeviceBuffer send = HostDevice.INSTANCE.allocate(block);
        DeviceBuffer recv = HostDevice.INSTANCE.allocate((long) n * block)) {
      send.copyFromHost(in[comm.rank()].duplicate().clear().order(ByteOrder.nativeOrder()), 0);
      comm.allGather(send, recv, count, t);
      ByteBuffer got = download(recv);
      for (int k = 0; k < n; k++) {
        int at = got.slice(k * block, block).mismatch(in[k].duplicate().clear());
        if (at >= 0) {
          wrong.add(
              round
                  + "allGather "
                  + t
                  + " count="
                  + count
                  + ": rank "
                  + comm.rank()
                  + ": block "
                  + k
                  + " differs from rank "
                  + k
                  + "'s input at byte "
                  + at);
        }
      }
    }
  }

  /**
   * A ring exchange in a group with an allReduce started inside it: the allReduce runs as usual,
   * the transfers at the group's end.
   */
  private static void groupWithCollectiveStep(
      Communicator comm, int count, long seed, String round, Queue<String> wrong) {
    int n = comm.nRanks();
    int rank = comm.rank();
    int next = (rank + 1) % n;
    int prev = (rank - 1 + n) % n;
    DataType t = DataType.FLOAT32;
    int bytes = count * t.size();
    ByteBuffer out = block(count, t, seedOf(seed, rank, next));
    ByteBuffer before = garbage(bytes + PAD, seedOf(seed, prev, rank));
    ByteBuffer[] in = inputs(n, 5_003, DataType.INT32, seed);
    try (DeviceBuffer s = upload(out);
        DeviceBuffer r = upload(before);
        DeviceBuffer red = HostDevice.INSTANCE.allocate(5_003 * 4)) {
      red.copyFromHost(in[rank].duplicate().clear().order(ByteOrder.nativeOrder()), 0);
      CompletableFuture<Void> reduced;
      try (Communicator.Group g = comm.group()) {
        comm.sendAsync(s, count, t, next);
        reduced = comm.allReduceAsync(red, red, 5_003, DataType.INT32, ReduceOp.SUM);
        comm.recvAsync(r, count, t, prev);
      }
      Throwable e = RankHarness.await(reduced, WAIT, round + "allReduce inside a group");
      if (e != null) {
        throw new AssertionError(
            round + "rank " + rank + ": allReduce inside a group failed: " + e, e);
      }
      String m =
          Reference.allReduce(in, 5_003, DataType.INT32, ReduceOp.SUM).mismatches(download(red));
      if (m != null) {
        wrong.add(round + "allReduce inside a group: rank " + rank + ": " + m);
      }
      m = checkReceived(download(r), block(count, t, seedOf(seed, prev, rank)), before, bytes);
      if (m != null) {
        wrong.add(round + "group ring exchange: rank " + rank + " from rank " + prev + ":" + m);
      }
    }
  }

  // ------------------------------------------------------------------ argument errors

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

  @Test
  @DisplayName(
      "a peer out of range or equal to the own rank is rejected naming peer, and groupEnd"
          + " without groupStart throws IllegalStateException")
  void badPeersAndUnbalancedGroupEndAreRejected() {
    int n = 3;
    Communicator[] comms = RankHarness.createAll(n, config(Duration.ofSeconds(30)), WAIT);
    DeviceBuffer buf = HostDevice.INSTANCE.allocate(400);
    boolean ok = false;
    try {
      DataType f32 = DataType.FLOAT32;
      for (Communicator c : comms) {
        int me = c.rank();
        for (int peer : new int[] {-1, n, n + 7, Integer.MIN_VALUE, me}) {
          String p = "peer=" + peer;
          expectIae(() -> c.sendAsync(buf, 10, f32, peer), p);
          expectIae(() -> c.recvAsync(buf, 10, f32, peer), p);
          expectIae(() -> c.send(buf, 10, f32, peer), p);
          expectIae(() -> c.recv(buf, 10, f32, peer), p);
        }
        // inside a group too, and the group still ends normally
        c.groupStart();
        expectIae(() -> c.sendAsync(buf, 10, f32, me), "peer=" + me);
        expectIae(() -> c.recvAsync(buf, 10, f32, n), "peer=" + n);
        c.groupEnd();
        // buffer checks apply as for collectives
        int other = (me + 1) % n;
        expectIae(() -> c.sendAsync(null, 10, f32, other), "send", "null");
        expectIae(() -> c.recvAsync(buf, 101, f32, other), "count=101", "404", "400");
        expectIae(() -> c.sendAsync(buf, -1, f32, other), "count=-1");

        IllegalStateException e = assertThrows(IllegalStateException.class, c::groupEnd);
        assertTrue(e.getMessage().contains("groupStart"), "message names groupStart: " + e);
        assertThrows(IllegalStateException.class, c::groupEndAsync, "groupEndAsync, rank " + me);
        c.groupStart();
        c.groupEnd();
        assertThrows(
            IllegalStateException.class, c::groupEnd, "a second groupEnd after one groupStart");
        assertFalse(c.isAborted(), "a rejected call must not abort rank " + me);
      }
      // count 0 is no transfer: done at once, with no matching call on the peer
      CompletableFuture<Void> zero = comms[0].sendAsync(buf, 0, f32, 1);
      assertTrue(zero.isDone() && !zero.isCompletedExceptionally(), "send of 0 elements");
      // the rejected calls left every rank usable: a real transfer 2 -> 0 still lines up
      ByteBuffer sent = block(100, f32, 42);
      ByteBuffer before = garbage(400 + PAD, 42);
      try (DeviceBuffer s = upload(sent);
          DeviceBuffer r = upload(before)) {
        CompletableFuture<Void> rf = comms[0].recvAsync(r, 100, f32, 2);
        CompletableFuture<Void> sf = comms[2].sendAsync(s, 100, f32, 0);
        assertNull(RankHarness.await(sf, WAIT, "send 2 -> 0"));
        assertNull(RankHarness.await(rf, WAIT, "recv 2 -> 0"));
        assertNull(checkReceived(download(r), sent, before, 400));
      }
      ok = true;
    } finally {
      if (ok) {
        RankHarness.closeAll(comms, WAIT);
      } else {
        RankHarness.closeQuietly(comms);
      }
      RankHarness.closeBuffer(buf);
    }
  }

  // ------------------------------------------------------------------ timeouts

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

  /**
   * Rank 1 starts one transfer with rank 0, which never calls anything; the transfer must fail with
   * a timeout naming rank 0 about {@code timeout} later.
   */
  private static void expectTimeout(boolean send, int count) {
    Duration timeout = Duration.ofSeconds(2);
    long slackMs = 5_000;
    String what = send ? "a send of " + count + " floats to" : "a recv from";
    Communicator[] comms = RankHarness.createAll(2, config(timeout), WAIT);
    DeviceBuffer buf = HostDevice.INSTANCE.allocate(4L * count);
    try {
      long t0 = System.nanoTime();
      CompletableFuture<Void> f =
          send
              ? comms[1].sendAsync(buf, count, DataType.FLOAT32, 0)
              : comms[1].recvAsync(buf, count, DataType.FLOAT32, 0);
      Throwable e = RankHarness.await(f, timeout.plusSeconds(30), what + " rank 0");
      long ms = (System.nanoTime() - t0) / 1_000_000;
      assertNotNull(e, what + " a rank that never calls completed normally");
      assertTrue(e instanceof CclException, what + " rank 0: expected a CclException, got " + e);
      assertTrue(mentionsTimeout(e), what + " rank 0 should report a timeout: " + e);
      assertTrue(
          ms >= timeout.toMillis() * 9 / 10,
          what + " rank 0 failed after " + ms + " ms, before the 2 s timeout ran out: " + e);
      assertTrue(
          ms <= timeout.toMillis() + slackMs,
          what + " rank 0 failed after " + ms + " ms; expected about the 2 s timeout: " + e);
      assertTrue(e.getMessage().contains("rank 1"), "message names this rank: " + e);
      assertTrue(e.getMessage().contains("rank 0"), "message names the silent peer: " + e);
      assertTrue(comms[1].isAborted(), "rank 1 is aborted after the timeout");
    } finally {
      RankHarness.closeQuietly(comms);
      RankHarness.closeBuffer(buf);
    }
  }

  @Test
  @DisplayName("a recv whose peer never sends fails with a timeout, not a hang")
  void recvFromAPeerThatNeverSendsTimesOut() {
    expectTimeout(false, 1000);
  }

  @Test
  @DisplayName("a large send whose peer never receives fails with a timeout, not a hang")
  void largeSendToAPeerThatNeverReceivesTimesOut() {
    // 64 MB: more than the FIFO and any socket buffers can absorb
    expectTimeout(true, 16 << 20);
  }
}
