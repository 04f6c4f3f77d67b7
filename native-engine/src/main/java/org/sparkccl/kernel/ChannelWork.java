package org.sparkccl.kernel;

import org.sparkccl.DataType;
import org.sparkccl.ReduceOp;
import org.sparkccl.algorithm.ChannelPlan;
import org.sparkccl.comm.CollectiveCall;
import org.sparkccl.device.DeviceBuffer;

/**
 * One collective's work for one channel: the plan, the buffers it reads and writes, and the call it
 * serves (its dtype and operator; a kernel that writes into another rank's slots itself stamps them
 * with it).
 */
public record ChannelWork(
    ChannelPlan plan, DeviceBuffer src, DeviceBuffer dst, int nRanks, CollectiveCall call) {
  public DataType type() {
    return call.dtype();
  }

  /** The reduction, or null for a collective that does not reduce. */
  public ReduceOp op() {
    return call.op();
  }
}
