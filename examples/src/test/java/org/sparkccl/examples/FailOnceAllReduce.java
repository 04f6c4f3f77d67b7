package org.sparkccl.examples;

import java.io.Serializable;
import java.util.List;
import org.apache.spark.BarrierTaskContext;
import org.sparkccl.Communicator;
import org.sparkccl.DataType;
import org.sparkccl.ReduceOp;
import org.sparkccl.device.HostBuffer;
import org.sparkccl.device.HostDevice;
import org.sparkccl.spark.SparkCCL;
import scala.jdk.javaapi.CollectionConverters;
import scala.runtime.AbstractFunction1;

/**
 * A barrier task that all-reduces its partition's array through the in-task communicator, except
 * that on the stage's first attempt partition {@code failing} starts the collective and then throws
 * in the middle of it: the other ranks are left waiting on it, so the failure has to reach them
 * (and Spark has to retry the whole stage) for the job to finish.
 */
final class FailOnceAllReduce
    extends AbstractFunction1<
        scala.collection.Iterator<float[]>, scala.collection.Iterator<float[]>>
    implements Serializable {
  private final int failing;

  FailOnceAllReduce(int failing) {
    this.failing = failing;
  }

  @Override
  public scala.collection.Iterator<float[]> apply(scala.collection.Iterator<float[]> input) {
    BarrierTaskContext context = BarrierTaskContext.get();
    float[] data = input.next();
    Communicator comm = SparkCCL.communicator(context);
    try (HostBuffer buf = HostDevice.INSTANCE.allocate(4L * data.length)) {
      buf.memory().asFloatBuffer().put(0, data);
      if (context.stageAttemptNumber() == 0 && context.partitionId() == failing) {
        comm.allReduceAsync(buf, buf, data.length, DataType.FLOAT32, ReduceOp.SUM);
        throw new IllegalStateException("injected failure in the middle of a collective");
      }
      comm.allReduce(buf, buf, data.length, DataType.FLOAT32, ReduceOp.SUM);
      float[] out = new float[data.length];
      buf.memory().asFloatBuffer().get(0, out);
      return CollectionConverters.asScala(List.of(out).iterator());
    }
  }
}
