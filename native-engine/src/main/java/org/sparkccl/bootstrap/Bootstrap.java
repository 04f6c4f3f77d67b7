package org.sparkccl.bootstrap;

import java.time.Duration;

/**
 * How ranks find each other before they have connections: a rank, a rank count and an allGather of
 * bytes. Inside Spark it is {@code BarrierTaskContext.allGather}; outside, {@link TcpBootstrap}
 * (like {@code ncclGetUniqueId} / {@code ncclCommInitRank}) or {@link LocalBootstrap} for ranks
 * that are threads of one JVM.
 */
public interface Bootstrap {
  int rank();

  int nRanks();

  /**
   * Every rank contributes {@code mine}; every rank gets all contributions, indexed by rank.
   *
   * @throws org.sparkccl.CclException when a rank does not take part within {@code timeout}
   */
  byte[][] allGather(byte[] mine, Duration timeout);

  /**
   * A secret every rank of the group already holds and that {@link #allGather} never carries, or
   * {@code null} for none (the default). Inside Spark with {@code spark.authenticate=true} it is
   * the application's secret. When present, the communicator's secret is derived from it and rank
   * 0's random secret, so whoever reads the exchange still cannot join without it.
   */
  default byte[] sharedSecret() {
    return null;
  }

  /** The address this rank's peers can reach it at, or {@code null} when unknown. */
  default String localHost() {
    return null;
  }
}
