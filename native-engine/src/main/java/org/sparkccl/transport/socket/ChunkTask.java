package org.sparkccl.transport.socket;

import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import org.sparkccl.CclException;

/** One piece of a large message on one data socket, moved by a helper thread. */
final class ChunkTask {
  final SocketChannel channel;
  final ByteBuffer buffer;
  final boolean send;
  private volatile boolean done;
  private volatile CclException error;

  ChunkTask(SocketChannel channel, ByteBuffer buffer, boolean send) {
    this.channel = channel;
    this.buffer = buffer;
    this.send = send;
  }

  void complete() {
    done = true;
  }

  void fail(CclException e) {
    error = e;
  }

  /** True once moved; throws the helper's failure, if any. */
  boolean isDone() {
    CclException e = error;
    if (e != null) {
      throw e;
    }
    return done;
  }
}
