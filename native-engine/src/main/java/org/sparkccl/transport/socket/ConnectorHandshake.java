package org.sparkccl.transport.socket;

import java.io.IOException;
import java.io.InputStream;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.concurrent.TimeUnit;
import org.sparkccl.CclException;
import org.sparkccl.CclTimeoutException;
import org.sparkccl.auth.ChallengeResponse;

/**
 * The connecting end of a data socket's handshake, on a blocking socket: sends the opening and a
 * nonce, checks the acceptor's proof of the communicator's secret, answers with its own. The data
 * that follows carries no authentication of its own, so it costs nothing per message, unless the
 * connection is sealed: then each direction has a key derived from this handshake.
 */
final class ConnectorHandshake {
  /** What the acceptor answers: magic, version, its nonce and its proof. */
  static final int ANSWER_BYTES = 8 + ChallengeResponse.NONCE_BYTES + ChallengeResponse.PROOF_BYTES;

  private ConnectorHandshake() {}

  /**
   * Runs the handshake on {@code c}.
   *
   * @return the wire the connection's bytes then take: sealed when {@code seal}
   */
  static Wire run(
      SocketChannel c,
      Handshake hello,
      int version,
      ChallengeResponse auth,
      boolean seal,
      long deadlineNanos,
      String what)
      throws IOException {
    byte[] opening = hello.encode(version);
    byte[] myNonce = ChallengeResponse.newNonce();
    write(c, ByteBuffer.allocate(opening.length + myNonce.length).put(opening).put(myNonce).flip());
    // magic and version first: a peer of another release sends only these, then closes
    ByteBuffer answer = ByteBuffer.wrap(readFully(c, 8, deadlineNanos, what));
    int magic = answer.getInt();
    int theirVersion = answer.getInt();
    if (magic != Handshake.MAGIC) {
      throw new CclException(
          what + ": the peer does not speak SparkCCL (magic 0x" + Integer.toHexString(magic) + ")");
    }
    if (theirVersion != version) {
      throw new CclException(
          what
              + ": the peer speaks data protocol version "
              + theirVersion
              + ", this rank version "
              + version
              + "; every rank must run the same SparkCCL release");
    }
    answer = ByteBuffer.wrap(readFully(c, ANSWER_BYTES - 8, deadlineNanos, what));
    byte[] theirNonce = new byte[ChallengeResponse.NONCE_BYTES];
    byte[] theirProof = new byte[ChallengeResponse.PROOF_BYTES];
    answer.get(theirNonce).get(theirProof);
    if (!auth.isAcceptorProof(theirProof, opening, myNonce, theirNonce)) {
      throw new CclException(
          what
              + ": the peer did not prove this communicator's secret (a rank of another"
              + " communicator or attempt now holds that address?)");
    }
    write(c, ByteBuffer.wrap(auth.connectorProof(opening, myNonce, theirNonce)));
    return seal
        ? SealingKeys.derive(auth, opening, myNonce, theirNonce).connectorEnd(c)
        : new PlainWire(c);
  }

  /** Reads exactly {@code n} bytes, unbuffered, so nothing after them is taken from the socket. */
  private static byte[] readFully(SocketChannel c, int n, long deadlineNanos, String what)
      throws IOException {
    byte[] b = new byte[n];
    InputStream in = c.socket().getInputStream();
    int off = 0;
    try {
      while (off < n) {
        long left = TimeUnit.NANOSECONDS.toMillis(deadlineNanos - System.nanoTime());
        if (left <= 0) {
          throw new SocketTimeoutException();
        }
        c.socket().setSoTimeout((int) Math.min(Integer.MAX_VALUE, left));
        int got = in.read(b, off, n - off);
        if (got < 0) {
          throw new IOException(
              "the peer closed the connection during the handshake (it refused this rank?)");
        }
        off += got;
      }
    } catch (SocketTimeoutException e) {
      throw new CclTimeoutException(what + ": the peer did not answer the handshake in time");
    } finally {
      c.socket().setSoTimeout(0);
    }
    return b;
  }

  private static void write(SocketChannel c, ByteBuffer b) throws IOException {
    while (b.hasRemaining()) {
      c.write(b);
    }
  }
}
