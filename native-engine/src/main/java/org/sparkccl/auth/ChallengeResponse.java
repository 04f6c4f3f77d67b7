package org.sparkccl.auth;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Proof that both ends of a connection hold the same secret, without either sending it: each side
 * sends a fresh random nonce, and each answers with HMAC-SHA256 over a role label, the connection's
 * opening bytes and both nonces. The labels differ per role, so a proof one side computes can never
 * be replayed as the other side's; the nonces are fresh, so a recorded proof is useless later; the
 * opening bytes are covered, so what the connector claimed (rank, channel) cannot be altered.
 *
 * <p>The bootstrap (secret from the root's address) and the socket data plane (secret from the
 * bootstrap exchange) use this one class. Its cost is two HMACs per connection, none per message.
 */
public final class ChallengeResponse {
  /** Bytes of a secret: as many as the HMAC's output, so the key is never the weak link. */
  public static final int SECRET_BYTES = 32;

  /** Bytes of a nonce. */
  public static final int NONCE_BYTES = 32;

  /** Bytes of a proof (HMAC-SHA256). */
  public static final int PROOF_BYTES = 32;

  private static final SecureRandom RANDOM = new SecureRandom();
  private static final byte[] ACCEPTOR = "sparkccl acceptor".getBytes(StandardCharsets.US_ASCII);
  private static final byte[] CONNECTOR = "sparkccl connector".getBytes(StandardCharsets.US_ASCII);
  private static final byte[] BIND = "sparkccl bound secret".getBytes(StandardCharsets.US_ASCII);

  private final SecretKeySpec key;

  /**
   * @throws IllegalArgumentException when {@code secret} is not {@link #SECRET_BYTES} long
   */
  public ChallengeResponse(byte[] secret) {
    if (secret == null || secret.length != SECRET_BYTES) {
      throw new IllegalArgumentException(
          "a secret of "
              + (secret == null ? "null" : secret.length + " bytes")
              + "; expected "
              + SECRET_BYTES
              + " bytes");
    }
    this.key = new SecretKeySpec(secret, "HmacSHA256");
  }

  private ChallengeResponse(SecretKeySpec key) {
    this.key = key;
  }

  /** A fresh random secret. */
  public static byte[] newSecret() {
    return random(SECRET_BYTES);
  }

  /**
   * The communicator's secret bound to a secret the ranks share outside the exchange:
   * HMAC-SHA256(shared, label ‖ exchanged). Without {@code shared}, knowing {@code exchanged} is
   * not enough to compute it.
   *
   * @throws IllegalArgumentException when {@code shared} is empty
   */
  public static byte[] bind(byte[] shared, byte[] exchanged) {
    if (shared.length == 0) {
      throw new IllegalArgumentException("an empty shared secret");
    }
    return new ChallengeResponse(new SecretKeySpec(shared, "HmacSHA256"))
        .mac(BIND, exchanged, new byte[0], new byte[0]);
  }

  /** A fresh random nonce. */
  public static byte[] newNonce() {
    return random(NONCE_BYTES);
  }

  /** What the accepting side sends to prove it holds the secret. */
  public byte[] acceptorProof(byte[] opening, byte[] connectorNonce, byte[] acceptorNonce) {
    return mac(ACCEPTOR, opening, connectorNonce, acceptorNonce);
  }

  /** What the connecting side sends to prove it holds the secret. */
  public byte[] connectorProof(byte[] opening, byte[] connectorNonce, byte[] acceptorNonce) {
    return mac(CONNECTOR, opening, connectorNonce, acceptorNonce);
  }

  /** Whether {@code proof} is the acceptor's proof, compared in constant time. */
  public boolean isAcceptorProof(
      byte[] proof, byte[] opening, byte[] connectorNonce, byte[] acceptorNonce) {
    return MessageDigest.isEqual(proof, acceptorProof(opening, connectorNonce, acceptorNonce));
  }

  /** Whether {@code proof} is the connector's proof, compared in constant time. */
  public boolean isConnectorProof(
      byte[] proof, byte[] opening, byte[] connectorNonce, byte[] acceptorNonce) {
    return MessageDigest.isEqual(proof, connectorProof(opening, connectorNonce, acceptorNonce));
  }

  /**
   * A 32-byte key for {@code purpose}, derived from the secret and a connection's handshake
   * (HMAC-SHA256 over a label distinct from the proofs', so no proof is ever a key).
   */
  public byte[] deriveKey(
      String purpose, byte[] opening, byte[] connectorNonce, byte[] acceptorNonce) {
    return mac(
        ("sparkccl key " + purpose).getBytes(StandardCharsets.US_ASCII),
        opening,
        connectorNonce,
        acceptorNonce);
  }

  private byte[] mac(byte[] role, byte[] opening, byte[] connectorNonce, byte[] acceptorNonce) {
    try {
      Mac mac = Mac.getInstance("HmacSHA256");
      mac.init(key);
      mac.update(role);
      mac.update(opening);
      mac.update(connectorNonce);
      mac.update(acceptorNonce);
      return mac.doFinal();
    } catch (GeneralSecurityException e) {
      // every Java platform must provide HmacSHA256
      throw new IllegalStateException("HmacSHA256 is unavailable", e);
    }
  }

  private static byte[] random(int n) {
    byte[] b = new byte[n];
    RANDOM.nextBytes(b);
    return b;
  }

  @Override
  public String toString() {
    return "ChallengeResponse[secret hidden]";
  }

  /** Hex digits of {@code b}, lower case. */
  public static String hex(byte[] b) {
    StringBuilder s = new StringBuilder(2 * b.length);
    for (byte x : b) {
      s.append(Character.forDigit((x >> 4) & 0xf, 16)).append(Character.forDigit(x & 0xf, 16));
    }
    return s.toString();
  }

  /**
   * The bytes of {@code hex}.
   *
   * @throws IllegalArgumentException when it is not an even number of hex digits
   */
  public static byte[] unhex(String hex) {
    if (hex.length() % 2 != 0) {
      throw new IllegalArgumentException("an odd number of hex digits");
    }
    byte[] b = new byte[hex.length() / 2];
    for (int i = 0; i < b.length; i++) {
      int hi = Character.digit(hex.charAt(2 * i), 16);
      int lo = Character.digit(hex.charAt(2 * i + 1), 16);
      if (hi < 0 || lo < 0) {
        throw new IllegalArgumentException("not a hex digit at " + (hi < 0 ? 2 * i : 2 * i + 1));
      }
      b[i] = (byte) (hi << 4 | lo);
    }
    return b;
  }
}
