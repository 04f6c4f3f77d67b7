package org.sparkccl.spark;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import org.apache.spark.BarrierTaskContext;
import org.sparkccl.bootstrap.Bootstrap;

/**
 * The engine's bootstrap inside a barrier task: rank = partition id, ranks = partitions, and
 * {@link BarrierTaskContext#allGather(String)} for the exchange (bytes travel as Base64). Spark
 * bounds the allGather by {@code spark.barrier.sync.timeout}, not by the engine's timeout.
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
    String[] all = context.allGather(Base64.getEncoder().encodeToString(mine));
    byte[][] out = new byte[all.length][];
    for (int r = 0; r < all.length; r++) {
      out[r] = Base64.getDecoder().decode(all[r].getBytes(StandardCharsets.US_ASCII));
    }
    return out;
  }

  /** The executor's address as Spark knows it, so peers on other hosts can reach this rank. */
  @Override
  public String localHost() {
    String address = context.getTaskInfos()[context.partitionId()].address();
    int colon = address.lastIndexOf(':');
    return colon > 0 ? address.substring(0, colon) : address;
  }
}
