package org.sparkccl;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.sparkccl.CollectiveCase.Kind;
import org.sparkccl.CollectiveCase.Spec;
import org.sparkccl.config.CclConfig;
import org.sparkccl.config.Key;
import org.sparkccl.device.DeviceBuffer;
import org.sparkccl.device.cuda.CudaBackend;

/**
 * The GPU suite, run on a machine with a GPU by {@code bench/gpu/run.sh}: every collective x dtype
 * x op on the CUDA backend with 1, 2, 4 and 8 ranks as threads sharing the GPU, counts 1, 1003 and
 * one spanning many FIFO slots on both channels (odd: divisible by neither the ranks nor the
 * channels), random inputs against the host {@link Reference}; then a collective that times out,
 * which must return and leave the GPU usable. Prints one line per rank count and a summary; exits 1
 * when anything failed.
 *
 * <pre>
 * java -cp ... org.sparkccl.GpuSuiteMain [ranks,... [cases]]   (default 1,2,4,8 and all cases;
 *     cases > 0 runs that many, spread evenly over the list)
 * </pre>
 */
public final class GpuSuiteMain {
  private static final Duration WAIT = Duration.ofSeconds(60);
  private static final int BUFF = 64 << 10; // 8 KiB slots: many slices, the FIFOs wrap often
  private static final int CHANNELS = 2;

  private GpuSuiteMain() {}

  public static void main(String[] args) {
    CudaBackend.Status status = CudaBackend.status();
    if (!status.available()) {
      System.out.println("GPU suite: CUDA backend unavailable: " + status.reason());
      System.exit(2);
    }
    System.out.println(
        "GPU suite on " + CudaBackend.device(0) + ", driver " + status.driverVersion());
    int[] rankCounts =
        args.length > 0
            ? java.util.Arrays.stream(args[0].split(",")).mapToInt(Integer::parseInt).toArray()
            : new int[] {1, 2, 4, 8};
    int limit = args.length > 1 ? Integer.parseInt(args[1]) : 0;
    int passed = 0;
    List<String> failures = new ArrayList<>();
    for (int n : rankCounts) {
      long t0 = System.nanoTime();
      int[] counts = runRanks(n, limit, failures);
      passed += counts[0];
      System.out.printf(
          Locale.ROOT,
          "ranks=%d cases=%d failed=%d seconds=%.1f%n",
          n,
          counts[0] + counts[1],
          counts[1],
          (System.nanoTime() - t0) / 1e9);
    }
    String timeout = timeoutReturnsAndGpuStaysUsable();
    if (timeout != null) {
      failures.add(timeout);
    } else {
      passed++;
    }
    System.out.println("timeout case: " + (timeout == null ? "ok" : timeout));
    String copies = hostCopiesKeepTheMachinesOrder();
    if (copies != null) {
      failures.add(copies);
    } else {
      passed++;
    }
    System.out.println("host copies case: " + (copies == null ? "ok" : copies));
    failures.stream().limit(30).forEach(f -> System.out.println("FAILED " + f));
    System.out.printf("GPU suite: %d passed, %d failed%n", passed, failures.size());
    System.exit(failures.isEmpty() ? 0 : 1);
  }

  /**
   * On GPU memory too: a host buffer in another byte order is refused, and the typed copies make an
   * exact round trip of random values across several staging chunks.
   */
  private static String hostCopiesKeepTheMachinesOrder() {
    java.util.SplittableRandom random = new java.util.SplittableRandom();
    int n = 700_001;
    try (DeviceBuffer buf = CudaBackend.device(0).allocate(8L * n + 8)) {
      try {
        buf.copyFromHost(java.nio.ByteBuffer.allocate(16), 8);
        if (java.nio.ByteOrder.nativeOrder() != java.nio.ByteOrder.BIG_ENDIAN) {
          return "host copies: a big-endian ByteBuffer was accepted";
        }
      } catch (IllegalArgumentException expected) {
        // refused, as it should be
      }
      double[] d = random.doubles(n).toArray();
      buf.copyFromHost(d, 8);
      double[] back = new double[n];
      buf.copyToHost(8, back);
      if (!java.util.Arrays.equals(d, back)) {
        return "host copies: the double[] round trip differs";
      }
      float[] f = new float[2 * n];
      for (int i = 0; i < f.length; i++) {
        f[i] = Float.intBitsToFloat(random.nextInt());
      }
      buf.copyFromHost(f, 8);
      // the floats read back as the raw ints the machine's order gives
      int[] bits = new int[f.length];
      buf.copyToHost(8, bits);
      for (int i = 0; i < f.length; i++) {
        if (bits[i] != Float.floatToRawIntBits(f[i])) {
          return "host copies: float " + i + " came back as other bits";
        }
      }
      return null;
    } catch (RuntimeException e) {
      return "host copies: " + e;
    }
  }

