package org.sparkccl.transport.socket;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.sparkccl.comm.CollectiveCall;
import org.sparkccl.transport.NetRequest;

/**
 * A message on a socket connection: a 40-byte header on the control socket ({@code int64 step,
 * int32 size, int32 flags}, then the sender's {@link CollectiveCall}), then the payload either
 * inline on the control socket or in chunks on the data sockets.
 *
 * <p>Each connection keeps one per FIFO slot and reuses it ({@link SocketConnection#request}): the
 * proxy posts a step only once the slot's previous step has completed, so at most one request per
 * slot is ever in flight, and a small collective allocates none.
 */
final class SocketRequest implements NetRequest {
  static final int HEADER_BYTES = 16 + CollectiveCall.BYTES;
  static final int CALL_OFFSET = 16;

  /** A data frame's flags. */
  static final int FLAG_DATA = 0;

  /**
   * Flags of notices: a failure, a normal close, a call announced. On a socket that carries one
   * direction they travel against the data; on a pair's socket they travel among the data.
   */
  static final int FLAG_ABORT = 1;

  static final int FLAG_CLOSE = 2;
  static final int FLAG_ANNOUNCE = 3;

  /**
   * Direct: a gathering write copies each heap buffer into a temporary direct one first, and this
   * header travels with every step.
   */
  final ByteBuffer header = ByteBuffer.allocateDirect(HEADER_BYTES).order(ByteOrder.BIG_ENDIAN);

  ByteBuffer slot;
  long step;
  private final SocketConnection connection;

  /** A view of {@link #slot} for the payload, made once per slot buffer. */
  private ByteBuffer view;

  int size;
  boolean inline;
  ByteBuffer payload;
  ChunkTask[] chunks;
  boolean controlDone;

  SocketRequest(SocketConnection connection) {
    this.connection = connection;
  }

  /** Makes this the request of {@code step} in {@code slot}, forgetting the previous step's. */
  SocketRequest reuse(ByteBuffer slot, long step) {
    if (this.slot != slot) {
      this.slot = slot;
      this.view = slot.duplicate();
    }
    this.step = step;
    header.clear();
    size = 0;
    inline = false;
    payload = null;
    chunks = null;
    controlDone = false;
    return this;
  }

  /** The first {@code size} bytes of the slot, as the payload to move. */
  ByteBuffer payloadOf(int size) {
    view.clear().limit(size);
    return view;
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

  /**
   * A payload read on the control socket lands in order, so its position is the prefix that has
   * landed; one in chunks on the data sockets counts only once complete.
   */
  @Override
  public int received() {
    return inline && payload != null ? payload.position() : 0;
  }

  /** The call in the header; read after completion, while the header is this step's. */
  @Override
  public CollectiveCall call() {
    return CollectiveCall.decode(header, CALL_OFFSET);
  }

  @Override
  public boolean sentFor(CollectiveCall expected) {
    return expected.isEncodedAt(header, CALL_OFFSET) || NetRequest.super.sentFor(expected);
  }
}
