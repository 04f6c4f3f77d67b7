package org.sparkccl.transport.socket;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.sparkccl.transport.NetRequest;

/**
 * A message on a socket connection: a 16-byte header on the control socket ({@code int64 step,
 * int32 size, int32 reserved}), then the payload either inline on the control socket or in chunks
 * on the data sockets.
 */
final class SocketRequest implements NetRequest {
  static final int HEADER_BYTES = 16;

  final ByteBuffer header = ByteBuffer.allocate(HEADER_BYTES).order(ByteOrder.BIG_ENDIAN);
  final ByteBuffer slot;
  final long step;
  private final SocketConnection connection;
  int size;
  boolean inline;
  ByteBuffer payload;
  ChunkTask[] chunks;
  boolean controlDone;

  SocketRequest(SocketConnection connection, ByteBuffer slot, long step) {
    this.connection = connection;
    this.slot = slot;
    this.step = step;
  }

  @Override
  public boolean test() {
    connection.progress();
    if (!controlDone) {
      return false;
    }
    if (chunks != null) {
      for (ChunkTask c : chunks) {
        if (!c.isDone()) {
          return false;
        }
      }
    }
    return true;
  }

  @Override
  public int size() {
    return size;
  }
}
