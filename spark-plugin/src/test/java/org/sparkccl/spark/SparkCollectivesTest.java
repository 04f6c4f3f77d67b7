package org.sparkccl.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.apache.spark.SparkConf;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.sparkccl.ReduceOp;

/** Collectives on RDDs in a real local-mode Spark with the plugin enabled. */
@DisplayName("SparkCCL collectives on RDDs in local Spark")
@Timeout(300)
class SparkCollectivesTest {
  private static final int PARTITIONS = 4;
  private static JavaSparkContext sc;

  @BeforeAll
  static void startSpark() {
    SparkConf conf =
        new SparkConf()
            .setMaster("local[" + PARTITIONS + "]")
            .setAppName("SparkCollectivesTest")
            .set("spark.plugins", SparkCCLPlugin.class.getName())
            .set("spark.ui.enabled", "false")
            .set("spark.ccl.timeout", "30s");
    sc = new JavaSparkContext(conf);
  }

  @AfterAll
  static void stopSpark() {
    if (sc != null) {
      sc.stop();
    }
  }

  private static List<float[]> randomArrays(int n, long seed) {
    SplittableRandom rnd = new SplittableRandom(seed);
    List<float[]> arrays = new ArrayList<>();
    for (int p = 0; p < PARTITIONS; p++) {
      float[] a = new float[n];
      for (int i = 0; i < n; i++) {
        a[i] = (float) (0.5 + rnd.nextDouble());
      }
      arrays.add(a);
    }
    return arrays;
  }

  @Test
  void everyPartitionGetsTheSumOfAllPartitionsArrays() {
    for (int n : new int[] {1, 1003, 300_000}) {
      List<float[]> inputs = randomArrays(n, n);
      List<float[]> out =
          SparkCCL.allReduce(sc.parallelize(inputs, PARTITIONS), ReduceOp.SUM).collect();
      assertEquals(PARTITIONS, out.size(), "one result per partition");
      for (int p = 0; p < PARTITIONS; p++) {
        for (int i = 0; i < n; i++) {
          double ref = 0;
          for (float[] in : inputs) {
            ref += in[i];
          }
          float got = out.get(p)[i];
          assertTrue(
              Math.abs(got - ref) <= 1e-5 * Math.abs(ref),
              "n=" + n + " partition " + p + " element " + i + ": " + got + " vs " + ref);
        }
      }
    }
  }

  @Test
  void averageAndMaxMatchTheReference() {
    int n = 5000;
    List<float[]> inputs = randomArrays(n, 7);
    JavaRDD<float[]> rdd = sc.parallelize(inputs, PARTITIONS);
    // collect, not first(): Spark runs a barrier stage only as a whole
    float[] avg = SparkCCL.allReduce(rdd, ReduceOp.AVG).collect().get(3);
    float[] max = SparkCCL.allReduce(rdd, ReduceOp.MAX).collect().get(0);
    for (int i = 0; i < n; i++) {
      double sum = 0;
      float m = Float.NEGATIVE_INFINITY;
      for (float[] in : inputs) {
        sum += in[i];
        m = Math.max(m, in[i]);
      }
      assertEquals(sum / PARTITIONS, avg[i], 1e-5 * sum, "avg element " + i);
      assertEquals(m, max[i], "max element " + i);
    }
  }

  @Test
  void partitionsWithDifferentLengthsFailNamingThePartitions() {
    List<float[]> inputs = randomArrays(100, 3);
    inputs.set(2, new float[] {1f, 2f, 3f});
    Exception e =
        assertThrows(
            Exception.class,
            () -> SparkCCL.allReduce(sc.parallelize(inputs, PARTITIONS), ReduceOp.SUM).collect());
    String all = String.valueOf(e.getMessage());
    assertTrue(
        all.contains("called allReduce(count=3") || all.contains("called allReduce(count=100"),
        "the failure should name both partitions' calls: " + all);
  }

  @Test
  void broadcastAllGatherAndReduceScatterMatchTheReference() {
    int n = 2000;
    List<float[]> inputs = randomArrays(n, 11);
    JavaRDD<float[]> rdd = sc.parallelize(inputs, PARTITIONS);
    List<float[]> bcast = SparkCCL.broadcast(rdd, 2).collect();
    List<float[]> gathered = SparkCCL.allGather(rdd).collect();
    List<float[]> scattered = SparkCCL.reduceScatter(rdd, ReduceOp.SUM).collect();
    int block = n / PARTITIONS;
    for (int p = 0; p < PARTITIONS; p++) {
      assertTrue(java.util.Arrays.equals(inputs.get(2), bcast.get(p)), "broadcast, partition " + p);
      for (int k = 0; k < PARTITIONS; k++) {
        float[] part = java.util.Arrays.copyOfRange(gathered.get(p), k * n, (k + 1) * n);
        assertTrue(java.util.Arrays.equals(inputs.get(k), part), "allGather block " + k + " in " + p);
      }
      assertEquals(block, scattered.get(p).length, "reduceScatter length, partition " + p);
      for (int i = 0; i < block; i++) {
        double ref = 0;
        for (float[] in : inputs) {
          ref += in[p * block + i];
        }
        assertEquals(ref, scattered.get(p)[i], 1e-5 * ref, "reduceScatter " + p + "/" + i);
      }
    }
  }

  @Test
  void theEngineCountersShowUpAsGauges() {
    long before = org.sparkccl.EngineStats.collectivesCompleted();
    List<float[]> inputs = randomArrays(1000, 5);
    SparkCCL.allReduce(sc.parallelize(inputs, PARTITIONS), ReduceOp.SUM).collect();
    com.codahale.metrics.MetricRegistry registry = new com.codahale.metrics.MetricRegistry();
    SparkCCLPlugin.registerMetrics(registry);
    long completed = (Long) registry.getGauges().get("collectivesCompleted").getValue();
    assertTrue(completed >= before + PARTITIONS, "completed " + completed + " before " + before);
    double latency = (Double) registry.getGauges().get("meanLatencyUs.allReduce").getValue();
    assertTrue(latency > 0, "mean allReduce latency " + latency);
    long bytes = (Long) registry.getGauges().get("bytes").getValue();
    assertTrue(bytes >= 4000L * PARTITIONS, "bytes " + bytes);
  }

  @Test
  void moreBarrierPartitionsThanLocalSlotsFailAtOnce() {
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> SparkCCL.allReduce(sc.parallelize(randomArrays(8, 1), 5), ReduceOp.SUM));
    assertTrue(e.getMessage().contains("needs 5 task slots"), e.getMessage());
    SparkCCL.checkSlots("local[*]", 64);
    SparkCCL.checkSlots("spark://host:7077", 64);
    assertThrows(IllegalArgumentException.class, () -> SparkCCL.checkSlots("local", 2));
    assertThrows(IllegalArgumentException.class, () -> SparkCCL.checkSlots("local[2,3]", 3));
  }

  @Test
  void badEngineKeysFailWithTheSparkKeyInTheMessage() {
    SparkConf conf = new SparkConf().set("spark.ccl.nChannels", "0");
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> SparkCCLPlugin.checkDriverConf(conf));
    assertTrue(e.getMessage().contains("spark.ccl.nChannels"), e.getMessage());
    SparkConf dyn = new SparkConf().set("spark.dynamicAllocation.enabled", "true");
    IllegalStateException d =
        assertThrows(IllegalStateException.class, () -> SparkCCLPlugin.checkDriverConf(dyn));
    assertTrue(d.getMessage().contains("dynamic allocation"), d.getMessage());
  }
}
