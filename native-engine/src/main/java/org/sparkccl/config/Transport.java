package org.sparkccl.config;

/** How ring channels move slots between ranks (key {@code transport}). */
public enum Transport {
  /** UCX when its native libraries load on every rank, otherwise sockets. */
  AUTO,
  /** Java NIO sockets. */
  SOCKET,
  /** UCX through Jucx: one-sided puts into registered FIFOs. */
  UCX,
  /** Ranks that are threads of one JVM hand slots to each other in memory. */
  LOCAL;

  @Override
  public String toString() {
    return Values.lowerName(this);
  }
}
