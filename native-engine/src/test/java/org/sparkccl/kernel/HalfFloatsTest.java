package org.sparkccl.kernel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.util.SplittableRandom;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.sparkccl.Reference;

/**
 * float16 and bfloat16 conversions against an independent decoder and a round-to-nearest-even
 * encoder that searches every representable value ({@link Reference}).
 */
@DisplayName("float16 and bfloat16 conversions")
class HalfFloatsTest {

  private static String hex(int bits) {
    return String.format("0x%04x", bits & 0xffff);
  }

  private static String floatHex(float f) {
    return f + " (" + Integer.toHexString(Float.floatToRawIntBits(f)) + ")";
  }

  @Test
  @DisplayName("every float16 bit pattern decodes to its IEEE value and encodes back to itself")
  void everyFloat16PatternRoundTrips() {
    for (int b = 0; b < 0x10000; b++) {
      float f = HalfFloats.halfToFloat((short) b);
      if (Reference.isHalfNaN(b)) {
        assertTrue(Float.isNaN(f), hex(b) + " is a NaN but decodes to " + f);
        assertTrue(
            Reference.isHalfNaN(HalfFloats.floatToHalf(f) & 0xffff),
            "NaN " + hex(b) + " must encode back to a NaN");
        continue;
      }
      float expected = (float) Reference.halfBitsToDouble(b);
      if (Float.floatToRawIntBits(f) != Float.floatToRawIntBits(expected)) {
        fail(hex(b) + " decodes to " + floatHex(f) + ", expected " + floatHex(expected));
      }
      int back = HalfFloats.floatToHalf(f) & 0xffff;
      if (back != b) {
        fail(hex(b) + " -> " + f + " -> " + hex(back) + ": the round trip changed the bits");
      }
    }
  }

  @Test
  @DisplayName("every bfloat16 bit pattern decodes to its value and encodes back to itself")
  void everyBfloat16PatternRoundTrips() {
    for (int b = 0; b < 0x10000; b++) {
      float f = HalfFloats.bfloat16ToFloat((short) b);
      if (Reference.isBf16NaN(b)) {
        assertTrue(Float.isNaN(f), hex(b) + " is a NaN but decodes to " + f);
        assertTrue(
            Reference.isBf16NaN(HalfFloats.floatToBfloat16(f) & 0xffff),
            "NaN " + hex(b) + " must encode back to a NaN");
        continue;
      }
      float expected = (float) Reference.bf16BitsToDouble(b);
      if (Float.floatToRawIntBits(f) != Float.floatToRawIntBits(expected)) {
        fail(hex(b) + " decodes to " + floatHex(f) + ", expected " + floatHex(expected));
      }
      int back = HalfFloats.floatToBfloat16(f) & 0xffff;
      if (back != b) {
        fail(hex(b) + " -> " + f + " -> " + hex(back) + ": the round trip changed the bits");
      }
    }
  }

  @Test
  @DisplayName("known float16 values round as IEEE says")
  void knownFloat16Roundings() {
    float smallestSubnormal = 0x1p-24f;
    Object[][] cases = {
      {1.0f, 0x3c00},
      {-2.0f, 0xc000},
      {0.5f, 0x3800},
      {65504f, 0x7bff}, // largest finite
      {65519.996f, 0x7bff}, // just below the overflow midpoint
      {65520f, 0x7c00}, // the midpoint rounds to even: infinity
      {1e6f, 0x7c00},
      {-1e6f, 0xfc00},
      {Float.POSITIVE_INFINITY, 0x7c00},
      {Float.NEGATIVE_INFINITY, 0xfc00},
      {smallestSubnormal, 0x0001},
      {0x1p-25f, 0x0000}, // half the smallest subnormal: tie, to even (zero)
      {0x1.8p-25f, 0x0001}, // three quarters: up
      {0x1.8p-24f, 0x0002}, // 1.5 subnormal steps: tie, to even (2)
      {0x1p-14f, 0x0400}, // smallest normal
      {0x1.ff8p-15f, 0x03ff}, // largest subnormal
      {0x1.ffcp-15f, 0x0400}, // largest subnormal + half a step: tie, to even (the normals)
      {1.0f + 0x1p-11f, 0x3c00}, // tie between 1 and 1+2^-10: to even
      {1.0f + 0x3p-11f, 0x3c02}, // tie between 1+2^-10 and 1+2^-9: to even
      {1.0f + 0x1p-11f + 0x1p-20f, 0x3c01}, // just above the tie: up
      {0.0f, 0x0000},
      {-0.0f, 0x8000},
      {-0x1p-30f, 0x8000}, // underflows to negative zero
      {0.1f, 0x2e66},
      {3.14159f, 0x4248},
    };
    for (Object[] c : cases) {
      float f = (Float) c[0];
      int expected = (Integer) c[1];
      assertEquals(
          hex(expected), hex(HalfFloats.floatToHalf(f)), "floatToHalf(" + floatHex(f) + ")");
      assertEquals(hex(expected), hex(Reference.roundToHalfBits(f)), "the reference itself, " + f);
    }
    assertTrue(Float.isNaN(HalfFloats.halfToFloat(HalfFloats.floatToHalf(Float.NaN))));
    assertEquals(smallestSubnormal, HalfFloats.halfToFloat((short) 1));
    assertEquals(65504f, HalfFloats.halfToFloat((short) 0x7bff));
  }

