package org.sparkccl.transport;

import java.nio.ByteBuffer;

/** The sending end of one channel's connection to the next rank. Proxy thread only. */
public interface SendConnection extends AutoCloseable {
  /** Starts sending bytes {@code [0, size)} of {@code data} as FIFO step {@code step}. */
  NetRequest postSend(ByteBuffer data, int size, long step);

  /** The peer's rank, for messages. */
  int peer();

  @Override
  void close();
}
