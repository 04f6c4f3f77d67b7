package org.sparkccl.perf;

import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.io.File;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.sparkccl.CclException;
import org.sparkccl.Communicator;
import org.sparkccl.DataType;
import org.sparkccl.ReduceOp;
import org.sparkccl.bootstrap.Bootstrap;
import org.sparkccl.bootstrap.TcpBootstrap;
import org.sparkccl.config.CclConfig;
import org.sparkccl.config.Key;
import org.sparkccl.device.Device;
import org.sparkccl.device.DeviceBuffer;

/** One rank process of the perf tool. */
final class PerfRank {
  private PerfRank() {}

  /** One output row, as nccl-tests prints it. */
  record Row(
      String operation,
      String algo,
      long size,
      long count,
      String type,
      String redop,
      int root,
      @JsonProperty("time_us") double timeUs,
      @JsonProperty("algbw_GBps") double algbw,
      @JsonProperty("busbw_GBps") double busbw,
      long wrong) {}

  /** What a rank process needs besides the options. */
  record Context(
      PerfOptions o,
      Bootstrap boot,
      CclConfig config,
      Communicator comm,
      PerfBuffers buffers,
      DataType type,
      ReduceOp op) {
    DeviceBuffer send() {
      return buffers.send();
    }

    DeviceBuffer recv() {
      return buffers.recv();
    }
  }

  static List<PerfOp> operations(PerfOptions o) {
    return o.operation.equals("all")
        ? List.of(PerfOp.values())
        : List.of(PerfOp.fromName(o.operation));
  }

  static void validate(PerfOptions o) {
    List<PerfOp> ops = operations(o);
    if (!List.of("socket", "ucx", "auto", "local").contains(o.transport)
        || (o.transport.equals("local") && !o.threads)) {
      throw new IllegalArgumentException(
          "-t " + o.transport + " is invalid; expected socket, ucx, auto, or local with --threads");
    }
    if (o.algo.equals("compare") && o.threads) {
      throw new IllegalArgumentException("-a compare runs rank processes; drop --threads");
    }
    if (o.checkCompare && (o.threads || o.algo.equals("compare"))) {
      throw new IllegalArgumentException(
          "--check-compare runs rank processes with one algorithm; drop --threads and -a compare");
    }
    boolean comparison = o.checkCompare || o.algo.equals("compare");
    if (comparison && o.device.startsWith("cuda")) {
      throw new IllegalArgumentException(
          "-a compare and --check-compare run on host memory; drop --device " + o.device);
    }
    if (comparison && (o.rounds < 1 || o.rounds > o.iters)) {
      throw new IllegalArgumentException(
          "--rounds " + o.rounds + " is invalid; expected 1 to -i (" + o.iters + ")");
    }
    if (!List.of("ring", "tree", "rd", "rh", "auto", "compare").contains(o.algo)) {
      throw new IllegalArgumentException(
          "-a " + o.algo + " is invalid; expected ring, tree, rd, rh, auto or compare");
    }
    DataType type = DataType.fromName(o.dtype);
    ReduceOp op = ReduceOp.fromName(o.redop);
    if (ops.stream().anyMatch(PerfOp::reduces) && !op.supports(type)) {
      throw new IllegalArgumentException(
          "-r " + op + " is not defined for -d " + type + "; expected a floating-point dtype");
    }
    if (o.ranks < 1
        || o.minBytes < 1
        || o.maxBytes < o.minBytes
        || o.factor < 2
        || o.iters < 1
        || o.warmup < 0
        || o.warmupMs < 0
        || o.timedMs < 0
        || (o.check != 0 && o.check != 1)) {
      throw new IllegalArgumentException(
          "expected -n >= 1, 1 <= -b <= -e, -f >= 2, -i >= 1, -w >= 0, --warmup-ms >= 0,"
              + " --timed-ms >= 0, -c 0|1");
    }
    if (o.root < 0 || o.root >= o.ranks) {
      throw new IllegalArgumentException(
          "--root " + o.root + " is out of range; expected 0.." + (o.ranks - 1));
    }
    if (o.maxBytes > Integer.MAX_VALUE - 8) {
      throw new IllegalArgumentException("-e " + o.maxBytes + " is too large; expected at most 2G");
    }
  }

