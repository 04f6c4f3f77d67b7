package org.sparkccl.kernel;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.SplittableRandom;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.sparkccl.DataType;
import org.sparkccl.ReduceOp;
import org.sparkccl.Reference;

/**
 * Element-wise reductions against a scalar reference written in the test. Half-precision types are
 * specified as "computed in float32 and rounded once per operation"; the reference does the float32
 * operation in Java and rounds with {@link Reference}'s exhaustive encoder.
 */
@DisplayName("Reducer")
class ReducerTest {
  /**
   * Elements a call: more than one block of every type's block path (4 KiB: 4,096 int8 elements,
   * 2,048 half-precision, 1,024 float32 or int32, 512 float64 or int64) and a multiple of none, so
   * that every block boundary and a short last block are checked.
   */
  private static final int COUNT = 4_099;

  private static ByteBuffer direct(int bytes) {
    return ByteBuffer.allocateDirect(bytes).order(ByteOrder.nativeOrder());
  }

  /** Random values over a wide range, both signs; never NaN. */
  private static void fillWide(ByteBuffer b, int off, int count, DataType t, SplittableRandom rnd) {
    for (int i = 0; i < count; i++) {
      int at = off + i * t.size();
      float sign = rnd.nextBoolean() ? 1f : -1f;
      switch (t) {
        case INT8, UINT8 -> b.put(at, (byte) (rnd.nextInt() | 1));
        case INT32, UINT32 -> b.putInt(at, rnd.nextInt() | 1);
        case INT64, UINT64 -> b.putLong(at, rnd.nextLong() | 1);
        // finite float16 of any magnitude (products may underflow or overflow: also checked)
        case FLOAT16 -> b.putShort(at, (short) (rnd.nextInt(0x7c00) | (rnd.nextInt(2) << 15)));
        case BFLOAT16 ->
            b.putShort(at, (short) (0x3000 + rnd.nextInt(0x1800) | (rnd.nextInt(2) << 15)));
        case FLOAT32 ->
            b.putFloat(at, sign * (float) Math.scalb(0.5 + rnd.nextDouble(), rnd.nextInt(-20, 20)));
        case FLOAT64 ->
            b.putDouble(at, sign * Math.scalb(0.5 + rnd.nextDouble(), rnd.nextInt(-40, 40)));
      }
    }
  }

  private static float halfValue(DataType t, short s) {
    return (float)
        (t == DataType.BFLOAT16
            ? Reference.bf16BitsToDouble(s & 0xffff)
            : Reference.halfBitsToDouble(s & 0xffff));
  }

  private static float floatOp(ReduceOp op, float x, float y) {
    return switch (op) {
      case SUM, AVG -> x + y;
      case PROD -> x * y;
      case MIN -> Math.min(x, y);
      case MAX -> Math.max(x, y);
    };
  }

  /** Expected bits of {@code a[i] op b[i]}, zero-extended to a long. */
  private static long expectedBits(
      DataType t, ReduceOp op, ByteBuffer a, int ao, ByteBuffer b, int bo, int i) {
    int sz = t.size();
    switch (t) {
      case FLOAT32 -> {
        return Float.floatToRawIntBits(floatOp(op, a.getFloat(ao + i * 4), b.getFloat(bo + i * 4)))
            & 0xffffffffL;
      }
      case FLOAT64 -> {
        double x = a.getDouble(ao + i * 8);
        double y = b.getDouble(bo + i * 8);
        double r = Reference.combineDouble(op, x, y);
        return Double.doubleToRawLongBits(r);
      }
      case FLOAT16, BFLOAT16 -> {
        float r =
            floatOp(op, halfValue(t, a.getShort(ao + i * 2)), halfValue(t, b.getShort(bo + i * 2)));
        return t == DataType.BFLOAT16 ? Reference.roundToBf16Bits(r) : Reference.roundToHalfBits(r);
      }
      default -> {
        long x = intAt(a, ao + i * sz, t);
        long y = intAt(b, bo + i * sz, t);
        return Reference.truncate(Reference.combineInt(t, op, x, y), t);
      }
    }
  }

