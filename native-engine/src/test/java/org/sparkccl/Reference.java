package org.sparkccl;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Test-only inputs and references, written without any engine code: random inputs of every data
 * type, an independent float16/bfloat16 decoder and round-to-nearest-even encoder, and the expected
 * allReduce result (double precision for floating point, exact wrapping arithmetic for integers).
 */
public final class Reference {
  /** dtype x op pairs of the reduced set: every dtype and every op at least once. */
  static final List<Object[]> REDUCED_PAIRS =
      List.of(
          new Object[] {DataType.FLOAT32, ReduceOp.SUM},
          new Object[] {DataType.FLOAT32, ReduceOp.AVG},
          new Object[] {DataType.FLOAT64, ReduceOp.PROD},
          new Object[] {DataType.FLOAT16, ReduceOp.SUM},
          new Object[] {DataType.BFLOAT16, ReduceOp.MAX},
          new Object[] {DataType.INT8, ReduceOp.MIN},
          new Object[] {DataType.UINT8, ReduceOp.SUM},
          new Object[] {DataType.INT32, ReduceOp.PROD},
          new Object[] {DataType.UINT32, ReduceOp.MAX},
          new Object[] {DataType.INT64, ReduceOp.SUM},
          new Object[] {DataType.UINT64, ReduceOp.MIN});

  /** Every dtype x op pair the engine supports, dtypes in order. */
  static final List<Object[]> ALL_PAIRS = allPairs();

  /** Every dtype, each with a null op: the pairs of a collective that only moves data. */
  static final List<Object[]> DTYPES_ONLY =
      Arrays.stream(DataType.values()).map(t -> new Object[] {t, null}).toList();

  private static List<Object[]> allPairs() {
    List<Object[]> out = new ArrayList<>();
    for (DataType t : DataType.values()) {
      for (ReduceOp op : ReduceOp.values()) {
        if (op.supports(t)) {
          out.add(new Object[] {t, op});
        }
      }
    }
    return List.copyOf(out);
  }

  private Reference() {}

  // ---------------------------------------------------------------- half-precision formats

  /** Value of a float16 bit pattern, from the IEEE 754 definition. */
  public static double halfBitsToDouble(int bits) {
    int sign = (bits >>> 15) & 1;
    int exp = (bits >>> 10) & 0x1f;
    int mant = bits & 0x3ff;
    double v;
    if (exp == 0x1f) {
      v = mant == 0 ? Double.POSITIVE_INFINITY : Double.NaN;
    } else if (exp == 0) {
      v = Math.scalb((double) mant, -24);
    } else {
      v = Math.scalb((double) (1024 + mant), exp - 25);
    }
    return sign == 1 ? -v : v;
  }

  /** Value of a bfloat16 bit pattern (the top half of a float32). */
  public static double bf16BitsToDouble(int bits) {
    int sign = (bits >>> 15) & 1;
    int exp = (bits >>> 7) & 0xff;
    int mant = bits & 0x7f;
    double v;
    if (exp == 0xff) {
      v = mant == 0 ? Double.POSITIVE_INFINITY : Double.NaN;
    } else if (exp == 0) {
      v = Math.scalb((double) mant, -133);
    } else {
      v = Math.scalb((double) (128 + mant), exp - 134);
    }
    return sign == 1 ? -v : v;
  }

  public static boolean isHalfNaN(int bits) {
    return (bits & 0x7c00) == 0x7c00 && (bits & 0x3ff) != 0;
  }

  public static boolean isBf16NaN(int bits) {
    return (bits & 0x7f80) == 0x7f80 && (bits & 0x7f) != 0;
  }

  /**
   * Positive values of a 16-bit format indexed by bit pattern, from +0 up to the pattern of
   * +infinity, where the entry is the value the next binade would start at (2^16 for float16, 2^128
   * for bfloat16): IEEE rounds as if the exponent were unbounded and overflows to infinity.
   */
  private static final double[] HALF_TABLE = table(0x7c00, false);

  private static final double[] BF16_TABLE = table(0x7f80, true);

  private static double[] table(int infBits, boolean bf) {
    double[] t = new double[infBits + 1];
    for (int b = 0; b < infBits; b++) {
      t[b] = bf ? bf16BitsToDouble(b) : halfBitsToDouble(b);
    }
    t[infBits] = bf ? Math.scalb(1.0, 128) : Math.scalb(1.0, 16);
    return t;
  }

