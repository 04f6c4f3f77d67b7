package org.sparkccl.transport.ucx;

import java.nio.ByteBuffer;
import java.security.GeneralSecurityException;
import javax.crypto.Mac;
import javax.crypto.ShortBufferException;
import javax.crypto.spec.SecretKeySpec;
import org.sparkccl.auth.ChallengeResponse;

/**
 * The MAC on the UCX control notices of one direction of one connection: HMAC-SHA256 under a key
 * derived from the communicator's secret and the route (sending rank, receiving rank, channel,
 * which end), truncated to {@link #BYTES}. UCX delivers a tag message from whoever holds the
 * worker's address and lets anyone choose the tag, so a notice's origin is proven by this MAC and
 * nothing else; the route in the key stops a notice meant for one connection being accepted by
 * another, and the counter inside the MAC stops a recorded notice being replayed.
 */
final class NoticeMac {
  /** Bytes of the truncated MAC on each notice (128 bits). */
  static final int BYTES = 16;

  private final Mac mac;
  private final byte[] full = new byte[32];

  /**
   * @param toSendingEnd whether the notices go to the sending end of the connection (they come from
   *     its receiving end)
   */
  NoticeMac(byte[] secret, int fromRank, int toRank, int channel, boolean toSendingEnd) {
    byte[] route =
        ByteBuffer.allocate(16)
            .putInt(fromRank)
            .putInt(toRank)
            .putInt(channel)
            .putInt(toSendingEnd ? 1 : 0)
            .array();
    byte[] key =
        new ChallengeResponse(secret).deriveKey("ucx notice", route, new byte[0], new byte[0]);
    try {
      mac = Mac.getInstance("HmacSHA256");
      mac.init(new SecretKeySpec(key, "HmacSHA256"));
    } catch (GeneralSecurityException e) {
      // every Java platform must provide HmacSHA256
      throw new IllegalStateException("HmacSHA256 is unavailable", e);
    }
  }

  /** Writes the MAC of {@code bytes[0, length)} into {@code bytes[length, length + BYTES)}. */
  void sign(byte[] bytes, int length) {
    compute(bytes, length);
    System.arraycopy(full, 0, bytes, length, BYTES);
  }

  /**
   * Whether {@code bytes[length, length + BYTES)} is the MAC of {@code bytes[0, length)}, compared
   * in constant time.
   */
  boolean verify(byte[] bytes, int length) {
    compute(bytes, length);
    int diff = 0;
    for (int i = 0; i < BYTES; i++) {
      diff |= full[i] ^ bytes[length + i];
    }
    return diff == 0;
  }

  private void compute(byte[] bytes, int length) {
    mac.update(bytes, 0, length);
    try {
      mac.doFinal(full, 0);
    } catch (ShortBufferException e) {
      throw new IllegalStateException("a 32-byte buffer is too short for HmacSHA256", e);
    }
  }

  @Override
  public String toString() {
    return "NoticeMac[key hidden]";
  }
}
