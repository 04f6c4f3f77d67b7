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

  /** The address this rank's peers can reach it at, or {@code null} when unknown. */
  default String localHost() {
    return null;
  }
}
