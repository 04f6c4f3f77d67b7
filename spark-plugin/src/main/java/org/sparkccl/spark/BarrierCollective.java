package org.sparkccl.spark;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import org.apache.logging.log4j.Logger;
import org.apache.spark.BarrierTaskContext;
import org.sparkccl.Communicator;
import org.sparkccl.device.Device;
import org.sparkccl.device.DeviceBuffer;
import org.sparkccl.util.EngineLog;
import scala.jdk.javaapi.CollectionConverters;
import scala.runtime.AbstractFunction1;

/**
 * One barrier task's part of an RDD collective: check that every partition brings the same buffers,
 * join the communicator, run the collective on each buffer in turn.
 */
final class BarrierCollective {
  private static final Logger LOG = EngineLog.logger(BarrierCollective.class);

  private BarrierCollective() {}

  /**
   * Runs {@code spec} on this task's {@code inputs} and returns the result buffers: new buffers on
   * the same device (closed again if the collective fails), or with {@code inPlace} the inputs
   * themselves where the result has their size (allReduce, broadcast).
   */
  static List<DeviceBuffer> run(CollectiveSpec spec, List<DeviceBuffer> inputs, boolean inPlace) {
    BarrierTaskContext context = BarrierTaskContext.get();
    int ranks = context.numPartitions();
    long t0 = System.nanoTime();
    PartitionShapes.checkAgree(
        context,
        PartitionShapes.describe(inputs, spec.dtype()),
        spec.kind().apiName,
        ExecutorEngine.get().config().timeout());
    // The partitions agree, so each finds the same unusable buffer and fails alike.
    for (DeviceBuffer in : inputs) {
      String unfit = spec.unfit(in.byteSize(), ranks);
      if (unfit != null) {
        throw new IllegalArgumentException(
            "SparkCCL " + spec.kind().apiName + " on " + spec.dtype() + ": a buffer of " + unfit);
      }
    }
    long t1 = System.nanoTime();
    Communicator comm = SparkCCL.communicator(context);
    long t2 = System.nanoTime();
    List<DeviceBuffer> outputs = new ArrayList<>();
    try {
      for (DeviceBuffer in : inputs) {
        long outBytes = spec.outBytes(in.byteSize(), ranks);
        DeviceBuffer out =
            inPlace && outBytes == in.byteSize() ? in : in.device().allocate(outBytes);
        outputs.add(out);
        long count = in.byteSize() / spec.dtype().size();
        switch (spec.kind()) {
          case ALL_REDUCE -> comm.allReduce(in, out, count, spec.dtype(), spec.op());
          case BROADCAST -> comm.broadcast(in, out, count, spec.dtype(), spec.root());
          case ALL_GATHER -> comm.allGather(in, out, count, spec.dtype());
          case REDUCE_SCATTER ->
              comm.reduceScatter(in, out, count / ranks, spec.dtype(), spec.op());
        }
      }
      LOG.info(
          "rank {}/{} {}: {} buffer(s), agreement {} ms, communicator {} ms, collectives {} ms",
          comm.rank(),
          ranks,
          spec.kind().apiName,
          inputs.size(),
          (t1 - t0) / 1_000_000,
          (t2 - t1) / 1_000_000,
          (System.nanoTime() - t2) / 1_000_000);
      return outputs;
    } catch (RuntimeException e) {
      outputs.stream().filter(out -> !inputs.contains(out)).forEach(DeviceBuffer::close);
      throw e;
    }
  }

  private static <T> List<T> drain(scala.collection.Iterator<T> input) {
    List<T> items = new ArrayList<>();
    Iterator<T> it = CollectionConverters.asJava(input);
    it.forEachRemaining(items::add);
    return items;
  }

  /** The stage function on device buffers: inputs untouched, results are new buffers. */
  static final class OnBuffers
      extends AbstractFunction1<
          scala.collection.Iterator<DeviceBuffer>, scala.collection.Iterator<DeviceBuffer>>
      implements Serializable {
    private final CollectiveSpec spec;

    OnBuffers(CollectiveSpec spec) {
      this.spec = spec;
    }

    @Override
    public scala.collection.Iterator<DeviceBuffer> apply(
        scala.collection.Iterator<DeviceBuffer> input) {
      return CollectionConverters.asScala(run(spec, drain(input), false).iterator());
    }
  }

  /** Makes a buffer of an array on a device; shipped to the tasks. */
  interface ToBuffer<T> extends Serializable {
    DeviceBuffer apply(T array, Device device);
  }

  /** Copies a buffer back into an array; shipped to the tasks. */
  interface FromBuffer<T> extends Serializable {
    T apply(DeviceBuffer buffer);
  }

  /**
   * The stage function on arrays (Java {@code float[]}, or Python's arrays as bytes): copies them
   * into buffers on the task's device, runs the collective and copies the results back, releasing
   * every buffer before it returns, whatever fails.
   */
  static final class OnArrays<T>
      extends AbstractFunction1<scala.collection.Iterator<T>, scala.collection.Iterator<T>>
      implements Serializable {
    private final CollectiveSpec spec;
    private final ToBuffer<T> toBuffer;
    private final FromBuffer<T> fromBuffer;

    OnArrays(CollectiveSpec spec, ToBuffer<T> toBuffer, FromBuffer<T> fromBuffer) {
      this.spec = spec;
      this.toBuffer = toBuffer;
      this.fromBuffer = fromBuffer;
    }

    @Override
    public scala.collection.Iterator<T> apply(scala.collection.Iterator<T> input) {
      Device device = ExecutorEngine.get().deviceFor(BarrierTaskContext.get().resourcesJMap());
      List<DeviceBuffer> buffers = new ArrayList<>();
      List<DeviceBuffer> results = List.of();
      try {
        for (T a : drain(input)) {
          buffers.add(toBuffer.apply(a, device));
        }
        // the buffers are this function's own, so allReduce and broadcast work in place
        results = run(spec, buffers, true);
        List<T> arrays = new ArrayList<>();
        for (DeviceBuffer r : results) {
          arrays.add(fromBuffer.apply(r));
        }
        return CollectionConverters.asScala(arrays.iterator());
      } finally {
        results.forEach(DeviceBuffer::close);
        buffers.forEach(DeviceBuffer::close);
      }
    }
  }
}
