package org.sparkccl.kernel;

/** IEEE float16 and bfloat16 conversions with round-to-nearest-even (Java 17 has neither). */
public final class HalfFloats {
  private HalfFloats() {}

  public static float halfToFloat(short h) {
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
    int h = (((abs >>> 23) - 112) << 10) | ((abs & 0x7fffff) >>> 13);
    int rem = abs & 0x1fff;
    if (rem > 0x1000 || (rem == 0x1000 && (h & 1) != 0)) {
      h++;
    }
    return (short) (sign | h);
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
