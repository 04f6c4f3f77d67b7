package org.sparkccl.kernel;

import java.nio.ByteBuffer;
import java.nio.IntBuffer;
import java.nio.LongBuffer;
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
   * Canonicalises {@code count} floats of {@code bits} (a native-order int view of them) from its
   * element {@code base}; {@code block} is scratch of at least {@code count} ints. The bits come
   * out in one bulk copy and an integer scan that C2 vectorises ({@code 0x7f800000 - (bits &
   * 0x7fffffff)} is negative exactly for a NaN); only a block that holds a NaN is rewritten and
   * written back. On the 16-core host ({@code java bench/micro/NanPassCost.java}, 8,192 floats):
   * the sum and this scan 5.7-6.4 us, the sum and an element-by-element pass over the buffer
   * 9.1-10.2, the sum with a float check instead (the largest magnitude through {@code Math.max},
   * which C2 did not vectorise there) 11.9-13.4.
   */
  static void canonicalize(IntBuffer bits, int base, int[] block, int count) {
    bits.get(base, block, 0, count);
    int nan = 0;
    for (int i = 0; i < count; i++) {
      nan |= 0x7f800000 - (block[i] & 0x7fffffff);
    }
    if (nan < 0) {
      for (int i = 0; i < count; i++) {
        if ((block[i] & 0x7fffffff) > 0x7f800000) {
          block[i] = 0x7fc00000;
        }
      }
      bits.put(base, block, 0, count);
    }
  }

  /** As {@link #canonicalize(IntBuffer, int, int[], int)}, for doubles. */
  static void canonicalize(LongBuffer bits, int base, long[] block, int count) {
    bits.get(base, block, 0, count);
    long nan = 0;
    for (int i = 0; i < count; i++) {
      nan |= 0x7ff0000000000000L - (block[i] & 0x7fffffffffffffffL);
    }
    if (nan < 0) {
      for (int i = 0; i < count; i++) {
        if ((block[i] & 0x7fffffffffffffffL) > 0x7ff0000000000000L) {
          block[i] = 0x7ff8000000000000L;
        }
      }
      bits.put(base, block, 0, count);
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
