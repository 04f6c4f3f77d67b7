package org.sparkccl.spark.worker;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.sparkccl.Communicator;
import org.sparkccl.DataType;
import org.sparkccl.ReduceOp;
import org.sparkccl.bootstrap.LocalBootstrap;
import org.sparkccl.config.CclConfig;
import org.sparkccl.device.DeviceBuffer;
import org.sparkccl.device.HostDevice;

/**
 * The Python benchmark without Spark, for hosts that have Python and numpy but no Spark (the GPU
 * hosts): this JVM plays the executor of {@code local[N]}. It serves the Python workers' channel
 * exactly as the executor plugin does, forms each group of N workers' communicator with ranks as
 * threads of this JVM (as Spark's local mode does), and times float32 sum allReduces in place from
 * N Python worker processes (its children, as PySpark's workers are the executor's) against N Java
 * threads calling the same engine, alternating, for each size. Prints one {@code RESULT} line in
 * the form {@code bench/python_bench.py} prints.
 *
 * <pre>
 * java -cp ... org.sparkccl.spark.worker.PythonChannelBenchMain RANKS ROUNDS PYTHON WORKER_SCRIPT
 * </pre>
 */
public final class PythonChannelBenchMain {
  /**
   * (bytes, warm-up calls, timed calls): the sizes of {@code bench/python_bench.py}, with more
   * small calls, so that the session's and the tasks' small-call paths are compiled before the
   * timing.
   */
  private static final long[][] SIZES = {{8, 20_000, 5000}, {64L << 20, 2, 10}};

  private PythonChannelBenchMain() {}

  public static void main(String[] args) throws Exception {
    int n = Integer.parseInt(args[0]);
    int rounds = Integer.parseInt(args[1]);
    String python = args[2];
    String script = args[3];
    CclConfig config = CclConfig.fromEnvironment();
    Map<Long, LocalBootstrap.Group> groups = new ConcurrentHashMap<>();
    CommunicatorSource source =
        (attempt, timeout, onTaskEnd) -> {
          LocalBootstrap.Group g =
              groups.computeIfAbsent(attempt / n, k -> LocalBootstrap.group(n));
          CclConfig c = timeout == null ? config : config.toBuilder().timeout(timeout).build();
          return Communicator.create(g.rank((int) (attempt % n)), c);
        };
    Map<String, List<Double>> medians = new TreeMap<>();
    long attempts = 0;
    try (WorkerChannelServer server = WorkerChannelServer.startForExecutor(source)) {
      if (server == null) {
        throw new IllegalStateException("the channel for Python workers did not start");
      }
      for (int round = 0; round < rounds; round++) {
        for (long[] size : SIZES) {
          long count = size[0] / Float.BYTES;
          double[] py = python(python, script, n, attempts, size);
          attempts += n;
          double[] java = java(config, n, count, (int) size[1], (int) size[2]);
          medians.computeIfAbsent("python_" + size[0], k -> new ArrayList<>()).add(py[0]);
          medians.computeIfAbsent("channel_ping_0", k -> new ArrayList<>()).add(py[1]);
          medians.computeIfAbsent("java_" + size[0], k -> new ArrayList<>()).add(median(java));
          System.out.printf(
              "round %d %d B: python median %.1f us, java median %.1f us, channel round trip"
                  + " %.1f us%n",
              round, size[0], py[0], median(java), py[1]);
        }
      }
    }
    StringBuilder json = new StringBuilder("{");
    for (Map.Entry<String, List<Double>> e : medians.entrySet()) {
      double[] m = e.getValue().stream().mapToDouble(Double::doubleValue).toArray();
      json.append(json.length() > 1 ? ", " : "")
          .append('"')
          .append(e.getKey())
          .append("\": {\"median_us\": ")
          .append(median(m))
          .append(", \"round_medians_us\": ")
          .append(Arrays.toString(m))
          .append('}');
    }
    System.out.println("RESULT " + json.append('}'));
  }

  /** Rank 0's median call and channel round trip in microseconds, from {@code n} workers. */
  private static double[] python(
      String python, String script, int n, long firstAttempt, long[] size)
      throws IOException, InterruptedException {
    List<Process> workers = new ArrayList<>();
    for (int r = 0; r < n; r++) {
      workers.add(
          new ProcessBuilder(
                  python,
                  script,
                  Long.toString(firstAttempt + r),
                  Long.toString(size[0]),
                  Long.toString(size[1]),
                  Long.toString(size[2]))
              .redirectError(ProcessBuilder.Redirect.INHERIT)
              .start());
    }
    double[] rank0 = null;
    for (int r = 0; r < n; r++) {
      Process p = workers.get(r);
      String times = null;
      try (BufferedReader out =
          new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
        for (String line = out.readLine(); line != null; line = out.readLine()) {
          if (line.startsWith("TIMES ")) {
            times = line.substring(6);
          }
        }
      }
      if (!p.waitFor(600, TimeUnit.SECONDS) || p.exitValue() != 0 || times == null) {
        workers.forEach(Process::destroyForcibly);
        throw new IllegalStateException("Python worker " + r + " failed (see its errors above)");
      }
      if (r == 0) {
        String[] f = times.trim().split(" ");
        rank0 = new double[] {Double.parseDouble(f[0]), Double.parseDouble(f[1])};
        System.out.println("python rank 0: " + times);
      }
    }
    return rank0;
  }

  /** Rank 0's time of each timed call in microseconds, from {@code n} threads. */
  private static double[] java(CclConfig config, int n, long count, int warmup, int iterations)
      throws Exception {
    LocalBootstrap.Group group = LocalBootstrap.group(n);
    ExecutorService pool = Executors.newFixedThreadPool(n);
    try {
      List<Future<double[]>> ranks = new ArrayList<>();
      for (int r = 0; r < n; r++) {
        int rank = r;
        ranks.add(
            pool.submit(
                () -> {
                  double[] micros = new double[iterations];
                  try (Communicator comm = Communicator.create(group.rank(rank), config);
                      DeviceBuffer buf = HostDevice.INSTANCE.allocate(count * Float.BYTES)) {
                    for (int i = 0; i < warmup + iterations; i++) {
                      long t0 = System.nanoTime();
                      comm.allReduce(buf, buf, count, DataType.FLOAT32, ReduceOp.SUM);
                      if (i >= warmup) {
                        micros[i - warmup] = (System.nanoTime() - t0) / 1e3;
                      }
                    }
                  }
                  return micros;
                }));
      }
      double[] rank0 = null;
      for (Future<double[]> f : ranks) {
        double[] t = f.get(600, TimeUnit.SECONDS);
        rank0 = rank0 == null ? t : rank0;
      }
      return rank0;
    } finally {
      pool.shutdownNow();
    }
  }

  private static double median(double[] values) {
    double[] s = values.clone();
    Arrays.sort(s);
    int m = s.length / 2;
    return s.length % 2 == 1 ? s[m] : (s[m - 1] + s[m]) / 2;
  }
}
