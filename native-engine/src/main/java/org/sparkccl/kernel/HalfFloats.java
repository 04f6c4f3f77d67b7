package org.sparkccl.kernel;

/** IEEE float16 and bfloat16 conversions with round-to-nearest-even (Java 17 has neither). */
public final class HalfFloats {
  private HalfFloats() {}

  public static float halfToFloat(short h) {
    return Decoded.VALUES[h & 0xffff];
  }

  /**
   * Every float16 value as a float, made on first use (256 KiB): a look-up instead of the
   * conversion's branches, in a reduction's loop. With it and the branch-free rounding of {@link
   * #floatToHalf}, a 256 KiB float16 sum took 232 us against 1,682 before ({@code
   * bench/micro/ReduceTypes.java}, 2-core machine, docs/benchmarks.md).
   */
  private static final class Decoded {
    static final float[] VALUES = new float[1 << 16];

    static {
      for (int h = 0; h < VALUES.length; h++) {
        VALUES[h] = convert((short) h);
      }
    }
  }

  private static float convert(short h) {
    int bits = h & 0xffff;
    int sign = (bits & 0x8000) << 16;
    int exp = (bits >>> 10) & 0x1f;
    int mant = bits & 0x3ff;
    if (exp == 0) {
      float v = mant * 0x1p-24f;
      return sign != 0 ? -v : v;
    }
    if (exp == 31) {
      return Float.intBitsToFloat(sign | 0x7f800000 | (mant << 13));
    }
    return Float.intBitsToFloat(sign | ((exp + 112) << 23) | (mant << 13));
  }

  public static short floatToHalf(float f) {
    int bits = Float.floatToRawIntBits(f);
    int sign = (bits >>> 16) & 0x8000;
    int abs = bits & 0x7fffffff;
    if (abs >= 0x7f800000) {
      return (short) (sign | 0x7c00 | (abs > 0x7f800000 ? 0x200 : 0));
    }
    if (abs >= 0x477ff000) {
      return (short) (sign | 0x7c00);
    }
    if (abs < 0x38800000) {
      int m = (int) Math.rint(Float.intBitsToFloat(abs) * 0x1p24f);
      return (short) (sign | m);
    }
    // round to nearest even at the 13 bits dropped, without a branch on them (a reduction's sums
    // round either way at random, and a branch on them is mispredicted half the time): the
    // carry of a round-up runs into the exponent as it should; then the exponent is rebiased
    int rounded = (abs + 0xfff + ((abs >>> 13) & 1)) >>> 13;
    return (short) (sign | (rounded - (112 << 10)));
  }

  public static float bfloat16ToFloat(short h) {
    return Float.intBitsToFloat((h & 0xffff) << 16);
  }

  public static short floatToBfloat16(float f) {
    int bits = Float.floatToRawIntBits(f);
    if ((bits & 0x7fffffff) > 0x7f800000) {
      return (short) ((bits >>> 16) | 0x40);
    }
    return (short) ((bits + 0x7fff + ((bits >>> 16) & 1)) >>> 16);
  }
}