  /** A rank process: meets the others through the TCP bootstrap root. */
  static int run(PerfOptions o) {
    validate(o);
    if (o.algo.equals("compare") || o.checkCompare) {
      return InterleavedComparison.run(o);
    }
    CclConfig config = config(o);
    try (TcpBootstrap boot = TcpBootstrap.connect(o.root(), o.rank, o.ranks, config.timeout())) {
      return run(o, boot, config);
    } catch (CclException e) {
      System.err.println("sparkccl-perf: rank " + o.rank + ": " + e.getMessage());
      return 1;
    }
  }

  /** The engine settings of a rank: the environment's, with the tool's algorithm and device. */
  static CclConfig config(PerfOptions o) {
    return CclConfig.fromEnvironment().toBuilder()
        .set(Key.ALGO, o.algo)
        .set(Key.DEVICE, o.device)
        .set(Key.TRANSPORT, o.transport)
        .build();
  }

  /** One rank over {@code boot}: a process of its own, or a thread (option {@code --threads}). */
  static int run(PerfOptions o, Bootstrap boot, CclConfig config) {
    DataType type = DataType.fromName(o.dtype);
    ReduceOp op = ReduceOp.fromName(o.redop);
    boolean lead = o.rank == 0;
    List<Row> rows = new ArrayList<>();
    try (Communicator comm = Communicator.create(boot, config);
        PerfBuffers buffers = PerfBuffers.allocate(comm.device(), o.maxBytes)) {
      Context ctx = new Context(o, boot, config, comm, buffers, type, op);
      jitWarmup(ctx);
      for (PerfOp perfOp : operations(o)) {
        if (lead) {
          System.out.println("# ring transport in use: " + comm.ringTransport());
          printHeader(o, perfOp, o.algo, config, comm.device());
        }
        for (long size = o.minBytes; size <= o.maxBytes; size *= o.factor) {
          Row row = measure(ctx, perfOp, size);
          if (row == null) {
            continue;
          }
          rows.add(row);
          if (lead) {
            printRow(row);
          }
        }
      }
    } catch (CclException e) {
      System.err.println("sparkccl-perf: rank " + o.rank + ": " + e.getMessage());
      return 1;
    }
    return finish(o, rows);
  }

  static void printHeader(
      PerfOptions o, PerfOp perfOp, String algo, CclConfig config, Device device) {
    System.out.printf(
        "# sparkccl-perf: %s, %d ranks (%s), transport %s, algo %s, device %s%n",
        perfOp.label(),
        o.ranks,
        o.threads ? "threads of one JVM" : "one JVM each",
        o.transport,
        algo,
        device);
    System.out.println("# config: " + config);
    System.out.printf(
        "#%11s %12s %9s %6s %5s %11s %11s %11s %8s%n",
        "size", "count", "type", "redop", "root", "time_us", "algbw_GBps", "busbw_GBps", "wrong");
  }

  static void printRow(Row row) {
    System.out.printf(
        Locale.ROOT,
        "%12d %12d %9s %6s %5d %11.2f %11.4f %11.4f %8d%n",
        row.size(),
        row.count(),
        row.type(),
        row.redop(),
        row.root(),
        row.timeUs(),
        row.algbw(),
        row.busbw(),
        row.wrong());
    System.out.flush();
  }

  /** Prints the closing lines on rank 0 and returns the exit code. */
  static int finish(PerfOptions o, List<Row> rows) {
    boolean lead = o.rank == 0;
    long wrongTotal = rows.stream().mapToLong(Row::wrong).sum();
    if (lead) {
      double avg = rows.stream().mapToDouble(Row::busbw).average().orElse(0);
      System.out.printf(
          Locale.ROOT,
          "# Out of bounds values : %d %s%n",
          wrongTotal,
          wrongTotal == 0 ? "OK" : "FAILED");
      System.out.printf(Locale.ROOT, "# Avg bus bandwidth : %.4f%n", avg);
      if (o.json != null) {
        writeJson(o, rows, avg);
      }
    }
    return wrongTotal == 0 ? 0 : 3;
  }

