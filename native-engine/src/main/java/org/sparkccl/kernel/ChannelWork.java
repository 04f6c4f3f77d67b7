package org.sparkccl.kernel;

import org.sparkccl.DataType;
import org.sparkccl.ReduceOp;
import org.sparkccl.algorithm.ChannelPlan;
import org.sparkccl.device.DeviceBuffer;

/** One collective's work for one channel: the plan and the buffers it reads and writes. */
public record ChannelWork(
    ChannelPlan plan, DeviceBuffer src, DeviceBuffer dst, DataType type, ReduceOp op, int nRanks) {}