  /** Rounds {@code v} to the nearest float16 (ties to even), by search over every value. */
  public static int roundToHalfBits(double v) {
    return roundBits(v, HALF_TABLE, 0x7e00);
  }

  /** Rounds {@code v} to the nearest bfloat16 (ties to even), by search over every value. */
  public static int roundToBf16Bits(double v) {
    return roundBits(v, BF16_TABLE, 0x7fc0);
  }

  private static int roundBits(double v, double[] table, int nan) {
    if (Double.isNaN(v)) {
      return nan;
    }
    int sign = (Double.doubleToRawLongBits(v) < 0) ? 0x8000 : 0;
    double a = Math.abs(v);
    int inf = table.length - 1;
    if (a >= table[inf]) {
      return sign | inf;
    }
    int i = Arrays.binarySearch(table, a);
    if (i >= 0) {
      return sign | i;
    }
    int hi = -i - 1;
    int lo = hi - 1;
    double dLo = a - table[lo];
    double dHi = table[hi] - a;
    int pick = dLo < dHi ? lo : dHi < dLo ? hi : ((lo & 1) == 0 ? lo : hi);
    return sign | pick;
  }

  // ---------------------------------------------------------------- random inputs

  /**
   * Fills {@code count} elements of a native-order buffer from index 0 with random inputs: floating
   * point in [0.5, 1.5) (never zero), integers random in all their bits and non-zero (odd when
   * {@code oddIntegers}, so that long products do not collapse to zero).
   */
  public static void fill(
      ByteBuffer b, int count, DataType t, SplittableRandom rnd, boolean oddIntegers) {
    for (int i = 0; i < count; i++) {
      int at = i * t.size();
      switch (t) {
        case INT8, UINT8 -> b.put(at, (byte) integer(rnd, oddIntegers));
        case INT32, UINT32 -> b.putInt(at, (int) integer(rnd, oddIntegers));
        case INT64, UINT64 -> b.putLong(at, integer(rnd, oddIntegers));
        // [0.5, 1.5): 0x3800 is 0.5, 0x3c00 is 1.0, 0x3e00 is 1.5
        case FLOAT16 -> b.putShort(at, (short) (0x3800 + rnd.nextInt(0x600)));
        // [0.5, 1.5): 0x3f00 is 0.5, 0x3f80 is 1.0, 0x3fc0 is 1.5
        case BFLOAT16 -> b.putShort(at, (short) (0x3f00 + rnd.nextInt(0xc0)));
        case FLOAT32 -> b.putFloat(at, 0.5f + (float) rnd.nextDouble());
        case FLOAT64 -> b.putDouble(at, 0.5 + rnd.nextDouble());
      }
    }
  }

  private static long integer(SplittableRandom rnd, boolean odd) {
    long v = rnd.nextLong();
    if (odd) {
      return v | 1;
    }
    return (v & 0xff) == 0 ? v | 0x5a : v;
  }

  /** Random bytes, for buffer regions that must stay untouched. */
  public static void fillBytes(ByteBuffer b, int from, int to, SplittableRandom rnd) {
    for (int i = from; i < to; i++) {
      b.put(i, (byte) rnd.nextInt());
    }
  }

  public static ByteBuffer heap(int bytes) {
    return ByteBuffer.allocate(bytes).order(ByteOrder.nativeOrder());
  }

  // ---------------------------------------------------------------- element access

  /** Element {@code i} of a floating-point buffer as a double. */
  public static double floatAt(ByteBuffer b, int i, DataType t) {
    int at = i * t.size();
    return switch (t) {
      case FLOAT16 -> halfBitsToDouble(b.getShort(at) & 0xffff);
      case BFLOAT16 -> bf16BitsToDouble(b.getShort(at) & 0xffff);
      case FLOAT32 -> b.getFloat(at);
      case FLOAT64 -> b.getDouble(at);
      default -> throw new IllegalArgumentException("not floating point: " + t);
    };
  }

  /** Element {@code i} of an integer buffer, sign- or zero-extended as the type says. */
  public static long intAt(ByteBuffer b, int i, DataType t) {
    int at = i * t.size();
    return switch (t) {
      case INT8 -> b.get(at);
      case UINT8 -> b.get(at) & 0xffL;
      case INT32 -> b.getInt(at);
      case UINT32 -> b.getInt(at) & 0xffffffffL;
      case INT64, UINT64 -> b.getLong(at);
      default -> throw new IllegalArgumentException("not an integer type: " + t);
    };
  }

