package org.sparkccl.spark;

import java.time.Duration;
import org.apache.spark.BarrierTaskContext;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkContext;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.rdd.RDD;
import org.apache.spark.util.TaskCompletionListener;
import org.apache.spark.util.TaskFailureListener;
import org.sparkccl.Communicator;
import org.sparkccl.DataType;
import org.sparkccl.ReduceOp;
import org.sparkccl.config.CclConfig;
import org.sparkccl.device.DeviceBuffer;
import org.sparkccl.device.DeviceSpec;
import org.sparkccl.spark.CollectiveSpec.Kind;
import scala.reflect.ClassTag;
import scala.reflect.ClassTag$;

/**
 * SparkCCL inside Spark: a communicator per barrier task, and collectives on RDDs.
 *
 * <p>On RDDs of device buffers (any number per partition, the same count and sizes in every
 * partition; the {@code i}-th buffers of all partitions form one collective):
 *
 * <pre>{@code
 * JavaRDD<DeviceBuffer> grads = SparkBuffers.fromFloatArrays(gradientArrays);
 * JavaRDD<DeviceBuffer> summed = SparkCCL.allReduce(grads, DataType.FLOAT32, ReduceOp.SUM);
 * List<float[]> back = SparkBuffers.toFloatArrays(summed).collect();
 * }</pre>
 *
 * <p>On ordinary arrays, the same in one call:
 *
 * <pre>{@code
 * JavaRDD<float[]> summed = SparkCCL.allReduce(gradientArrays, ReduceOp.SUM);
 * }</pre>
 *
 * <p>Inside your own barrier stage:
 *
 * <pre>{@code
 * rdd.barrier().mapPartitions(it -> {
 *   Communicator comm = SparkCCL.communicator(BarrierTaskContext.get());
 *   comm.allReduce(buf, buf, count, DataType.FLOAT32, ReduceOp.SUM);
 *   ...
 * });
 * }</pre>
 *
 * <p>Each collective is one barrier stage, which Spark runs only as a whole: use actions over every
 * partition ({@code collect}, {@code count}, {@code foreach}, or {@code persist} first), not {@code
 * first} or {@code take}, which Spark rejects for barrier stages. The result buffers are new
 * buffers on the inputs' device; the inputs are left as they were.
 */
public final class SparkCCL {
  private SparkCCL() {}

  /**
   * Forms the communicator of a barrier stage: rank = partition id, with the executor's engine
   * configuration. It is closed when the task completes and aborted when it fails or is killed, so
   * a failed attempt leaves no threads, sockets or memory behind. Every attempt draws a fresh
   * random token, and the transport refuses connections that do not carry it, so a straggler of an
   * earlier attempt cannot join a retry.
   */
  public static Communicator communicator(BarrierTaskContext context) {
    return communicator(context, null);
  }

  /**
   * {@link #communicator(BarrierTaskContext)} with its own collective timeout in place of the
   * executor's {@code spark.ccl.timeout} ({@code null} keeps the executor's).
   */
  public static Communicator communicator(BarrierTaskContext context, Duration timeout) {
    return communicator(context, ExecutorEngine.get().configFor(context.resourcesJMap()), timeout);
  }

  /**
   * The communicator of a barrier task on host memory, whatever the task's device: a Python
   * worker's arrays are host memory shared with this JVM.
   */
  static Communicator hostCommunicator(BarrierTaskContext context, Duration timeout) {
    CclConfig config =
        ExecutorEngine.get().config().toBuilder().device(DeviceSpec.parse("host")).build();
    return communicator(context, config, timeout);
  }

  private static Communicator communicator(
      BarrierTaskContext context, CclConfig executorConfig, Duration timeout) {
    CclConfig config = executorConfig;
    if (timeout != null) {
      config = config.toBuilder().timeout(timeout).build();
    }
    Communicator comm = Communicator.create(new BarrierBootstrap(context), config);
    TaskFailureListener onFailure = (ctx, error) -> comm.abort();
    TaskCompletionListener onCompletion = ctx -> comm.close();
    context.addTaskFailureListener(onFailure);
    context.addTaskCompletionListener(onCompletion);
    return comm;
  }

  // ---- RDDs of device buffers ----

  /** Every partition gets the element-wise reduction of the partitions' buffers. */
  public static JavaRDD<DeviceBuffer> allReduce(
      JavaRDD<DeviceBuffer> rdd, DataType dtype, ReduceOp op) {
    return JavaRDD.fromRDD(allReduce(rdd.rdd(), dtype, op), bufferTag());
  }

  /** The Scala-friendly form of {@link #allReduce(JavaRDD, DataType, ReduceOp)}. */
  public static RDD<DeviceBuffer> allReduce(RDD<DeviceBuffer> rdd, DataType dtype, ReduceOp op) {
    return runOnBuffers(rdd, new CollectiveSpec(Kind.ALL_REDUCE, dtype, op, 0));
  }

  /** Every partition gets a copy of partition {@code root}'s buffers. */
  public static JavaRDD<DeviceBuffer> broadcast(
      JavaRDD<DeviceBuffer> rdd, DataType dtype, int root) {
    checkRoot(root, rdd.getNumPartitions());
    return JavaRDD.fromRDD(
        runOnBuffers(rdd.rdd(), new CollectiveSpec(Kind.BROADCAST, dtype, null, root)),
        bufferTag());
  }

