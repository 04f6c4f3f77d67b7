package org.sparkccl.spark;

import java.nio.FloatBuffer;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import org.apache.spark.BarrierTaskContext;
import org.apache.spark.SparkEnv;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.rdd.RDD;
import org.apache.spark.util.TaskCompletionListener;
import org.apache.spark.util.TaskFailureListener;
import org.sparkccl.Communicator;
import org.sparkccl.DataType;
import org.sparkccl.ReduceOp;
import org.sparkccl.device.HostBuffer;
import org.sparkccl.device.HostDevice;
import scala.jdk.javaapi.CollectionConverters;
import scala.reflect.ClassTag;
import scala.reflect.ClassTag$;
import scala.runtime.AbstractFunction1;

/**
 * SparkCCL inside Spark: a communicator per barrier task, and collectives on RDDs.
 *
 * <pre>{@code
 * JavaRDD<float[]> gradients = ...;            // one array per partition
 * JavaRDD<float[]> summed = SparkCCL.allReduce(gradients, ReduceOp.SUM);
 * float[] result = summed.collect().get(0);    // the same in every partition
 * }</pre>
 *
 * <p>The result is a barrier stage, which Spark runs only as a whole: use actions over every
 * partition ({@code collect}, {@code count}, {@code foreach}, or {@code persist} first), not
 * {@code first} or {@code take}, which Spark rejects for barrier stages.
 */
public final class SparkCCL {
  private SparkCCL() {}

  /**
   * Forms the communicator of a barrier stage: rank = partition id. It is closed when the task
   * completes and aborted when it fails, so a failed attempt leaves nothing behind.
   */
  public static Communicator communicator(BarrierTaskContext context) {
    Communicator comm =
        Communicator.create(
            new BarrierBootstrap(context), SparkConfKeys.engineConfig(SparkEnv.get().conf()));
    TaskFailureListener onFailure = (ctx, error) -> comm.abort();
    TaskCompletionListener onCompletion = ctx -> comm.close();
    context.addTaskFailureListener(onFailure);
    context.addTaskCompletionListener(onCompletion);
    return comm;
  }

  /**
   * All-reduces the arrays of an RDD that holds exactly one {@code float[]} per partition, as one
   * barrier stage; every partition of the result holds the reduced array. Partitions whose
   * arrays differ in length fail with a message naming both partitions.
   */
  public static JavaRDD<float[]> allReduce(JavaRDD<float[]> rdd, ReduceOp op) {
    return new JavaRDD<>(allReduce(rdd.rdd(), op), floatArrayTag());
  }

  /** The Scala-friendly form of {@link #allReduce(JavaRDD, ReduceOp)}. */
  public static RDD<float[]> allReduce(RDD<float[]> rdd, ReduceOp op) {
    return run(rdd, new PartitionCollective(Kind.ALL_REDUCE, op, 0));
  }

  /** Every partition gets partition {@code root}'s array (all arrays must have one length). */
  public static JavaRDD<float[]> broadcast(JavaRDD<float[]> rdd, int root) {
    return new JavaRDD<>(run(rdd.rdd(), new PartitionCollective(Kind.BROADCAST, null, root)),
        floatArrayTag());
  }

  /** Every partition gets all partitions' arrays concatenated in partition order. */
  public static JavaRDD<float[]> allGather(JavaRDD<float[]> rdd) {
    return new JavaRDD<>(run(rdd.rdd(), new PartitionCollective(Kind.ALL_GATHER, null, 0)),
        floatArrayTag());
  }

  /**
   * Each partition's array holds one block per partition; partition {@code p} gets the reduction
   * over partitions of block {@code p}.
   */
  public static JavaRDD<float[]> reduceScatter(JavaRDD<float[]> rdd, ReduceOp op) {
    return new JavaRDD<>(run(rdd.rdd(), new PartitionCollective(Kind.REDUCE_SCATTER, op, 0)),
        floatArrayTag());
  }

