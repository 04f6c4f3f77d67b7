package org.sparkccl.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.spark.SparkConf;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;
import org.sparkccl.ReduceOp;
import org.sparkccl.spark.SparkCCL;
import org.sparkccl.spark.SparkCCLPlugin;
import scala.reflect.ClassTag$;

/**
 * SparkCCL across executor JVMs: a {@code local-cluster[2,2,1024]} master (a real master, two
 * workers and two executor processes) with the Spark home of pip's {@code pyspark==4.2.0}, which
 * {@code bin/run-tests} puts in {@code SPARK_HOME}. Runs after {@code package}, since the executors
 * load the built jars.
 */
@DisplayName("SparkCCL on a local cluster of executor JVMs")
@Timeout(600)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class) // the kill test last: it replaces an executor
class LocalClusterIT {
  private static final int PARTITIONS = 4;
  private static JavaSparkContext sc;

  @BeforeAll
  static void startCluster() {
    String home = System.getenv("SPARK_HOME");
    if (home == null || !new File(home, "jars").isDirectory()) {
      String why =
          "SKIPPED: SPARK_HOME ("
              + home
              + ") is not a Spark home with jars/; bin/run-tests sets it"
              + " from pip's pyspark==4.2.0";
      System.out.println(why);
      Assumptions.abort(why);
    }
    sc =
        new JavaSparkContext(
            new SparkConf()
                .setMaster("local-cluster[2,2,1024]")
                .setAppName("LocalClusterIT")
                .set("spark.jars", String.join(",", shippedJars()))
                .set("spark.plugins", SparkCCLPlugin.class.getName())
                .set("spark.ui.enabled", "false")
                .set("spark.ccl.timeout", "30s"));
  }

  @AfterAll
  static void stopCluster() throws java.io.IOException {
    if (sc != null) {
      String app = sc.sc().applicationId();
      sc.stop();
      // local-cluster workers always work in SPARK_HOME/work: leave pip's Spark home as it was
      java.nio.file.Path work = java.nio.file.Path.of(System.getenv("SPARK_HOME"), "work", app);
      if (java.nio.file.Files.exists(work)) {
        try (var paths = java.nio.file.Files.walk(work)) {
          paths
              .sorted(java.util.Comparator.reverseOrder())
              .map(java.nio.file.Path::toFile)
              .forEach(File::delete);
        }
      }
    }
  }

  /** This module's jars (main and tests) and its runtime dependencies, from target/. */
  private static List<String> shippedJars() {
    File target = new File("target");
    List<String> jars = new ArrayList<>();
    for (File dir : List.of(target, new File(target, "lib"))) {
      File[] found = dir.listFiles((d, n) -> n.endsWith(".jar"));
      for (File f : found == null ? new File[0] : found) {
        jars.add(f.getAbsolutePath()); // target/lib holds only what Spark does not bring
      }
    }
    assertTrue(jars.size() >= 4, "built jars in target/ and target/lib: " + jars);
    return jars;
  }

  private static List<float[]> inputs(int n) {
    List<float[]> in = new ArrayList<>();
    for (int p = 0; p < PARTITIONS; p++) {
      in.add(AllReduceJob.randomArray(p + 100, n));
    }
    return in;
  }

  private static void assertSums(List<float[]> inputs, List<float[]> results) {
    assertEquals(PARTITIONS, results.size());
    for (int r = 0; r < results.size(); r++) {
      for (int i = 0; i < inputs.get(0).length; i++) {
        double ref = 0;
        for (float[] a : inputs) {
          ref += a[i];
        }
        assertEquals(ref, results.get(r)[i], 1e-5 * ref, "result " + r + " element " + i);
      }
    }
  }

  /** One probe line per partition of a barrier stage that spans every slot. */
  private static List<String> probeExecutors() {
    List<Integer> ids = Arrays.asList(0, 1, 2, 3);
    return sc.parallelize(ids, PARTITIONS)
        .rdd()
        .barrier()
        .mapPartitions(new ExecutorProbe(), false, ClassTag$.MODULE$.apply(String.class))
        .toJavaRDD()
        .collect();
  }

  @Test
  @Order(1)
  void allReduceCrossesExecutorProcesses() {
    int n = 250_003;
    List<float[]> in = inputs(n);
    assertSums(in, SparkCCL.allReduce(sc.parallelize(in, PARTITIONS), ReduceOp.SUM).collect());
    Set<String> executors =
        probeExecutors().stream()
            .map(l -> l.split(" ")[0])
            .collect(Collectors.toCollection(TreeSet::new));
    assertEquals(2, executors.size(), "the ranks ran on two executor JVMs: " + executors);
  }

