package org.sparkccl.spark;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import org.apache.spark.SparkConf;
import org.apache.spark.api.java.JavaSparkContext;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.sparkccl.ReduceOp;

/** The task slots read from every master, and the fail-fast check in a real Spark. */
@DisplayName("Task slots of an application")
@Timeout(120)
class TaskSlotsTest {
  private static final int MACHINE_CORES = 6;

  private static SparkConf conf(String master) {
    return new SparkConf(false).set("spark.master", master);
  }

  private static int slots(SparkConf conf) {
    TaskSlots s = TaskSlots.of(conf, MACHINE_CORES);
    return s == null ? -1 : s.count();
  }

  @ParameterizedTest(name = "{0} with spark.task.cpus={1} offers {2}")
  @CsvSource(
      delimiter = ';',
      value = {
        "local; 1; 1",
        "local[3]; 1; 3",
        "local[ 3 ]; 1; 3",
        "local[4]; 2; 2",
        "local[*]; 1; 6",
        "local[*]; 2; 3",
        "local[2,3]; 1; 2",
        "local[5, 4]; 1; 5",
        "local[*,4]; 1; 6",
        "local[*, 4]; 3; 2",
        "local-cluster[2,2,1024]; 1; 4",
        "local-cluster[ 3 , 4 , 512 ]; 2; 6",
        "yarn; 1; 2",
        "k8s://https://host:6443; 1; 2",
        "spark://host:7077; 1; -1",
        "mesos://host:5050; 1; -1",
      })
  void everyMasterTellsItsSlotsOrSaysItCannot(String master, int taskCpus, int expected) {
    SparkConf c = conf(master).set("spark.task.cpus", Integer.toString(taskCpus));
    assertEquals(expected, slots(c), master);
  }

  @Test
  void clusterMastersCountExecutorsCoresAndResources() {
    SparkConf yarn =
        conf("yarn").set("spark.executor.instances", "3").set("spark.executor.cores", "4");
    assertEquals(12, slots(yarn));
    assertEquals(6, slots(yarn.clone().set("spark.task.cpus", "2")));
    yarn.set("spark.executor.resource.gpu.amount", "1").set("spark.task.resource.gpu.amount", "1");
    assertEquals(3, slots(yarn), "one GPU per executor");
    assertTrue(TaskSlots.of(yarn, 1).source().contains("by gpu"), TaskSlots.of(yarn, 1).source());
    SparkConf standalone = conf("spark://host:7077").set("spark.cores.max", "10");
    assertEquals(10, slots(standalone));
    assertEquals(8, slots(standalone.set("spark.executor.cores", "4")), "2 executors of 4 cores");
    SparkConf statik =
        conf("spark://host:7077")
            .set("spark.executor.instances", "3")
            .set("spark.executor.cores", "4")
            .set("spark.task.cpus", "2");
    assertEquals(6, slots(statik));
  }

  @Test
  void dynamicAllocationOnAClusterIsRefusedWithWhatToSet() {
    SparkConf dyn = conf("yarn").set("spark.dynamicAllocation.enabled", "true");
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> TaskSlots.of(dyn, 2));
    assertTrue(e.getMessage().contains("spark.dynamicAllocation.enabled=false"), e.getMessage());
    // local masters ignore dynamic allocation, as Spark does
    assertEquals(3, slots(conf("local[3]").set("spark.dynamicAllocation.enabled", "true")));
  }

  @Test
  void aShortfallSaysTasksSlotsAndWhatToChange() {
    IllegalArgumentException local =
        assertThrows(
            IllegalArgumentException.class,
            () -> TaskSlots.check(conf("local[2,3]").set("spark.task.cpus", "1"), 3));
    assertTrue(local.getMessage().contains("needs 3 task slots"), local.getMessage());
    assertTrue(local.getMessage().contains("offers 2"), local.getMessage());
    assertTrue(local.getMessage().contains("e.g. local[3]"), local.getMessage());
    IllegalArgumentException cluster =
        assertThrows(
            IllegalArgumentException.class,
            () -> TaskSlots.check(conf("local-cluster[2,2,1024]"), 5));
    assertTrue(cluster.getMessage().contains("offers 4"), cluster.getMessage());
    assertTrue(cluster.getMessage().contains("local-cluster[2,3,1024]"), cluster.getMessage());
    TaskSlots.check(conf("local-cluster[2,2,1024]"), 4);
    TaskSlots.check(conf("spark://host:7077"), 1000);
    assertNull(TaskSlots.of(conf("spark://host:7077"), 2));
  }

  @Test
  void aLocalStarMasterWithTooFewCoresFailsAtOnceAndWorksWithEnough() {
    int cores = Runtime.getRuntime().availableProcessors();
    SparkConf sparkConf =
        new SparkConf()
            .setMaster("local[*]")
            .setAppName("TaskSlotsTest")
            .set("spark.plugins", SparkCCLPlugin.class.getName())
            .set("spark.ui.enabled", "false")
            .set("spark.ccl.timeout", "30s");
    try (JavaSparkContext sc = new JavaSparkContext(sparkConf)) {
      // Spark's own check would retry this stage every 15 s for minutes
      IllegalArgumentException e =
          assertTimeoutPreemptively(
              Duration.ofSeconds(20),
              () ->
                  assertThrows(
                      IllegalArgumentException.class,
                      () ->
                          SparkCCL.allReduce(
                                  sc.parallelize(
                                      SparkCollectivesTest.randomArrays(cores + 1, 16, 7),
                                      cores + 1),
                                  ReduceOp.SUM)
                              .collect()));
      assertTrue(e.getMessage().contains("needs " + (cores + 1) + " task slots"), e.getMessage());
      assertTrue(e.getMessage().contains("local[*]: the " + cores + " cores"), e.getMessage());
      List<float[]> inputs = SparkCollectivesTest.randomArrays(cores, 16, 8);
      List<float[]> out = SparkCCL.allReduce(sc.parallelize(inputs, cores), ReduceOp.SUM).collect();
      float[] ref = new float[16];
      for (float[] a : inputs) {
        for (int i = 0; i < ref.length; i++) {
          ref[i] += a[i];
        }
      }
      assertEquals(cores, out.size());
      for (float[] got : out) {
        assertArrayEquals(ref, got, 1e-5f);
      }
    }
  }
}
