package org.sparkccl.transport;

import java.nio.ByteBuffer;

/** The receiving end of one channel's connection from the previous rank. Proxy thread only. */
public interface RecvConnection extends AutoCloseable {
  /** Starts receiving FIFO step {@code step} into {@code data} (at most its capacity). */
  NetRequest postRecv(ByteBuffer data, long step);

  int peer();

  @Override
  void close();
}
