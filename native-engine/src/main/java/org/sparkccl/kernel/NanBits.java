package org.sparkccl.kernel;

import java.nio.ByteBuffer;
import org.sparkccl.DataType;

/**
 * Rewrites every NaN of a floating-point slice as the one canonical quiet NaN. When two NaNs meet,
 * which payload survives depends on the machine code that adds them, and the JIT may swap the
 * operands of a commutative add: ranks that each compute a sum themselves (recursive doubling)
 * could then hold different NaN bits. Every other result is the same whatever the operand order.
 */
final class NanBits {
  private NanBits() {}

  /** Canonicalises {@code count} elements of {@code type} from byte {@code off} of {@code buf}. */
  static void canonicalize(DataType type, ByteBuffer buf, int off, int count) {
    switch (type) {
      case FLOAT32 -> {
        for (int i = 0, p = off; i < count; i++, p += 4) {
          if ((buf.getInt(p) & 0x7fffffff) > 0x7f800000) {
            buf.putInt(p, 0x7fc00000);
          }
        }
      }
      case FLOAT64 -> {
        for (int i = 0, p = off; i < count; i++, p += 8) {
          if ((buf.getLong(p) & 0x7fffffffffffffffL) > 0x7ff0000000000000L) {
            buf.putLong(p, 0x7ff8000000000000L);
          }
        }
      }
      case FLOAT16 -> halves(buf, off, count, (short) 0x7c00, (short) 0x7e00);
      case BFLOAT16 -> halves(buf, off, count, (short) 0x7f80, (short) 0x7fc0);
      default -> {
        // integers have no NaN
      }
    }
  }

  /**
   * Canonicalises the first {@code len} floats of {@code x} (see {@link Reducer#reduceCanonical}).
   */
  static void canonicalize(float[] x, int len) {
    float largest = 0;
    for (int i = 0; i < len; i++) {
      largest = Math.max(largest, Math.abs(x[i]));
    }
    if (largest < Float.POSITIVE_INFINITY) {
      return; // false for NaN: no NaN in the block
    }
    float canonical = Float.intBitsToFloat(0x7fc00000);
    for (int i = 0; i < len; i++) {
      if (Float.isNaN(x[i])) {
        x[i] = canonical;
      }
    }
  }

  /**
   * Canonicalises the first {@code len} doubles of {@code x}, as {@link #canonicalize(float[],
   * int)}.
   */
  static void canonicalize(double[] x, int len) {
    double largest = 0;
    for (int i = 0; i < len; i++) {
      largest = Math.max(largest, Math.abs(x[i]));
    }
    if (largest < Double.POSITIVE_INFINITY) {
      return;
    }
    double canonical = Double.longBitsToDouble(0x7ff8000000000000L);
    for (int i = 0; i < len; i++) {
      if (Double.isNaN(x[i])) {
        x[i] = canonical;
      }
    }
  }

  private static void halves(ByteBuffer buf, int off, int count, short infinity, short nan) {
    for (int i = 0, p = off; i < count; i++, p += 2) {
      if ((buf.getShort(p) & 0x7fff) > infinity) {
        buf.putShort(p, nan);
      }
    }
  }
}
