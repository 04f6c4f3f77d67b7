package org.sparkccl.transport.socket;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.sparkccl.comm.CollectiveCall;
import org.sparkccl.transport.NetRequest;

/**
 * A message on a socket connection: a 40-byte header on the control socket ({@code int64 step,
 * int32 size, int32 flags}, then the sender's {@link CollectiveCall}), then the payload either
 * inline on the control socket or in chunks on the data sockets.
 */
final class SocketRequest implements NetRequest {
  static final int HEADER_BYTES = 16 + CollectiveCall.BYTES;
  static final int CALL_OFFSET = 16;

  /** Flags of frames that travel against the data's direction: a failure, a normal close. */
  static final int FLAG_ABORT = 1;

  static final int FLAG_CLOSE = 2;
  static final int FLAG_ANNOUNCE = 3;

  final ByteBuffer header = ByteBuffer.allocate(HEADER_BYTES).order(ByteOrder.BIG_ENDIAN);
  final ByteBuffer slot;
  final long step;
  private final SocketConnection connection;
  int size;
  boolean inline;
  ByteBuffer payload;
  ChunkTask[] chunks;
  boolean controlDone;
  CollectiveCall call;

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

  @Override
  public CollectiveCall call() {
    return call;
  }
}