  /** Every partition gets all partitions' buffers concatenated in partition order. */
  public static JavaRDD<DeviceBuffer> allGather(JavaRDD<DeviceBuffer> rdd, DataType dtype) {
    return JavaRDD.fromRDD(
        runOnBuffers(rdd.rdd(), new CollectiveSpec(Kind.ALL_GATHER, dtype, null, 0)), bufferTag());
  }

  /**
   * Each buffer holds one block per partition; partition {@code p} gets the reduction over
   * partitions of block {@code p}.
   */
  public static JavaRDD<DeviceBuffer> reduceScatter(
      JavaRDD<DeviceBuffer> rdd, DataType dtype, ReduceOp op) {
    return JavaRDD.fromRDD(
        runOnBuffers(rdd.rdd(), new CollectiveSpec(Kind.REDUCE_SCATTER, dtype, op, 0)),
        bufferTag());
  }

  // ---- RDDs of float[]: the same collectives, converted in and out within the stage ----

  /**
   * All-reduces the float arrays of an RDD, as one barrier stage; every partition of the result
   * holds the reduced arrays. Partitions that disagree fail with a message naming them.
   */
  public static JavaRDD<float[]> allReduce(JavaRDD<float[]> rdd, ReduceOp op) {
    return JavaRDD.fromRDD(allReduce(rdd.rdd(), op), floatArrayTag());
  }

  /** The Scala-friendly form of {@link #allReduce(JavaRDD, ReduceOp)}. */
  public static RDD<float[]> allReduce(RDD<float[]> rdd, ReduceOp op) {
    return runOnArrays(rdd, new CollectiveSpec(Kind.ALL_REDUCE, DataType.FLOAT32, op, 0));
  }

  /** Every partition gets partition {@code root}'s arrays (all arrays must have one length). */
  public static JavaRDD<float[]> broadcast(JavaRDD<float[]> rdd, int root) {
    checkRoot(root, rdd.getNumPartitions());
    return JavaRDD.fromRDD(
        runOnArrays(rdd.rdd(), new CollectiveSpec(Kind.BROADCAST, DataType.FLOAT32, null, root)),
        floatArrayTag());
  }

  /** Every partition gets all partitions' arrays concatenated in partition order. */
  public static JavaRDD<float[]> allGather(JavaRDD<float[]> rdd) {
    return JavaRDD.fromRDD(
        runOnArrays(rdd.rdd(), new CollectiveSpec(Kind.ALL_GATHER, DataType.FLOAT32, null, 0)),
        floatArrayTag());
  }

  /**
   * Each partition's array holds one block per partition; partition {@code p} gets the reduction
   * over partitions of block {@code p}.
   */
  public static JavaRDD<float[]> reduceScatter(JavaRDD<float[]> rdd, ReduceOp op) {
    return JavaRDD.fromRDD(
        runOnArrays(rdd.rdd(), new CollectiveSpec(Kind.REDUCE_SCATTER, DataType.FLOAT32, op, 0)),
        floatArrayTag());
  }

  private static RDD<DeviceBuffer> runOnBuffers(RDD<DeviceBuffer> rdd, CollectiveSpec spec) {
    checkSlots(rdd.context(), rdd.getNumPartitions());
    return rdd.barrier().mapPartitions(new BarrierCollective.OnBuffers(spec), false, bufferTag());
  }

  private static RDD<float[]> runOnArrays(RDD<float[]> rdd, CollectiveSpec spec) {
    return runOnArrays(rdd, spec, HostArrays::toBuffer, HostArrays::toFloats, floatArrayTag());
  }

  /** A collective on arrays of any kind, converted in and out within the barrier stage. */
  static <T> RDD<T> runOnArrays(
      RDD<T> rdd,
      CollectiveSpec spec,
      BarrierCollective.ToBuffer<T> toBuffer,
      BarrierCollective.FromBuffer<T> fromBuffer,
      ClassTag<T> tag) {
    checkSlots(rdd.context(), rdd.getNumPartitions());
    if (spec.kind() == Kind.BROADCAST) {
      checkRoot(spec.root(), rdd.getNumPartitions());
    }
    return rdd.barrier()
        .mapPartitions(new BarrierCollective.OnArrays<>(spec, toBuffer, fromBuffer), false, tag);
  }

  private static void checkRoot(int root, int partitions) {
    if (root < 0 || root >= partitions) {
      throw new IllegalArgumentException(
          "root=" + root + " is not a partition; expected 0.." + (partitions - 1));
    }
  }

  private static void checkSlots(SparkContext sc, int partitions) {
    TaskSlots.check(sc.getConf(), partitions);
  }

  /**
   * A barrier stage needs a task slot for every partition at once. Where the slot count is known
   * ({@link TaskSlots}) a shortfall fails here, with what to change, instead of in Spark's own
   * check, which retries for minutes first.
   */
  public static void checkSlots(SparkConf conf, int partitions) {
    TaskSlots.check(conf, partitions);
  }

  /** Task slots of the application of {@code conf} run by {@code master}, or -1 where unknown. */
  public static int knownSlots(SparkConf conf, String master) {
    TaskSlots slots = TaskSlots.of(conf.clone().setMaster(master));
    return slots == null ? -1 : slots.count();
  }

  static ClassTag<float[]> floatArrayTag() {
    return ClassTag$.MODULE$.apply(float[].class);
  }

  static ClassTag<DeviceBuffer> bufferTag() {
    return ClassTag$.MODULE$.apply(DeviceBuffer.class);
  }
}