  /** Measures one row; {@code null} when the size holds no element per rank. */
  private static Row measure(Context c, PerfOp perfOp, long size) {
    int n = c.o().ranks;
    long perRank = perfOp.perRankCount(size, c.type(), n);
    if (perRank == 0) {
      return null;
    }
    long bytes = perfOp.bytes(perRank, n, c.type());
    c.buffers().fillSend(perfOp.sendCount(perRank, n), c.type(), 1, c.o().rank);
    double perCallMs = warmUp(c, perfOp, perRank);
    int iters = timedCalls(c.o(), perCallMs);
    long[] ends = c.o().callTimes ? new long[iters] : null;
    barrier(c);
    long t0 = System.nanoTime();
    for (int i = 0; i < iters; i++) {
      perfOp.run(c.comm(), c.send(), c.recv(), perRank, c.type(), c.op(), c.o().root);
      if (ends != null) {
        ends[i] = System.nanoTime();
      }
    }
    double[] ranksUs = gather(c, (System.nanoTime() - t0) / 1e3 / iters);
    double timeUs = Arrays.stream(ranksUs).max().orElseThrow();
    if (ends != null && c.o().rank == 0) {
      System.out.println(CallTimes.describe(t0, ends));
    }
    if (c.o().rankTimes && c.o().rank == 0) {
      System.out.println(describeRanks(ranksUs));
    }
    long wrong = c.o().check == 1 ? check(c, perfOp, perRank, size) : 0;
    return row(c, perfOp, c.o().algo, bytes, timeUs, wrong);
  }

  /** The most warm-up calls of a size with {@code --warmup-ms}. */
  static final int MAX_TIMED_WARMUP_CALLS = 20_000;

  /** The most timed calls of a size with {@code --timed-ms}. */
  static final int MAX_TIMED_CALLS = 1_000_000;

  /**
   * Timed calls of a size: {@code -i}, or with {@code --timed-ms} as many as fill that time at the
   * slowest rank's warm-up rate {@code perCallMs} (every rank computes the same count from the same
   * agreed rate), if that is more. A mean of 30 calls at 64 KiB followed the few calls that met the
   * machine's scheduling: 97.6 us where the median call took 38.3 and the slowest 787 (4 rank
   * processes, a 2-core VM, docs/benchmarks.md).
   */
  static int timedCalls(PerfOptions o, double perCallMs) {
    if (o.timedMs == 0 || !(perCallMs > 0)) {
      return o.iters;
    }
    double fill = Math.ceil(o.timedMs / perCallMs);
    return (int) Math.max(o.iters, Math.min(MAX_TIMED_CALLS, fill));
  }

  /**
   * Untimed calls of one size: {@code -w} of them, then, with {@code --warmup-ms}, more in rounds
   * until that time has passed: each round makes as many calls as would fill the time left at the
   * rate the slowest rank saw in the round before. The tuner gives a size its own algorithm (16
   * KiB: Rabenseifner, 1 MiB: the ring), whose code the JIT has not compiled yet after the small
   * and large warm-up calls; its first size timed 2x slower than the next with 200 warm-up calls (2
   * ranks, a 2-core VM). One estimate from the first {@code -w} calls was not enough: where they
   * met a one-time delay (a new size's first calls), the rate they gave was far too slow, the
   * warm-up stopped after a few hundred calls, and a size timed with {@code -w 10 -i 30} took 3 to
   * 7x the sizes on either side (allGather of 64 KiB, 4 rank processes on a 16-core host; 19 us
   * after 100 warm-up calls). Every rank makes the same number of calls: they agree on each round's
   * slowest rate and on the time spent. Returns that rate of the last round, in milliseconds a
   * call, for {@code --timed-ms}; NaN where neither option asked for one.
   */
  static double warmUp(Context c, PerfOp perfOp, long perRank) {
    // --timed-ms needs a rate, so it makes at least one warm-up call too
    boolean rated = c.o().warmupMs > 0 || c.o().timedMs > 0;
    boolean timed = c.o().warmupMs > 0;
    long calls = rated ? Math.max(1, c.o().warmup) : c.o().warmup;
    long start = System.nanoTime();
    long made = 0;
    double perCallMs = Double.NaN;
    while (calls > 0) {
      long t0 = System.nanoTime();
      for (long i = 0; i < calls; i++) {
        perfOp.run(c.comm(), c.send(), c.recv(), perRank, c.type(), c.op(), c.o().root);
      }
      made += calls;
      if (!rated) {
        return perCallMs;
      }
      perCallMs = maxOver(c, (System.nanoTime() - t0) / 1e6 / calls);
      if (!timed) {
        return perCallMs;
      }
      double leftMs = c.o().warmupMs - maxOver(c, (System.nanoTime() - start) / 1e6);
      calls =
          leftMs <= 0
              ? 0
              : Math.min(MAX_TIMED_WARMUP_CALLS - made, (long) Math.ceil(leftMs / perCallMs));
    }
    return perCallMs;
  }