  /** The low {@code 8 * size} bits of {@code v}: what a stored integer of the type holds. */
  public static long truncate(long v, DataType t) {
    return switch (t.size()) {
      case 1 -> v & 0xffL;
      case 4 -> v & 0xffffffffL;
      default -> v;
    };
  }

  /** {@code a op b} for integers of type {@code t}, wrapping as the type does. */
  public static long combineInt(DataType t, ReduceOp op, long a, long b) {
    boolean u64 = t == DataType.UINT64;
    return switch (op) {
      case SUM, AVG -> a + b;
      case PROD -> a * b;
      case MIN -> (u64 ? Long.compareUnsigned(a, b) <= 0 : a <= b) ? a : b;
      case MAX -> (u64 ? Long.compareUnsigned(a, b) >= 0 : a >= b) ? a : b;
    };
  }

  public static double combineDouble(ReduceOp op, double a, double b) {
    return switch (op) {
      case SUM, AVG -> a + b;
      case PROD -> a * b;
      case MIN -> Math.min(a, b);
      case MAX -> Math.max(a, b);
    };
  }

  /** Machine epsilon (the gap above 1.0) of a floating-point type. */
  public static double eps(DataType t) {
    return switch (t) {
      case FLOAT16 -> 0x1p-10;
      case BFLOAT16 -> 0x1p-7;
      case FLOAT32 -> 0x1p-23;
      case FLOAT64 -> 0x1p-52;
      default -> 0;
    };
  }

  /** Relative tolerance of a reduction over {@code n} ranks: 0 for min/max and integers. */
  public static double tolerance(DataType t, ReduceOp op, int n) {
    if (!t.isFloatingPoint() || op == ReduceOp.MIN || op == ReduceOp.MAX) {
      return 0;
    }
    return 2.0 * (n + 1) * eps(t);
  }

  // ---------------------------------------------------------------- expected allReduce result

  /** The expected result of an allReduce over {@code inputs} (indexed by rank). */
  public static final class Expected {
    final DataType type;
    final ReduceOp op;
    final int count;
    final int nRanks;
    final double[] floats;
    final long[] ints;

    private Expected(DataType type, ReduceOp op, int count, int nRanks) {
      this.type = type;
      this.op = op;
      this.count = count;
      this.nRanks = nRanks;
      this.floats = type.isFloatingPoint() ? new double[count] : null;
      this.ints = type.isFloatingPoint() ? null : new long[count];
    }

    /**
     * Compares {@code got} with the reference.
     *
     * @return null when every element matches, otherwise how many differ and the first few
     */
    public String mismatches(ByteBuffer got) {
      double tol = tolerance(type, op, nRanks);
      int wrong = 0;
      StringBuilder first = new StringBuilder();
      for (int i = 0; i < count; i++) {
        String bad = null;
        if (floats != null) {
          double ref = floats[i];
          double g = floatAt(got, i, type);
          boolean ok = tol == 0 ? g == ref : Math.abs(g - ref) <= tol * Math.abs(ref);
          if (!ok) {
            bad = "[" + i + "] expected " + ref + " (rel. tolerance " + tol + ") got " + g;
          }
        } else {
          long ref = ints[i];
          long g = truncate(intAt(got, i, type), type);
          if (g != ref) {
            bad =
                "[" + i + "] expected 0x" + Long.toHexString(ref) + " got 0x" + Long.toHexString(g);
          }
        }
        if (bad != null) {
          if (wrong < 4) {
            first.append(wrong == 0 ? "" : "; ").append(bad);
          }
          wrong++;
        }
      }
      return wrong == 0 ? null : wrong + " of " + count + " elements wrong: " + first;
    }
  }

  /** Reduces every rank's input element by element, independently of the engine. */
  public static Expected allReduce(ByteBuffer[] inputs, int count, DataType t, ReduceOp op) {
    int n = inputs.length;
    Expected e = new Expected(t, op, count, n);
    for (int i = 0; i < count; i++) {
      if (t.isFloatingPoint()) {
        double acc = floatAt(inputs[0], i, t);
        for (int r = 1; r < n; r++) {
          acc = combineDouble(op, acc, floatAt(inputs[r], i, t));
        }
        e.floats[i] = op == ReduceOp.AVG ? acc / n : acc;
      } else {
        long acc = intAt(inputs[0], i, t);
        for (int r = 1; r < n; r++) {
          acc = combineInt(t, op, acc, intAt(inputs[r], i, t));
        }
        e.ints[i] = truncate(acc, t);
      }
    }
    return e;
  }
}