  @Test
  @DisplayName("known bfloat16 values round as IEEE says")
  void knownBfloat16Roundings() {
    Object[][] cases = {
      {1.0f, 0x3f80},
      {-2.0f, 0xc000},
      {1.0f + 0x1p-8f, 0x3f80}, // tie: to even
      {1.0f + 0x3p-8f, 0x3f82}, // tie: to even
      {1.0f + 0x1p-8f + 0x1p-20f, 0x3f81}, // above the tie: up
      {Float.MAX_VALUE, 0x7f80}, // rounds past the largest bfloat16: infinity
      {0x1.fep127f, 0x7f7f}, // the largest bfloat16
      {Float.MIN_VALUE, 0x0000}, // far below half the smallest bfloat16 subnormal
      {0x1p-133f, 0x0001}, // smallest bfloat16 subnormal
      {-0.0f, 0x8000},
      {Float.NEGATIVE_INFINITY, 0xff80},
      {0.1f, 0x3dcd},
    };
    for (Object[] c : cases) {
      float f = (Float) c[0];
      int expected = (Integer) c[1];
      assertEquals(
          hex(expected),
          hex(HalfFloats.floatToBfloat16(f)),
          "floatToBfloat16(" + floatHex(f) + ")");
      assertEquals(hex(expected), hex(Reference.roundToBf16Bits(f)), "the reference itself, " + f);
    }
    assertTrue(Float.isNaN(HalfFloats.bfloat16ToFloat(HalfFloats.floatToBfloat16(Float.NaN))));
  }

  @Test
  @DisplayName(
      "every midpoint between neighbouring values rounds to the even one, and its"
          + " neighbours to the nearer")
  void midpointsRoundToEven() {
    for (boolean bf : new boolean[] {false, true}) {
      int inf = bf ? 0x7f80 : 0x7c00;
      for (int b = 0; b < inf; b++) {
        for (int sign : new int[] {0, 0x8000}) {
          double lo = bf ? Reference.bf16BitsToDouble(b) : Reference.halfBitsToDouble(b);
          double hi =
              b + 1 == inf
                  ? (bf ? Math.scalb(1.0, 128) : 65536.0)
                  : (bf ? Reference.bf16BitsToDouble(b + 1) : Reference.halfBitsToDouble(b + 1));
          float mid = (float) ((lo + hi) / 2); // exact: needs one bit more than the format
          int even = (b & 1) == 0 ? b : b + 1;
          float below = Math.nextDown(mid);
          float above = Math.nextUp(mid);
          float s = sign == 0 ? 1f : -1f;
          check(bf, s * mid, sign | even, "midpoint above " + hex(sign | b));
          check(bf, s * below, sign | b, "just below the midpoint above " + hex(sign | b));
          check(bf, s * above, sign | (b + 1), "just above the midpoint above " + hex(sign | b));
        }
      }
    }
  }

  private static void check(boolean bf, float f, int expected, String what) {
    int got = (bf ? HalfFloats.floatToBfloat16(f) : HalfFloats.floatToHalf(f)) & 0xffff;
    if (got != expected) {
      fail(
          (bf ? "bfloat16" : "float16")
              + ": "
              + what
              + ": "
              + floatHex(f)
              + " encodes to "
              + hex(got)
              + ", expected "
              + hex(expected));
    }
  }

  @Test
  @DisplayName("random floats of every magnitude round like the exhaustive reference")
  void randomFloatsMatchTheReference() {
    SplittableRandom rnd = new SplittableRandom(7);
    for (int i = 0; i < 300_000; i++) {
      // exponents from deep below the subnormals to beyond the largest finite value
      float f;
      if (i % 2 == 0) {
        int exp = 127 + rnd.nextInt(-30, 18);
        f = Float.intBitsToFloat((rnd.nextInt(2) << 31) | (exp << 23) | rnd.nextInt(1 << 23));
      } else {
        int bits = rnd.nextInt();
        if (((bits >>> 23) & 0xff) == 0xff) {
          bits ^= 1 << 23; // any finite float
        }
        f = Float.intBitsToFloat(bits);
      }
      check(false, f, Reference.roundToHalfBits(f), "random");
      check(true, f, Reference.roundToBf16Bits(f), "random");
    }
  }
}