  private static RDD<float[]> run(RDD<float[]> rdd, PartitionCollective f) {
    checkSlots(rdd.context().getConf().get("spark.master", ""), rdd.getNumPartitions());
    return rdd.barrier().mapPartitions(f, false, floatArrayTag());
  }

  /**
   * A barrier stage needs a task slot for every partition at once. Where the slot count is known
   * (local masters) a shortfall fails here, with what to change, instead of in Spark's own check,
   * which retries for minutes first.
   */
  static void checkSlots(String master, int partitions) {
    java.util.regex.Matcher m =
        java.util.regex.Pattern.compile("local\\[(\\d+)(,\\d+)?\\]").matcher(master);
    int slots = master.equals("local") ? 1 : m.matches() ? Integer.parseInt(m.group(1)) : -1;
    if (slots > 0 && partitions > slots) {
      throw new IllegalArgumentException(
          "the barrier stage needs " + partitions + " task slots at once but master " + master
              + " has " + slots + "; use at most " + slots + " partitions or a master with more"
              + " slots");
    }
  }

  private static ClassTag<float[]> floatArrayTag() {
    return ClassTag$.MODULE$.apply(float[].class);
  }

  private enum Kind {
    ALL_REDUCE,
    BROADCAST,
    ALL_GATHER,
    REDUCE_SCATTER
  }

  /** One barrier task's part: join the communicator, run the collective on the partition's array. */
  private static final class PartitionCollective
      extends AbstractFunction1<scala.collection.Iterator<float[]>, scala.collection.Iterator<float[]>>
      implements java.io.Serializable {
    private final Kind kind;
    private final ReduceOp op;
    private final int root;

    PartitionCollective(Kind kind, ReduceOp op, int root) {
      this.kind = kind;
      this.op = op;
      this.root = root;
    }

    @Override
    public scala.collection.Iterator<float[]> apply(scala.collection.Iterator<float[]> input) {
      BarrierTaskContext context = BarrierTaskContext.get();
      List<float[]> arrays = new ArrayList<>();
      Iterator<float[]> it = CollectionConverters.asJava(input);
      it.forEachRemaining(arrays::add);
      if (arrays.size() != 1) {
        throw new IllegalArgumentException(
            "partition " + context.partitionId() + " holds " + arrays.size()
                + " arrays; SparkCCL expects exactly one float[] per partition");
      }
      float[] data = arrays.get(0);
      int n = context.numPartitions();
      if (kind == Kind.REDUCE_SCATTER && data.length % n != 0) {
        throw new IllegalArgumentException(
            "partition " + context.partitionId() + " holds " + data.length + " floats;"
                + " reduceScatter expects a multiple of the " + n + " partitions");
      }
      Communicator comm = communicator(context);
      long outLength =
          switch (kind) {
            case ALL_GATHER -> (long) data.length * n;
            case REDUCE_SCATTER -> data.length / n;
            default -> data.length;
          };
      try (HostBuffer in = HostDevice.INSTANCE.allocate(4L * data.length);
          HostBuffer out = HostDevice.INSTANCE.allocate(4L * outLength)) {
        in.memory().asFloatBuffer().put(0, data);
        switch (kind) {
          case ALL_REDUCE -> comm.allReduce(in, out, data.length, DataType.FLOAT32, op);
          case BROADCAST -> comm.broadcast(in, out, data.length, DataType.FLOAT32, root);
          case ALL_GATHER -> comm.allGather(in, out, data.length, DataType.FLOAT32);
          case REDUCE_SCATTER -> comm.reduceScatter(in, out, outLength, DataType.FLOAT32, op);
        }
        float[] result = new float[(int) outLength];
        FloatBuffer view = out.memory().asFloatBuffer();
        view.get(0, result);
        return CollectionConverters.asScala(List.of(result).iterator());
      }
    }
  }
}
