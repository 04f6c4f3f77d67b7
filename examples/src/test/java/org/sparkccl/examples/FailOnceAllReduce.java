package org.sparkccl.examples;

import java.io.IOException;
import java.io.Serializable;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.apache.spark.BarrierTaskContext;
import org.apache.spark.util.TaskCompletionListener;
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
 * in the middle of it, while the other ranks go on to a second allReduce that it never joins: they
 * are left waiting on it, so the failure has to reach them (and Spark has to retry the whole stage)
 * for the job to finish.
 *
 * <p>Each task writes {@code attempt-A-partition-P} into {@code records} (the executors run on the
 * test's machine) as it completes: {@code aborted=<whether its communicator was aborted or had
 * failed> error=<what its collective failed with, or none>}.
 */
final class FailOnceAllReduce
    extends AbstractFunction1<
        scala.collection.Iterator<float[]>, scala.collection.Iterator<float[]>>
    implements Serializable {
  private final int failing;
  private final String records;

  FailOnceAllReduce(int failing, String records) {
    this.failing = failing;
    this.records = records;
  }

  @Override
  public scala.collection.Iterator<float[]> apply(scala.collection.Iterator<float[]> input) {
    BarrierTaskContext context = BarrierTaskContext.get();
    float[] data = input.next();
    Communicator comm = SparkCCL.communicator(context);
    String[] error = {"none"};
    // completion listeners run after the failure listeners (SparkCCL's aborts), newest first: this
    // one sees the communicator before SparkCCL's own listener closes it
    TaskCompletionListener recorder =
        ctx -> record(ctx.stageAttemptNumber(), ctx.partitionId(), comm.isAborted(), error[0]);
    context.addTaskCompletionListener(recorder);
    try (HostBuffer buf = HostDevice.INSTANCE.allocate(4L * data.length)) {
      buf.memory().asFloatBuffer().put(0, data);
      if (context.stageAttemptNumber() == 0 && context.partitionId() == failing) {
        comm.allReduceAsync(buf, buf, data.length, DataType.FLOAT32, ReduceOp.SUM);
        throw new IllegalStateException("injected failure in the middle of a collective");
      }
      try {
        comm.allReduce(buf, buf, data.length, DataType.FLOAT32, ReduceOp.SUM);
        if (context.stageAttemptNumber() == 0) {
          // The failing task never makes this call, so every other rank is inside a collective
          // when it fails. The first call alone may complete everywhere before the failing task
          // throws: its own share is in flight, and over shared memory the ring can finish first.
          comm.allReduce(buf, buf, data.length, DataType.FLOAT32, ReduceOp.SUM);
        }
      } catch (RuntimeException e) {
        error[0] = e.toString().replace('\n', ' ');
        throw e;
      }
      float[] out = new float[data.length];
      buf.memory().asFloatBuffer().get(0, out);
      return CollectionConverters.asScala(List.of(out).iterator());
    }
  }

  private void record(int attempt, int partition, boolean aborted, String error) {
    try {
      Files.writeString(
          Path.of(records, "attempt-" + attempt + "-partition-" + partition),
          "aborted=" + aborted + " error=" + error);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
