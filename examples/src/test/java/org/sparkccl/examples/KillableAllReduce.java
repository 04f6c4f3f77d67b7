package org.sparkccl.examples;

import java.io.IOException;
import java.io.Serializable;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
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
 * A barrier task for killing an executor in the middle of a collective. On the stage's first
 * attempt every task writes {@code pid-P} (its executor's process id) into {@code records}, then
 * all-reduces a scratch array in a loop, writing {@code progress-P} after each call, until the loop
 * fails (the test kills an executor) or 120 s pass; a failure is recorded in {@code failed-P} as
 * {@code <epoch ms> aborted=<bool> <error>}. Later attempts all-reduce the partition's array once
 * and return it.
 */
final class KillableAllReduce
    extends AbstractFunction1<
        scala.collection.Iterator<float[]>, scala.collection.Iterator<float[]>>
    implements Serializable {
  private final String records;

  KillableAllReduce(String records) {
    this.records = records;
  }

  @Override
  public scala.collection.Iterator<float[]> apply(scala.collection.Iterator<float[]> input) {
    BarrierTaskContext context = BarrierTaskContext.get();
    float[] data = input.next();
    Communicator comm = SparkCCL.communicator(context);
    int p = context.partitionId();
    try (HostBuffer buf = HostDevice.INSTANCE.allocate(4L * data.length)) {
      buf.memory().asFloatBuffer().put(0, data);
      if (context.stageAttemptNumber() == 0) {
        write("pid-" + p, Long.toString(ProcessHandle.current().pid()));
        long end = System.nanoTime() + 120_000_000_000L;
        try {
          for (int i = 1; System.nanoTime() < end; i++) {
            comm.allReduce(buf, buf, data.length, DataType.FLOAT32, ReduceOp.MAX);
            write("progress-" + p, Integer.toString(i));
          }
        } catch (RuntimeException e) {
          write(
              "failed-" + p, System.currentTimeMillis() + " aborted=" + comm.isAborted() + " " + e);
          throw e;
        }
        throw new IllegalStateException("no executor was killed within 120 s");
      }
      comm.allReduce(buf, buf, data.length, DataType.FLOAT32, ReduceOp.SUM);
      float[] out = new float[data.length];
      buf.memory().asFloatBuffer().get(0, out);
      return CollectionConverters.asScala(List.of(out).iterator());
    }
  }

  private void write(String name, String text) {
    try {
      Path tmp = Path.of(records, name + ".tmp");
      Files.writeString(tmp, text);
      Files.move(tmp, Path.of(records, name), java.nio.file.StandardCopyOption.ATOMIC_MOVE);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
