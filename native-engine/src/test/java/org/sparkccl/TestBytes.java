package org.sparkccl;

import java.nio.ByteBuffer;
import java.util.SplittableRandom;

/** Byte arrays for tests that move raw bytes: random ones, parts of them, and a buffer's first. */
public final class TestBytes {
  private TestBytes() {}

  /** {@code n} random bytes from {@code seed}. */
  public static byte[] random(int n, long seed) {
    byte[] b = new byte[n];
    new SplittableRandom(seed).nextBytes(b);
    return b;
  }

  /** {@code b[from, from + len)}. */
  public static byte[] slice(byte[] b, int from, int len) {
    byte[] out = new byte[len];
    System.arraycopy(b, from, out, 0, len);
    return out;
  }

  /** The first {@code len} bytes of {@code b} (absolute: its position is left alone). */
  public static byte[] bytes(ByteBuffer b, int len) {
    byte[] out = new byte[len];
    b.get(0, out, 0, len);
    return out;
  }
}
