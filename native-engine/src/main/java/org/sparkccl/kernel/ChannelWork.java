package org.sparkccl.kernel;

import org.sparkccl.DataType;
import org.sparkccl.ReduceOp;
import org.sparkccl.algorithm.ChannelPlan;
import org.sparkccl.comm.CollectiveCall;
import org.sparkccl.device.DeviceBuffer;

/**
 * One collective's work for one channel: the plan, the buffers it reads and writes, and the call it
 * serves (its dtype and operator; a kernel that writes into another rank's slots itself stamps them
 * with it). A host channel reuses one for its next ring collective once the last one has completed
 * ({@link #reset}); the host kernel copies what it needs at the start of a run and keeps nothing.
 */
public final class ChannelWork {
  private ChannelPlan plan;
  private DeviceBuffer src;
  private DeviceBuffer dst;
  private int nRanks;
  private CollectiveCall call;

  public ChannelWork(
      ChannelPlan plan, DeviceBuffer src, DeviceBuffer dst, int nRanks, CollectiveCall call) {
    reset(plan, src, dst, nRanks, call);
  }

  /** Makes this the work of another collective; only once the kernel has finished the last one. */
  public void reset(
      ChannelPlan plan, DeviceBuffer src, DeviceBuffer dst, int nRanks, CollectiveCall call) {
    this.plan = plan;
    this.src = src;
    this.dst = dst;
    this.nRanks = nRanks;
    this.call = call;
  }

  public ChannelPlan plan() {
    return plan;
  }

  public DeviceBuffer src() {
    return src;
  }

  public DeviceBuffer dst() {
    return dst;
  }

  public int nRanks() {
    return nRanks;
  }

  public CollectiveCall call() {
    return call;
  }

  public DataType type() {
    return call.dtype();
  }

  /** The reduction, or null for a collective that does not reduce. */
  public ReduceOp op() {
    return call.op();
  }
}
