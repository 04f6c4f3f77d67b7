package org.sparkccl.spark;

import java.time.Duration;
import org.apache.spark.BarrierTaskContext;
import org.sparkccl.bootstrap.Bootstrap;

/**
 * The engine's bootstrap inside a barrier task: rank = partition id, ranks = partitions, and {@link
 * TaskAllGather} for the exchange (the driver plugin's rendezvous, bounded by the engine's timeout,
 * or {@code BarrierTaskContext.allGather} without the plugin).
 */
final class BarrierBootstrap implements Bootstrap {
  private final BarrierTaskContext context;

  BarrierBootstrap(BarrierTaskContext context) {
    this.context = context;
  }

  @Override
  public int rank() {
    return context.partitionId();
  }

  @Override
  public int nRanks() {
    return context.numPartitions();
  }

  @Override
  public byte[][] allGather(byte[] mine, Duration timeout) {
    return TaskAllGather.allGather(context, mine, timeout);
  }

  /** The executor's address as Spark knows it, so peers on other hosts can reach this rank. */
  @Override
  public String localHost() {
    String address = context.getTaskInfos()[context.partitionId()].address();
    int colon = address.lastIndexOf(':');
    return colon > 0 ? address.substring(0, colon) : address;
  }
}