  /** A row from a measured time. */
  static Row row(Context c, PerfOp perfOp, String algo, long bytes, double timeUs, long wrong) {
    int n = c.o().ranks;
    double algbw = bytes / timeUs / 1e3;
    return new Row(
        perfOp.label(),
        algo,
        bytes,
        bytes / c.type().size(),
        c.type().wireName(),
        perfOp.reduces() ? c.op().wireName() : "none",
        perfOp.rootColumn(c.o().root),
        timeUs,
        algbw,
        algbw * perfOp.busFactor(n),
        wrong);
  }

  /**
   * Untimed allReduces before the first size ({@code --jit-warmup}, default {@value}). HotSpot
   * compiles a method with C2 after about 10,000 invocations; until then a small call runs in the
   * interpreter or C1's profiling code. Measured with 2 ranks as threads, 8 B on the host: 33 us
   * per call after 500 warm-up calls, 10.6 us after 20,000 (a 2-core VM). A benchmark of small
   * messages that stops short of this measures the JIT, not the engine.
   */
  static final int JIT_WARMUP_CALLS = 20_000;

  /**
   * One warm-up call in this many moves the large size, so that its code gets compiled too: the
   * small calls of ranks on one host go through shared memory and no longer run the proxy and
   * socket code a large call needs. With one in 200 (100 large calls), 1 MiB over sockets with 2
   * ranks then took twice as long as after 3,000 large calls (a 2-core VM).
   */
  private static final int LARGE_EVERY = 10;

  /**
   * The largest size the warm-up's small calls take: the run's smallest size up to this. It was 4
   * KiB, and a run of 32 KiB alone then warmed its own path (slices sent from the buffers, trees
   * and doubling rather than the ring) only with every tenth call: after {@code --jit-warmup 3000}
   * its first 10,000 timed broadcasts at 8 ranks over sockets averaged 100 us, 40,000 averaged 57,
   * and after 20,000 warm-up calls 30,000 averaged 41 (a 16-core host, docs/benchmarks.md).
   */
  private static final int SMALL_MAX_BYTES = 64 << 10;

  /**
   * The caps of the warm-up's large calls, taken in turn: the tuner can give 1 MiB another
   * algorithm than the sizes above it, whose code then ran cold. With 1 MiB alone, 8 ranks over
   * sockets whose 1 MiB allReduce is Rabenseifner measured their first 2 MiB ring allReduces at
   * 8.3-10.4 ms a call, where a build whose 1 MiB is a ring measured 2.4-2.9 ({@code --jit-warmup
   * 200}, then 5 calls and 200 ms a size untimed; a 16-core host, docs/benchmarks.md). 4 MiB is
   * above every size the tuner gives anything but the ring.
   */
  private static final long[] LARGE_CAPS = {1 << 20, 4 << 20};

  /**
   * Runs the engine's code paths until the JIT has compiled them ({@link #JIT_WARMUP_CALLS} calls
   * of each collective the run measures): the run's smallest size (at most {@link
   * #SMALL_MAX_BYTES}), and every {@link #LARGE_EVERY}th call its largest, capped in turn at each
   * of {@link #LARGE_CAPS}. Each collective has code of its own (a tree broadcast shares little
   * with a ring allReduce): warmed by allReduces alone, the first size of a broadcast at 4 ranks
   * took 1.6x the next size's time on a 16-core host. {@code --jit-warmup 0} skips it.
   */
  static void jitWarmup(Context c) {
    for (PerfOp perfOp : operations(c.o())) {
      jitWarmup(c, perfOp);
    }
  }

