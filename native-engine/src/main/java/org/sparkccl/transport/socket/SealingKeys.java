package org.sparkccl.transport.socket;

import java.nio.channels.SocketChannel;
import javax.crypto.spec.SecretKeySpec;
import org.sparkccl.auth.ChallengeResponse;

/**
 * The two AES-256 keys of one sealed socket, one per direction, derived from the communicator's
 * secret and the socket's handshake (its opening and both fresh nonces), so every socket of every
 * communicator has keys of its own and no key ever crosses the wire.
 */
record SealingKeys(SecretKeySpec connectorToAcceptor, SecretKeySpec acceptorToConnector) {
  static SealingKeys derive(
      ChallengeResponse auth, byte[] opening, byte[] connectorNonce, byte[] acceptorNonce) {
    return new SealingKeys(
        aes(auth.deriveKey("seal connector to acceptor", opening, connectorNonce, acceptorNonce)),
        aes(auth.deriveKey("seal acceptor to connector", opening, connectorNonce, acceptorNonce)));
  }

  private static SecretKeySpec aes(byte[] key) {
    return new SecretKeySpec(key, "AES");
  }

  Wire connectorEnd(SocketChannel c) {
    return new SealedWire(c, connectorToAcceptor, acceptorToConnector);
  }

  Wire acceptorEnd(SocketChannel c) {
    return new SealedWire(c, acceptorToConnector, connectorToAcceptor);
  }
}