  @Test
  @Order(2)
  void aTaskThatFailsMidCollectiveIsRetriedAndLeavesNothingBehind() throws IOException {
    int n = 100_000;
    List<float[]> in = inputs(n);
    JavaRDD<float[]> rdd = sc.parallelize(in, PARTITIONS);
    Path records = Files.createTempDirectory("sparkccl-retry");
    // Spark retries a failed barrier stage only when it is a shuffle map stage (a result stage
    // may have committed output), so the results go through a shuffle before they are collected.
    List<float[]> out =
        rdd.rdd()
            .barrier()
            .mapPartitions(
                new FailOnceAllReduce(1, records.toString()),
                false,
                ClassTag$.MODULE$.apply(float[].class))
            .toJavaRDD()
            .repartition(PARTITIONS)
            .collect();
    assertSums(in, out);
    for (int p = 0; p < PARTITIONS; p++) {
      // the first attempt's communicator failed on every rank: aborted by the failing task's
      // failure listener there, failed by the abort notice (or the lost connection) elsewhere
      String first = read(records, "attempt-0-partition-" + p);
      assertTrue(first.startsWith("aborted=true "), "partition " + p + ", attempt 0: " + first);
      if (p != 1) {
        assertTrue(first.contains("rank 1"), "the error should name rank 1: " + first);
      }
      // the retry ran every partition again, and its collectives succeeded
      assertEquals("aborted=false error=none", read(records, "attempt-1-partition-" + p));
    }
    for (String line : probeExecutors()) {
      assertTrue(line.endsWith(" threads=0 offHeapBytes=0"), "leftovers on executor: " + line);
    }
  }

  @Test
  @Order(3)
  void killingAnExecutorMidCollectiveFailsItsPeersInTimeAndTheRetryIsCorrect() throws Exception {
    Map<Long, String> before = byPid(probeExecutors());
    Path records = Files.createTempDirectory("sparkccl-kill");
    List<float[]> in = inputs(1 << 20);
    CompletableFuture<List<float[]>> job =
        CompletableFuture.supplyAsync(
            () ->
                sc.parallelize(in, PARTITIONS)
                    .rdd()
                    .barrier()
                    .mapPartitions(
                        new KillableAllReduce(records.toString()),
                        false,
                        ClassTag$.MODULE$.apply(float[].class))
                    .toJavaRDD()
                    .repartition(PARTITIONS)
                    .collect());
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
    for (int p = 0; p < PARTITIONS; p++) {
      while (!Files.exists(records.resolve("progress-" + p))
          || Integer.parseInt(read(records, "progress-" + p)) < 2) {
        assertFalse(job.isDone(), "the job ended before the kill");
        assertTrue(System.nanoTime() < end, "partition " + p + " made no progress in 120 s");
        Thread.sleep(20);
      }
    }
    long victim = Long.parseLong(read(records, "pid-0"));
    assertNotEquals(ProcessHandle.current().pid(), victim);
    List<Integer> lost = new ArrayList<>();
    List<Integer> survivors = new ArrayList<>();
    for (int p = 0; p < PARTITIONS; p++) {
      (Long.parseLong(read(records, "pid-" + p)) == victim ? lost : survivors).add(p);
    }
    assertFalse(survivors.isEmpty(), "every partition ran in the victim executor");
    long survivor = Long.parseLong(read(records, "pid-" + survivors.get(0)));
    Thread.sleep(30); // somewhere inside a collective
    assertTrue(ProcessHandle.of(victim).orElseThrow().destroyForcibly(), "kill -9 " + victim);
    long killedAt = System.currentTimeMillis();

    List<float[]> out = job.get(300, TimeUnit.SECONDS);
    assertSums(in, out);
    long timeoutMs = 30_000;
    boolean namedLostRank = false;
    for (int p : survivors) {
      String failed = read(records, "failed-" + p);
      long ms = Long.parseLong(failed.substring(0, failed.indexOf(' '))) - killedAt;
      System.out.println(
          "LocalClusterIT: partition " + p + " failed " + ms + " ms after kill -9: " + failed);
      assertTrue(ms <= timeoutMs + 5000, "partition " + p + " failed " + ms + " ms after the kill");
      assertTrue(failed.contains(" aborted=true "), failed);
      assertTrue(failed.contains("rank "), "the error should name a rank: " + failed);
      for (int l : lost) {
        namedLostRank |= failed.contains("rank " + l);
      }
    }
    assertTrue(namedLostRank, "no survivor's error named a lost rank " + lost);
    // the surviving executor holds no engine thread, off-heap byte or listening socket more
    Map<Long, String> after = byPid(probeExecutors());
    String was = before.get(survivor);
    String now = after.get(survivor);
    assertTrue(now != null && was != null, "survivor " + survivor + ": " + before + " / " + after);
    assertTrue(now.endsWith(" threads=0 offHeapBytes=0"), "leftovers on the survivor: " + now);
    assertEquals(listeners(was), listeners(now), "listening sockets on the survivor");
    assertFalse(after.containsKey(victim), "the killed executor still answers: " + after);
  }

  private static String read(Path dir, String name) throws IOException {
    return Files.readString(dir.resolve(name)).trim();
  }

  private static Map<Long, String> byPid(List<String> probes) {
    Map<Long, String> m = new TreeMap<>();
    for (String line : probes) {
      String pid = line.split(" ")[1];
      m.put(Long.parseLong(pid.substring(pid.indexOf('=') + 1)), line);
    }
    return m;
  }

  private static String listeners(String probe) {
    return probe.split(" ")[2];
  }
}