  private static void jitWarmup(Context c, PerfOp perfOp) {
    int n = c.o().ranks;
    long[] large = new long[LARGE_CAPS.length];
    for (int k = 0; k < large.length; k++) {
      large[k] = perfOp.perRankCount(Math.min(c.o().maxBytes, LARGE_CAPS[k]), c.type(), n);
    }
    if (large[0] == 0) {
      return; // no size of the run holds an element per rank: nothing of it is measured
    }
    long small =
        Math.max(1, perfOp.perRankCount(Math.min(c.o().minBytes, SMALL_MAX_BYTES), c.type(), n));
    long largest = large[large.length - 1];
    c.buffers().fillSend(perfOp.sendCount(Math.max(small, largest), n), c.type(), 7, c.o().rank);
    for (int i = 0; i < c.o().jitWarmup; i++) {
      long count =
          i % LARGE_EVERY == LARGE_EVERY - 1 ? large[(i / LARGE_EVERY) % large.length] : small;
      perfOp.run(c.comm(), c.send(), c.recv(), count, c.type(), c.op(), c.o().root);
    }
  }

  static long check(Context c, PerfOp perfOp, long perRank, long seed) {
    int n = c.o().ranks;
    long sendCount = perfOp.sendCount(perRank, n);
    c.buffers().fillSend(sendCount, c.type(), seed, c.o().rank);
    perfOp.run(c.comm(), c.send(), c.recv(), perRank, c.type(), c.op(), c.o().root);
    ByteBuffer[] inputs = new ByteBuffer[n];
    for (int r = 0; r < n; r++) {
      inputs[r] = TestData.scratch(sendCount * c.type().size());
      TestData.fill(inputs[r], sendCount, c.type(), seed, r);
    }
    long wrong =
        perfOp.countWrong(
            c.buffers().recvOnHost(perfOp.recvCount(perRank, n) * c.type().size()),
            inputs,
            perRank,
            c.type(),
            c.op(),
            c.o().rank,
            c.o().root);
    long total = 0;
    for (byte[] b :
        c.boot().allGather(ByteBuffer.allocate(8).putLong(wrong).array(), c.config().timeout())) {
      total += ByteBuffer.wrap(b).getLong();
    }
    return total;
  }

  static void barrier(Context c) {
    c.boot().allGather(new byte[0], c.config().timeout());
  }

  static double maxOver(Context c, double v) {
    return Arrays.stream(gather(c, v)).max().orElseThrow();
  }

  /** Every rank's {@code v}, indexed by rank. */
  private static double[] gather(Context c, double v) {
    byte[][] all =
        c.boot().allGather(ByteBuffer.allocate(8).putDouble(v).array(), c.config().timeout());
    double[] values = new double[all.length];
    for (int r = 0; r < all.length; r++) {
      values[r] = ByteBuffer.wrap(all[r]).getDouble();
    }
    return values;
  }

  /**
   * One comment line ({@code --rank-times}): each rank's own time a call. The row's time is the
   * slowest rank's; in a collective where some ranks run ahead (a broadcast's root only sends) the
   * others show which rank sets the pace.
   */
  static String describeRanks(double[] perRank) {
    StringBuilder line = new StringBuilder("#   time a call by rank (us):");
    for (int r = 0; r < perRank.length; r++) {
      line.append(String.format(Locale.ROOT, " %d:%.2f", r, perRank[r]));
    }
    return line.toString();
  }

  private static void writeJson(PerfOptions o, List<Row> rows, double avg) {
    Map<String, Object> doc = new LinkedHashMap<>();
    doc.put("operation", o.operation);
    doc.put("ranks", o.ranks);
    doc.put("transport", o.transport);
    doc.put("algo", o.algo);
    doc.put("rows", rows);
    doc.put("avgBusBandwidth", avg);
    try {
      new ObjectMapper()
          .enable(SerializationFeature.INDENT_OUTPUT)
          .writeValue(new File(o.json), doc);
    } catch (IOException e) {
      System.err.println("sparkccl-perf: cannot write " + o.json + ": " + e.getMessage());
    }
  }
}
