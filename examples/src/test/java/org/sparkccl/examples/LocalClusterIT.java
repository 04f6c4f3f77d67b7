package org.sparkccl.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.apache.spark.SparkConf;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
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
  void aTaskThatFailsMidCollectiveIsRetriedAndLeavesNothingBehind() {
    int n = 100_000;
    List<float[]> in = inputs(n);
    JavaRDD<float[]> rdd = sc.parallelize(in, PARTITIONS);
    // Spark retries a failed barrier stage only when it is a shuffle map stage (a result stage
    // may have committed output), so the results go through a shuffle before they are collected.
    List<float[]> out =
        rdd.rdd()
            .barrier()
            .mapPartitions(new FailOnceAllReduce(1), false, ClassTag$.MODULE$.apply(float[].class))
            .toJavaRDD()
            .repartition(PARTITIONS)
            .collect();
    assertSums(in, out);
    for (String line : probeExecutors()) {
      assertTrue(line.endsWith(" threads=0 offHeapBytes=0"), "leftovers on executor: " + line);
    }
  }
}
