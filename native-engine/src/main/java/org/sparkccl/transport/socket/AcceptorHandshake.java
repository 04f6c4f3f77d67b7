package org.sparkccl.transport.socket;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import org.sparkccl.CclException;
import org.sparkccl.auth.ChallengeResponse;

/**
 * The accepting end of a data socket's handshake, on a non-blocking socket: reads the opening and
 * the connector's nonce, answers with its version, nonce and proof of the communicator's secret,
 * then reads the connector's proof. {@link #advance()} moves it as far as the socket allows, so one
 * selector thread serves many; {@link #deadlineNanos()} bounds how long a socket may take.
 */
final class AcceptorHandshake {
  private static final int HELLO_BYTES = Handshake.BYTES + ChallengeResponse.NONCE_BYTES;

  private final SocketChannel channel;
  private final ChallengeResponse auth;
  private final boolean seal;
  private final long deadlineNanos;
  private final ByteBuffer hello = ByteBuffer.allocate(HELLO_BYTES);
  private final ByteBuffer proof = ByteBuffer.allocate(ChallengeResponse.PROOF_BYTES);
  private byte[] opening;
  private byte[] theirNonce;
  private byte[] myNonce;
  private Handshake claimed;

  AcceptorHandshake(
      SocketChannel channel, ChallengeResponse auth, boolean seal, long deadlineNanos) {
    this.channel = channel;
    this.auth = auth;
    this.seal = seal;
    this.deadlineNanos = deadlineNanos;
  }

  SocketChannel channel() {
    return channel;
  }

  long deadlineNanos() {
    return deadlineNanos;
  }

  /** The wire the connection's bytes take once {@link #advance()} returned its opening. */
  Wire wire() {
    return seal
        ? SealingKeys.derive(auth, opening, theirNonce, myNonce).acceptorEnd(channel)
        : new PlainWire(channel);
  }

  /**
   * Reads what has arrived and answers when due.
   *
   * @return the connector's opening once it proved the secret; {@code null} while bytes are missing
   * @throws IOException when the connection closes or fails
   * @throws CclException when it is refused: not SparkCCL, another version, a wrong proof
   */
  Handshake advance() throws IOException {
    if (claimed == null) {
      if (channel.read(hello) < 0) {
        throw new IOException("the connection closed during its handshake");
      }
      if (hello.hasRemaining()) {
        return null;
      }
      hello.flip();
      opening = new byte[Handshake.BYTES];
      theirNonce = new byte[ChallengeResponse.NONCE_BYTES];
      hello.get(opening).get(theirNonce);
      try {
        claimed = Handshake.decode(opening);
      } catch (CclException e) {
        // tell a rank of another release which version this one speaks before closing
        sendAll(ByteBuffer.allocate(8).putInt(Handshake.MAGIC).putInt(Handshake.VERSION).flip());
        throw e;
      }
      myNonce = ChallengeResponse.newNonce();
      sendAll(
          ByteBuffer.allocate(ConnectorHandshake.ANSWER_BYTES)
              .putInt(Handshake.MAGIC)
              .putInt(Handshake.VERSION)
              .put(myNonce)
              .put(auth.acceptorProof(opening, theirNonce, myNonce))
              .flip());
    }
    if (channel.read(proof) < 0) {
      throw new IOException("the connection closed during its handshake");
    }
    if (proof.hasRemaining()) {
      return null;
    }
    if (!auth.isConnectorProof(proof.array(), opening, theirNonce, myNonce)) {
      throw new CclException(
          "refused a connection claiming " + claimed + ": it did not prove the secret");
    }
    return claimed;
  }

  /**
   * Writes a short answer on a fresh socket, whose send buffer is empty: it goes at once, or the
   * connection is not worth waiting for.
   */
  private void sendAll(ByteBuffer b) throws IOException {
    channel.write(b);
    if (b.hasRemaining()) {
      throw new IOException("could not write " + b.limit() + " bytes of handshake at once");
    }
  }
}
