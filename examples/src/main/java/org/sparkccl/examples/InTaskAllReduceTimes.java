package org.sparkccl.examples;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.BarrierTaskContext;
import org.apache.spark.api.java.JavaSparkContext;
import org.sparkccl.Communicator;
import org.sparkccl.DataType;
import org.sparkccl.ReduceOp;
import org.sparkccl.device.DeviceBuffer;
import org.sparkccl.device.HostDevice;
import org.sparkccl.spark.SparkCCL;
import scala.jdk.javaapi.CollectionConverters;
import scala.reflect.ClassTag$;
import scala.runtime.AbstractFunction1;

/**
 * The Java side of the Python benchmark ({@code bench/run-python-bench.sh}): a barrier stage whose
 * tasks form the in-task communicator ({@link SparkCCL#communicator(BarrierTaskContext)}) and time
 * float32 sum allReduces in place on host buffers, as the Python tasks do on shared arrays. Called
 * through Py4J in the same application, so both run on the same executors:
 *
 * <pre>{@code
 * times = sc._jvm.org.sparkccl.examples.InTaskAllReduceTimes.run(sc._jsc, 4, 1 << 24, 3, 10)
 * }</pre>
 */
public final class InTaskAllReduceTimes {
  private InTaskAllReduceTimes() {}

  /**
   * Runs {@code warmup} untimed then {@code iterations} timed allReduces of {@code count} floats on
   * {@code ranks} barrier tasks; returns rank 0's time of each timed call in microseconds.
   */
  public static double[] run(
      JavaSparkContext sc, int ranks, long count, int warmup, int iterations) {
    List<Integer> seeds = new ArrayList<>();
    for (int r = 0; r < ranks; r++) {
      seeds.add(r);
    }
    List<double[]> out =
        sc.parallelize(seeds, ranks)
            .rdd()
            .barrier()
            .mapPartitions(
                new Timed(count, warmup, iterations),
                false,
                ClassTag$.MODULE$.apply(double[].class))
            .toJavaRDD()
            .collect();
    return out.get(0);
  }

  private static final class Timed
      extends AbstractFunction1<
          scala.collection.Iterator<Integer>, scala.collection.Iterator<double[]>>
      implements Serializable {
    private static final long serialVersionUID = 1L;
    private final long count;
    private final int warmup;
    private final int iterations;

    Timed(long count, int warmup, int iterations) {
      this.count = count;
      this.warmup = warmup;
      this.iterations = iterations;
    }

    @Override
    public scala.collection.Iterator<double[]> apply(scala.collection.Iterator<Integer> ignored) {
      BarrierTaskContext context = BarrierTaskContext.get();
      double[] micros = new double[iterations];
      try (Communicator comm = SparkCCL.communicator(context);
          DeviceBuffer buf = HostDevice.INSTANCE.allocate(count * Float.BYTES)) {
        float[] ones = new float[(int) count];
        java.util.Arrays.fill(ones, 1f);
        buf.copyFromHost(ones, 0);
        for (int i = 0; i < warmup + iterations; i++) {
          long t0 = System.nanoTime();
          comm.allReduce(buf, buf, count, DataType.FLOAT32, ReduceOp.SUM);
          if (i >= warmup) {
            micros[i - warmup] = (System.nanoTime() - t0) / 1e3;
          }
        }
      }
      List<double[]> result = context.partitionId() == 0 ? List.of(micros) : List.of();
      return CollectionConverters.asScala(result.iterator());
    }
  }
}
