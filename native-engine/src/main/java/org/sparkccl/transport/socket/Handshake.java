package org.sparkccl.transport.socket;

import java.nio.ByteBuffer;
import org.sparkccl.CclException;

/**
 * The opening of every data socket: protocol, version, who is connecting, for which channel and
 * socket. It is followed by the challenge-response of {@link ConnectorHandshake} and {@link
 * AcceptorHandshake}, which also covers these bytes, so a socket that does not prove the
 * communicator's secret (a stale attempt, a stranger) is refused and what it claimed is never used.
 */
record Handshake(int fromRank, int channel, int socketIndex) {
  static final int MAGIC = 0x5343434c;

  /** The data plane's protocol version; raise it whenever its wire format changes. */
  static final int VERSION = 2;

  static final int BYTES = 20;
  static final int CONTROL = -1;

  byte[] encode() {
    return encode(VERSION);
  }

  byte[] encode(int version) {
    return ByteBuffer.allocate(BYTES)
        .putInt(MAGIC)
        .putInt(version)
        .putInt(fromRank)
        .putInt(channel)
        .putInt(socketIndex)
        .array();
  }

  /**
   * @throws CclException when the bytes are not a SparkCCL opening of this version
   */
  static Handshake decode(byte[] b) {
    ByteBuffer in = ByteBuffer.wrap(b);
    int magic = in.getInt();
    if (magic != MAGIC) {
      throw new CclException(
          "refused a connection: it does not speak SparkCCL (magic 0x"
              + Integer.toHexString(magic)
              + ", expected 0x"
              + Integer.toHexString(MAGIC)
              + ")");
    }
    int version = in.getInt();
    if (version != VERSION) {
      throw new CclException(
          "refused a connection: it speaks data protocol version "
              + version
              + ", this rank version "
              + VERSION
              + "; every rank must run the same SparkCCL release");
    }
    return new Handshake(in.getInt(), in.getInt(), in.getInt());
  }
}
