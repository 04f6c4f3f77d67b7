package org.sparkccl.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.apache.spark.BarrierTaskContext;
import org.apache.spark.SparkConf;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.sparkccl.Communicator;
import org.sparkccl.DataType;
import org.sparkccl.ReduceOp;
import org.sparkccl.device.DeviceBuffer;
import scala.jdk.javaapi.CollectionConverters;
import scala.runtime.AbstractFunction1;

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
    return randomArrays(PARTITIONS, n, seed);
  }

  /** {@code count} arrays of {@code n} floats in [0.5, 1.5). */
  static List<float[]> randomArrays(int count, int n, long seed) {
    SplittableRandom rnd = new SplittableRandom(seed);
    List<float[]> arrays = new ArrayList<>();
    for (int p = 0; p < count; p++) {
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
  void inTaskCommunicatorsOfLocalModeShareTheInMemoryRing() {
    List<String> got = BarrierStage.of(sc, PARTITIONS, new RingOfTask(10_001)).collect();
    assertEquals(PARTITIONS, got.size());
    for (String line : got) {
      String[] f = line.split(" ");
      assertEquals("local", f[1], "partition " + f[0] + ": the ring of local mode's tasks");
      assertTrue(Double.parseDouble(f[2]) < 1e-5, "partition " + f[0] + ": error " + f[2]);
    }
  }

  /**
   * A barrier task's in-task allReduce of random floats: "partition ring-transport worst-error",
   * the error relative to sums this task makes in double from the same seeded inputs.
   */
  private static final class RingOfTask
      extends AbstractFunction1<
          scala.collection.Iterator<Integer>, scala.collection.Iterator<String>>
      implements Serializable {
    private static final long serialVersionUID = 1L;
    private final int n;

    RingOfTask(int n) {
      this.n = n;
    }

    @Override
    public scala.collection.Iterator<String> apply(scala.collection.Iterator<Integer> ignored) {
      BarrierTaskContext context = BarrierTaskContext.get();
      int p = context.partitionId();
      List<float[]> inputs = randomArrays(PARTITIONS, n, 31);
      try (Communicator comm = SparkCCL.communicator(context);
          DeviceBuffer buf = comm.device().allocate(4L * n)) {
        buf.copyFromHost(inputs.get(p), 0);
        comm.allReduce(buf, buf, n, DataType.FLOAT32, ReduceOp.SUM);
        float[] sum = new float[n];
        buf.copyToHost(0, sum);
        double worst = 0;
        for (int i = 0; i < n; i++) {
          double ref = 0;
          for (float[] a : inputs) {
            ref += a[i];
          }
          worst = Math.max(worst, Math.abs(sum[i] - ref) / ref);
        }
        String line = p + " " + comm.ringTransport() + " " + worst;
        return CollectionConverters.asScala(List.of(line).iterator());
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
        all.contains("partition(s) [0, 1, 3] hold 1 buffer(s) of [100] float32 elements ([400]")
            && all.contains("partition(s) [2] hold 1 buffer(s) of [3] float32 elements ([12]")
            && all.contains("CclMismatchException"),
        "the failure should name the partitions and what each holds: " + all);
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
        assertTrue(
            java.util.Arrays.equals(inputs.get(k), part), "allGather block " + k + " in " + p);
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
    long before = org.sparkccl.comm.EngineStats.collectivesCompleted();
    List<float[]> inputs = randomArrays(1000, 5);
    SparkCCL.allReduce(sc.parallelize(inputs, PARTITIONS), ReduceOp.SUM).collect();
    com.codahale.metrics.MetricRegistry registry = new com.codahale.metrics.MetricRegistry();
    SparkCCLPlugin.registerMetrics(registry);
    long completed = (Long) registry.getGauges().get("collectivesCompleted").getValue();
    assertTrue(completed >= before + PARTITIONS, "completed " + completed + " before " + before);
    double latency = (Double) registry.getGauges().get("meanLatencyUs.allReduce").getValue();
    assertTrue(latency > 0, "mean allReduce latency " + latency);
    double algBw = (Double) registry.getGauges().get("lastAlgBwGBps").getValue();
    double busBw = (Double) registry.getGauges().get("lastBusBwGBps").getValue();
    // the last collective was a 4-rank allReduce: busbw = algbw x 2(n-1)/n = 1.5 x algbw
    assertTrue(algBw > 0, "algbw " + algBw);
    assertEquals(1.5 * algBw, busBw, 1e-9 * busBw, "busbw of a 4-rank allReduce");
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
    assertTrue(e.getMessage().contains("offers 4"), e.getMessage());
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
    SparkConf local = new SparkConf().set("spark.ccl.transport", "local");
    IllegalStateException l =
        assertThrows(IllegalStateException.class, () -> SparkCCLPlugin.checkDriverConf(local));
    assertTrue(l.getMessage().contains("spark.ccl.transport=local"), l.getMessage());
    for (String oneJvm : new String[] {"local", "local[4]", "local[*,2]"}) {
      SparkCCLPlugin.checkDriverConf(local.clone().setMaster(oneJvm)); // accepted: one JVM
    }
    SparkConf cluster = local.clone().setMaster("local-cluster[2,2,1024]");
    IllegalStateException c =
        assertThrows(IllegalStateException.class, () -> SparkCCLPlugin.checkDriverConf(cluster));
    assertTrue(c.getMessage().contains("under master local-cluster[2,2,1024]"), c.getMessage());
    SparkConf badDevice = new SparkConf().set("spark.ccl.device", "tpu");
    IllegalArgumentException b =
        assertThrows(
            IllegalArgumentException.class, () -> SparkCCLPlugin.checkDriverConf(badDevice));
    assertTrue(b.getMessage().contains("spark.ccl.device=tpu"), b.getMessage());
    SparkConf shared =
        new SparkConf()
            .set("spark.ccl.device", "cuda")
            .set("spark.task.resource.gpu.amount", "0.5");
    IllegalStateException f =
        assertThrows(IllegalStateException.class, () -> SparkCCLPlugin.checkDriverConf(shared));
    assertTrue(f.getMessage().contains("spark.task.resource.gpu.amount=0.5"), f.getMessage());
    SparkCCLPlugin.checkDriverConf(shared.set("spark.task.resource.gpu.amount", "1"));
    SparkCCLPlugin.checkDriverConf(
        new SparkConf()
            .set("spark.ccl.device", "auto")
            .set("spark.task.resource.gpu.amount", "0.5"));
  }

  @Test
  void bufferRddsReduceSeveralBuffersPerPartitionInEveryPrecision() {
    // two buffers per partition: the i-th buffers of all partitions are reduced together
    List<float[]> small = randomArrays(777, 21);
    List<float[]> large = randomArrays(70_001, 22);
    List<float[]> interleaved = new ArrayList<>();
    for (int p = 0; p < PARTITIONS; p++) {
      interleaved.add(small.get(p));
      interleaved.add(large.get(p));
    }
    JavaRDD<DeviceBuffer> bufs =
        SparkBuffers.fromFloatArrays(sc.parallelize(interleaved, PARTITIONS));
    List<float[]> out =
        SparkBuffers.toFloatArrays(SparkCCL.allReduce(bufs, DataType.FLOAT32, ReduceOp.SUM))
            .collect();
    assertEquals(2 * PARTITIONS, out.size());
    for (int k = 0; k < out.size(); k++) {
      List<float[]> inputs = k % 2 == 0 ? small : large;
      for (int i = 0; i < inputs.get(0).length; i++) {
        double ref = 0;
        for (float[] in : inputs) {
          ref += in[i];
        }
        assertEquals(ref, out.get(k)[i], 1e-5 * ref, "result " + k + " element " + i);
      }
    }

    SplittableRandom rnd = new SplittableRandom(5);
    List<double[]> doubles = new ArrayList<>();
    for (int p = 0; p < PARTITIONS; p++) {
      doubles.add(rnd.doubles(1001, -1, 1).toArray());
    }
    List<double[]> mins =
        SparkBuffers.toDoubleArrays(
                SparkCCL.allReduce(
                    SparkBuffers.fromDoubleArrays(sc.parallelize(doubles, PARTITIONS)),
                    DataType.FLOAT64,
                    ReduceOp.MIN))
            .collect();
    for (double[] m : mins) {
      for (int i = 0; i < m.length; i++) {
        double ref = Double.POSITIVE_INFINITY;
        for (double[] d : doubles) {
          ref = Math.min(ref, d[i]);
        }
        assertEquals(ref, m[i], "min element " + i);
      }
    }
  }

  @Test
  void bufferRddBroadcastAllGatherAndReduceScatterMatchTheReference() {
    int n = 1200;
    List<float[]> inputs = randomArrays(n, 31);
    JavaRDD<DeviceBuffer> bufs =
        SparkBuffers.fromFloatArrays(sc.parallelize(inputs, PARTITIONS)).cache();
    List<float[]> bcast =
        SparkBuffers.toFloatArrays(SparkCCL.broadcast(bufs, DataType.FLOAT32, 1)).collect();
    List<float[]> gathered =
        SparkBuffers.toFloatArrays(SparkCCL.allGather(bufs, DataType.FLOAT32)).collect();
    List<float[]> scattered =
        SparkBuffers.toFloatArrays(SparkCCL.reduceScatter(bufs, DataType.FLOAT32, ReduceOp.MAX))
            .collect();
    int block = n / PARTITIONS;
    for (int p = 0; p < PARTITIONS; p++) {
      assertTrue(java.util.Arrays.equals(inputs.get(1), bcast.get(p)), "broadcast " + p);
      for (int k = 0; k < PARTITIONS; k++) {
        float[] part = java.util.Arrays.copyOfRange(gathered.get(p), k * n, (k + 1) * n);
        assertTrue(java.util.Arrays.equals(inputs.get(k), part), "allGather " + k + " in " + p);
      }
      for (int i = 0; i < block; i++) {
        float ref = Float.NEGATIVE_INFINITY;
        for (float[] in : inputs) {
          ref = Math.max(ref, in[p * block + i]);
        }
        assertEquals(ref, scattered.get(p)[i], "reduceScatter " + p + "/" + i);
      }
    }
    assertThrows(
        IllegalArgumentException.class, () -> SparkCCL.broadcast(bufs, DataType.FLOAT32, 4));
    bufs.unpersist();
  }

  @Test
  void partitionsWithDifferentBufferCountsFailNamingThePartitions() {
    List<float[]> inputs = new ArrayList<>(randomArrays(10, 41));
    inputs.add(new float[10]); // the last partition gets two arrays
    Exception e =
        assertThrows(
            Exception.class,
            () -> SparkCCL.allReduce(sc.parallelize(inputs, PARTITIONS), ReduceOp.SUM).collect());
    assertTrue(
        String.valueOf(e.getMessage()).contains("partition(s) [3] hold 2 buffer(s)"),
        e.getMessage());
    Exception odd =
        assertThrows(
            Exception.class,
            () ->
                SparkCCL.reduceScatter(sc.parallelize(randomArrays(6, 1), PARTITIONS), ReduceOp.SUM)
                    .collect());
    assertTrue(
        String.valueOf(odd.getMessage()).contains("expects a multiple of the 4 partitions"),
        odd.getMessage());
  }

  @Test
  void aDatasetArrayColumnBecomesBuffersAndIsReduced() {
    SparkSession spark = SparkSession.builder().sparkContext(sc.sc()).getOrCreate();
    int n = 300;
    List<float[]> arrays = randomArrays(n, 51);
    List<Row> rows = new ArrayList<>();
    for (int p = 0; p < PARTITIONS; p++) {
      rows.add(RowFactory.create(p, arrays.get(p)));
    }
    StructType schema =
        new StructType()
            .add("id", DataTypes.IntegerType)
            .add("gradient", DataTypes.createArrayType(DataTypes.FloatType, false));
    // one row per partition
    Dataset<Row> df = spark.createDataFrame(sc.parallelize(rows, PARTITIONS), schema);
    assertEquals(DataType.FLOAT32, SparkBuffers.dataType(df, "gradient"));
    List<float[]> out =
        SparkBuffers.toFloatArrays(
                SparkCCL.allReduce(
                    SparkBuffers.fromArrayColumn(df, "gradient"), DataType.FLOAT32, ReduceOp.SUM))
            .collect();
    assertEquals(PARTITIONS, out.size());
    for (float[] o : out) {
      for (int i = 0; i < n; i++) {
        double ref = 0;
        for (float[] a : arrays) {
          ref += a[i];
        }
        assertEquals(ref, o[i], 1e-5 * ref, "element " + i);
      }
    }
    IllegalArgumentException wrong =
        assertThrows(IllegalArgumentException.class, () -> SparkBuffers.dataType(df, "id"));
    assertTrue(
        wrong.getMessage().contains("expected array<float> or array<double>"), wrong.getMessage());
    assertThrows(IllegalArgumentException.class, () -> SparkBuffers.dataType(df, "nope"));
  }
}
