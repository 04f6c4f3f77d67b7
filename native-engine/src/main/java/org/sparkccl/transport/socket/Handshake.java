package org.sparkccl.transport.socket;

import java.nio.ByteBuffer;
import org.sparkccl.CclException;

/**
 * The first bytes on every socket: who is connecting, for which channel and socket, and the
 * communicator's token. A socket with another token (a stale attempt, a stranger) is refused.
 */
record Handshake(long token, int fromRank, int channel, int socketIndex) {
  static final int MAGIC = 0x5343434c;
  static final int BYTES = 24;
  static final int CONTROL = -1;

  ByteBuffer encode() {
    ByteBuffer b = ByteBuffer.allocate(BYTES);
    b.putInt(MAGIC).putLong(token).putInt(fromRank).putInt(channel).putInt(socketIndex).flip();
    return b;
  }

  static Handshake decode(ByteBuffer b) {
    b.flip();
    int magic = b.getInt();
    if (magic != MAGIC) {
      throw new CclException(
          "refused a connection: it does not speak SparkCCL (magic 0x"
              + Integer.toHexString(magic)
              + ", expected 0x"
              + Integer.toHexString(MAGIC)
              + ")");
    }
    return new Handshake(b.getLong(), b.getInt(), b.getInt(), b.getInt());
  }
}
