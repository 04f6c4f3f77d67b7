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
    return rdd.barrier().mapPartitions(new AllReducePartition(op), false, floatArrayTag());
  }

  private static ClassTag<float[]> floatArrayTag() {
    return ClassTag$.MODULE$.apply(float[].class);
  }

  /** One barrier task's part: join the communicator, all-reduce the partition's array. */
  private static final class AllReducePartition
      extends AbstractFunction1<scala.collection.Iterator<float[]>, scala.collection.Iterator<float[]>>
      implements java.io.Serializable {
    private final ReduceOp op;

    AllReducePartition(ReduceOp op) {
      this.op = op;
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
                + " arrays; SparkCCL.allReduce expects exactly one float[] per partition");
      }
      float[] data = arrays.get(0);
      Communicator comm = communicator(context);
      try (HostBuffer buf = HostDevice.INSTANCE.allocate(4L * data.length)) {
        FloatBuffer view = buf.memory().asFloatBuffer();
        view.put(0, data);
        comm.allReduce(buf, buf, data.length, DataType.FLOAT32, op);
        float[] out = new float[data.length];
        view.get(0, out);
        return CollectionConverters.asScala(List.of(out).iterator());
      }
    }
  }
}