  private static long intAt(ByteBuffer b, int at, DataType t) {
    return switch (t) {
      case INT8 -> b.get(at);
      case UINT8 -> b.get(at) & 0xffL;
      case INT32 -> b.getInt(at);
      case UINT32 -> b.getInt(at) & 0xffffffffL;
      default -> b.getLong(at);
    };
  }

  private static long bitsAt(ByteBuffer b, int at, DataType t) {
    return switch (t.size()) {
      case 1 -> b.get(at) & 0xffL;
      case 2 -> b.getShort(at) & 0xffffL;
      case 4 -> b.getInt(at) & 0xffffffffL;
      default -> b.getLong(at);
    };
  }

  @Test
  @DisplayName(
      "every dtype and op matches a scalar reference, at odd offsets, out of place and in place")
  void everyDtypeAndOpMatchesTheScalarReference() {
    SplittableRandom rnd = new SplittableRandom(11);
    for (DataType t : DataType.values()) {
      for (ReduceOp op : ReduceOp.values()) {
        if (!op.supports(t)) {
          continue;
        }
        int sz = t.size();
        int ao = 3 * sz;
        int bo = 5 * sz;
        int oo = 7 * sz;
        int bytes = (COUNT + 16) * sz;
        ByteBuffer a = direct(bytes);
        ByteBuffer b = direct(bytes);
        ByteBuffer out = direct(bytes);
        fillWide(a, ao, COUNT, t, rnd);
        fillWide(b, bo, COUNT, t, rnd);
        for (int i = 0; i < bytes; i++) {
          out.put(i, (byte) 0x5a);
        }
        long[] expected = new long[COUNT];
        for (int i = 0; i < COUNT; i++) {
          expected[i] = expectedBits(t, op, a, ao, b, bo, i);
        }
        Reducer.reduce(t, op, a, ao, b, bo, out, oo, COUNT);
        String c = t + " " + op;
        for (int i = 0; i < COUNT; i++) {
          long got = bitsAt(out, oo + i * sz, t);
          if (got != expected[i]) {
            fail(
                c
                    + ": element "
                    + i
                    + ": expected bits 0x"
                    + Long.toHexString(expected[i])
                    + " got 0x"
                    + Long.toHexString(got)
                    + " (inputs 0x"
                    + Long.toHexString(bitsAt(a, ao + i * sz, t))
                    + ", 0x"
                    + Long.toHexString(bitsAt(b, bo + i * sz, t))
                    + ")");
          }
        }
        for (int i = 0; i < bytes; i++) {
          if ((i < oo || i >= oo + COUNT * sz) && out.get(i) != 0x5a) {
            fail(c + ": byte " + i + " outside the output range was written");
          }
        }
        // in place: out is b itself, at the same offset (as an in-place collective does)
        Reducer.reduce(t, op, a, ao, b, bo, b, bo, COUNT);
        for (int i = 0; i < COUNT; i++) {
          long got = bitsAt(b, bo + i * sz, t);
          if (got != expected[i]) {
            fail(
                c
                    + " in place: element "
                    + i
                    + ": expected bits 0x"
                    + Long.toHexString(expected[i])
                    + " got 0x"
                    + Long.toHexString(got));
          }
        }
      }
    }
  }

  @Test
  @DisplayName(
      "divide, the last step of avg, divides every floating-point element and rejects integers")
  void divideMatchesTheScalarReference() {
    SplittableRandom rnd = new SplittableRandom(12);
    for (DataType t : DataType.values()) {
      if (!t.isFloatingPoint()) {
        ByteBuffer buf = direct(64);
        IllegalArgumentException e =
            assertThrows(IllegalArgumentException.class, () -> Reducer.divide(t, buf, 0, 4, 3));
        assertTrue(e.getMessage().contains(t.wireName()), e.getMessage());
        continue;
      }
      for (int divisor : new int[] {1, 2, 3, 7}) {
        int sz = t.size();
        int off = 2 * sz;
        ByteBuffer buf = direct((COUNT + 4) * sz);
        fillWide(buf, off, COUNT, t, rnd);
        long[] expected = new long[COUNT];
        for (int i = 0; i < COUNT; i++) {
          int at = off + i * sz;
          expected[i] =
              switch (t) {
                case FLOAT32 -> Float.floatToRawIntBits(buf.getFloat(at) / divisor) & 0xffffffffL;
                case FLOAT64 -> Double.doubleToRawLongBits(buf.getDouble(at) / divisor);
                case FLOAT16 -> Reference.roundToHalfBits(halfValue(t, buf.getShort(at)) / divisor);
                default -> Reference.roundToBf16Bits(halfValue(t, buf.getShort(at)) / divisor);
              };
        }
        Reducer.divide(t, buf, off, COUNT, divisor);
        for (int i = 0; i < COUNT; i++) {
          long got = bitsAt(buf, off + i * sz, t);
          if (got != expected[i]) {
            fail(
                t
                    + " / "
                    + divisor
                    + ": element "
                    + i
                    + ": expected bits 0x"
                    + Long.toHexString(expected[i])
                    + " got 0x"
                    + Long.toHexString(got));
          }
        }
      }
    }
  }