  static CclConfig config(int channels, Duration timeout) {
    // from the environment first, so that SPARKCCL_TRANSPORT=local runs the suite over it
    return CclConfig.fromEnvironment().toBuilder()
        .buffSize(BUFF)
        .nChannels(channels)
        .timeout(timeout)
        .set(Key.DEVICE, "cuda")
        .build();
  }

  /** Every case with {@code n} ranks; returns {passed, failed}. */
  private static int[] runRanks(int n, int limit, List<String> failures) {
    int passed = 0;
    int failed = 0;
    Communicator[] comms = RankHarness.createAll(n, config(CHANNELS, Duration.ofSeconds(30)), WAIT);
    try {
      long seed = 1;
      List<Spec> all = cases(n);
      int step = limit > 0 ? Math.max(1, all.size() / limit) : 1;
      for (int i = 0; i < all.size(); i += step) {
        Spec c = all.get(i);
        String what = n + " ranks: " + c;
        String m;
        try {
          m = CollectivesTest.runAndCheck(comms, c, seed++);
        } catch (RuntimeException | AssertionError e) {
          failures.add(what + ": " + e);
          failed++;
          RankHarness.closeQuietly(comms);
          comms = RankHarness.createAll(n, config(CHANNELS, Duration.ofSeconds(30)), WAIT);
          continue;
        }
        if (m == null) {
          passed++;
        } else {
          failures.add(what + ":" + m);
          failed++;
        }
      }
    } finally {
      RankHarness.closeAll(comms, WAIT);
    }
    return new int[] {passed, failed};
  }

  /** Every collective x dtype x op, three counts; roots and placements alternate. */
  static List<Spec> cases(int n) {
    List<Spec> out = new ArrayList<>();
    int alternate = 0;
    for (DataType t : DataType.values()) {
      int big = bigCount(t);
      int[] counts = {1, 1003, big};
      for (ReduceOp op : ReduceOp.values()) {
        if (!op.supports(t)) {
          continue;
        }
        for (int count : counts) {
          for (Kind kind : new Kind[] {Kind.ALL_REDUCE, Kind.REDUCE, Kind.REDUCE_SCATTER}) {
            int root = alternate % 3 == 0 ? n - 1 : 0;
            out.add(new Spec(kind, t, op, count, root, alternate++ % 2 == 0));
          }
        }
      }
      for (int count : counts) {
        for (Kind kind : new Kind[] {Kind.BROADCAST, Kind.ALL_GATHER}) {
          int root = alternate % 3 == 0 ? n - 1 : 0;
          out.add(new Spec(kind, t, null, count, root, alternate++ % 2 == 0));
        }
      }
    }
    return out;
  }

  /** Spans both channels (128 KiB each at least) and many 8 KiB slots; odd. */
  private static int bigCount(DataType t) {
    return (int) ((CHANNELS * (256L << 10) / t.size() + 13) | 1);
  }

  /**
   * Rank 0 of two calls allReduce, rank 1 calls nothing: rank 0's blocks spin on empty FIFOs until
   * the timeout sets their abort words. The call must fail with a timeout, the blocks must return,
   * and a new communicator must then run an allReduce correctly on the same GPU. The call spans
   * both channels, which one thread drives on direct edges (the failure of one must end both).
   */
  private static String timeoutReturnsAndGpuStaysUsable() {
    Communicator[] comms = RankHarness.createAll(2, config(CHANNELS, Duration.ofSeconds(2)), WAIT);
    DeviceBuffer buf = comms[0].device().allocate(1 << 20);
    try {
      long t0 = System.nanoTime();
      Throwable e =
          RankHarness.await(
              comms[0].allReduceAsync(buf, buf, 1 << 18, DataType.FLOAT32, ReduceOp.SUM),
              Duration.ofSeconds(30),
              "rank 0");
      double seconds = (System.nanoTime() - t0) / 1e9;
      // the kernel's wait or the proxy's receive may notice first: either fails the call
      if (!(e instanceof CclException)) {
        return "a lone allReduce ended with " + e + " instead of a timeout";
      }
      System.out.printf(
          Locale.ROOT, "timeout case: failed after %.1f s: %s%n", seconds, e.getMessage());
    } finally {
      RankHarness.closeQuietly(comms);
      RankHarness.closeBuffer(buf);
    }
    Communicator[] again = RankHarness.createAll(2, config(1, Duration.ofSeconds(30)), WAIT);
    try {
      String m =
          RankHarness.allReduceAndCheck(
              again, 100_003, DataType.FLOAT32, ReduceOp.SUM, false, 9, WAIT);
      return m == null ? null : "after the timeout: " + m;
    } finally {
      RankHarness.closeAll(again, WAIT);
    }
  }
}
