package org.sparkccl.ml.train;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.DoubleBuffer;
import org.sparkccl.Communicator;
import org.sparkccl.DataType;
import org.sparkccl.ReduceOp;
import org.sparkccl.device.DeviceBuffer;

/**
 * A {@link SumReducer} over a communicator: one float64 all-reduce per call, through one buffer on
 * the communicator's device that is reused for every call of up to {@code capacity} values.
 *
 * <p>The engine's all-reduces give every rank bit-identical results: the ring reduces each element
 * along one path and then copies the finished value to every rank, and the tree reduces to the root
 * and broadcasts. The tests check it for every algorithm the engine offers.
 */
final class CommunicatorSum implements SumReducer, AutoCloseable {
  private final Communicator comm;
  private final DeviceBuffer buffer;
  private final ByteBuffer window;

  public CommunicatorSum(Communicator comm, int capacity) {
    this.comm = comm;
    this.buffer = comm.device().allocate(8L * Math.max(1, capacity));
    this.window =
        ByteBuffer.allocateDirect(8 * Math.max(1, capacity)).order(ByteOrder.nativeOrder());
  }

  @Override
  public void sum(double[] values) {
    window.clear();
    DoubleBuffer view = window.asDoubleBuffer();
    view.put(values);
    window.limit(8 * values.length);
    buffer.copyFromHost(window, 0);
    comm.allReduce(buffer, buffer, values.length, DataType.FLOAT64, ReduceOp.SUM);
    window.clear().limit(8 * values.length);
    buffer.copyToHost(0, window);
    window.asDoubleBuffer().get(values);
  }

  @Override
  public int rank() {
    return comm.rank();
  }

  @Override
  public int nRanks() {
    return comm.nRanks();
  }

  @Override
  public void close() {
    buffer.close();
  }
}