  /**
   * {@code reduceCanonical} gives {@code reduce}'s bits, but every NaN the canonical quiet NaN: NaN
   * operands with random payloads and signs, infinities whose sum or product is NaN, infinities
   * that stay infinite, in blocks without any of them and in the element-wise path of small counts.
   */
  @Test
  void reduceCanonicalRewritesEveryNaNAndNothingElse() {
    SplittableRandom rnd = new SplittableRandom(77);
    for (DataType t : new DataType[] {DataType.FLOAT32, DataType.FLOAT64}) {
      for (ReduceOp op : ReduceOp.values()) {
        for (int count : new int[] {1, 64, 65, 4096, 10_007}) {
          int sz = t.size();
          ByteBuffer a = direct(count * sz);
          ByteBuffer b = direct(count * sz);
          fillWide(a, 0, count, t, rnd);
          fillWide(b, 0, count, t, rnd);
          // specials in the first half only: the later blocks of the large counts have none
          for (int k = 0; k < Math.max(1, count / 200); k++) {
            int i = rnd.nextInt(Math.max(1, count / 2));
            ByteBuffer into = rnd.nextBoolean() ? a : b;
            switch (rnd.nextInt(3)) {
              case 0 -> putSpecial(into, i, t, true, rnd); // NaN, random payload and sign
              case 1 -> putSpecial(into, i, t, false, rnd); // +-infinity
              default -> {
                putSpecial(a, i, t, false, rnd);
                putSpecial(b, i, t, false, rnd); // inf - inf is NaN; inf * inf is not
              }
            }
          }
          ByteBuffer plain = direct(count * sz);
          ByteBuffer canonical = direct(count * sz);
          Reducer.reduce(t, op, a, 0, b, 0, plain, 0, count);
          Reducer.reduceCanonical(t, op, a, 0, b, 0, canonical, 0, count);
          for (int i = 0; i < count; i++) {
            long p = bitsAt(plain, i * sz, t);
            boolean nan =
                t == DataType.FLOAT32
                    ? Float.isNaN(Float.intBitsToFloat((int) p))
                    : Double.isNaN(Double.longBitsToDouble(p));
            long want = !nan ? p : t == DataType.FLOAT32 ? 0x7fc00000L : 0x7ff8000000000000L;
            long got = bitsAt(canonical, i * sz, t);
            if (got != want) {
              fail(
                  t
                      + " "
                      + op
                      + " count "
                      + count
                      + ": element "
                      + i
                      + ": expected bits 0x"
                      + Long.toHexString(want)
                      + " got 0x"
                      + Long.toHexString(got));
            }
          }
        }
      }
    }
  }

  /** A NaN with a random payload and sign, or an infinity of random sign, at element {@code i}. */
  private static void putSpecial(
      ByteBuffer buf, int i, DataType t, boolean nan, SplittableRandom rnd) {
    long sign = rnd.nextBoolean() ? 1 : 0;
    if (t == DataType.FLOAT32) {
      int payload = nan ? 1 + rnd.nextInt(0x7fffff) : 0;
      buf.putInt(i * 4, (int) (sign << 31) | 0x7f800000 | payload);
    } else {
      long payload = nan ? 1 + rnd.nextLong(0xfffffffffffffL) : 0;
      buf.putLong(i * 8, (sign << 63) | 0x7ff0000000000000L | payload);
    }
  }
}
