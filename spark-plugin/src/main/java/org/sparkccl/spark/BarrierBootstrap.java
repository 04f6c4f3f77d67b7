package org.sparkccl.spark;

import java.time.Duration;
import org.apache.spark.BarrierTaskContext;
import org.sparkccl.bootstrap.Bootstrap;

/**
 * The engine's bootstrap inside a barrier task: rank = partition id, ranks = partitions, and {@link
 * TaskAllGather} for the exchange (the driver plugin's rendezvous, bounded by the engine's timeout,
 * or {@code BarrierTaskContext.allGather} without the plugin). With {@code spark.authenticate=true}
 * the communicator's secret is bound to the application's secret.
 */
final class BarrierBootstrap implements Bootstrap {
  private final BarrierTaskContext context;
  private final byte[] sharedSecret;

  /** The bootstrap of {@code context}, bound to the application's secret when Spark has one. */
  BarrierBootstrap(BarrierTaskContext context) {
    this(context, AppSecret.current());
  }

  /** As above with {@code sharedSecret} (null for none) in place of the application's. */
  BarrierBootstrap(BarrierTaskContext context, byte[] sharedSecret) {
    this.context = context;
    this.sharedSecret = sharedSecret;
  }

  /** With {@code spark.authenticate=true}, the application's secret ({@link AppSecret}). */
  @Override
  public byte[] sharedSecret() {
    return sharedSecret;
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
