package org.sparkccl.perf;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.SplittableRandom;
import org.sparkccl.DataType;
import org.sparkccl.ReduceOp;
import org.sparkccl.kernel.HalfFloats;

/**
 * Random inputs and an independent reference for checking collectives.
 *
 * <p>Every rank's input is a pure function of {@code (seed, rank)}, so any rank can rebuild all
 * inputs and compute the expected result itself. Floating-point inputs are in [0.5, 1.5) (never
 * zero, no cancellation) and the reference is computed in double precision; integers use all their
 * bits and the reference wraps exactly as the type does.
 */
public final class TestData {
  private TestData() {}

  /** Fills {@code count} elements of {@code out} (from 0) with rank {@code rank}'s input. */
  public static void fill(ByteBuffer out, long count, DataType type, long seed, int rank) {
    SplittableRandom rnd = new SplittableRandom(seed * 0x9E3779B97F4A7C15L + rank * 7919L + 1);
    for (int i = 0; i < count; i++) {
      int at = i * type.size();
      switch (type) {
        case INT8, UINT8 -> out.put(at, (byte) nonZero(rnd));
        case INT32, UINT32 -> out.putInt(at, (int) nonZero(rnd));
        case INT64, UINT64 -> out.putLong(at, nonZero(rnd));
        case FLOAT16 -> out.putShort(at, HalfFloats.floatToHalf(value(rnd)));
        case BFLOAT16 -> out.putShort(at, HalfFloats.floatToBfloat16(value(rnd)));
        case FLOAT32 -> out.putFloat(at, value(rnd));
        case FLOAT64 -> out.putDouble(at, 0.5 + rnd.nextDouble());
      }
    }
  }

  private static float value(SplittableRandom rnd) {
    return (float) (0.5 + rnd.nextDouble());
  }

  private static long nonZero(SplittableRandom rnd) {
    long v = rnd.nextLong();
    return (v & 0xff) == 0 ? v | 1 : v;
  }

  /** Element {@code i} of a buffer as a double (floating-point types only). */
  public static double asDouble(ByteBuffer b, int i, DataType type) {
    int at = i * type.size();
    return switch (type) {
      case FLOAT16 -> HalfFloats.halfToFloat(b.getShort(at));
      case BFLOAT16 -> HalfFloats.bfloat16ToFloat(b.getShort(at));
      case FLOAT32 -> b.getFloat(at);
      case FLOAT64 -> b.getDouble(at);
      default -> throw new IllegalArgumentException("not a floating-point type: " + type);
    };
  }

  /** Element {@code i} as a long, sign- or zero-extended by the type (integer types only). */
  public static long asLong(ByteBuffer b, int i, DataType type) {
    int at = i * type.size();
    return switch (type) {
      case INT8 -> b.get(at);
      case UINT8 -> b.get(at) & 0xffL;
      case INT32 -> b.getInt(at);
      case UINT32 -> b.getInt(at) & 0xffffffffL;
      case INT64, UINT64 -> b.getLong(at);
      default -> throw new IllegalArgumentException("not an integer type: " + type);
    };
  }

  /** Relative tolerance for a floating-point result reduced over {@code nRanks} inputs. */
  public static double tolerance(DataType type, ReduceOp op, int nRanks) {
    if (op == ReduceOp.MIN || op == ReduceOp.MAX) {
      return 0;
    }
    double eps =
        switch (type) {
          case FLOAT16 -> 0x1p-10;
          case BFLOAT16 -> 0x1p-7;
          case FLOAT32 -> 0x1p-23;
          default -> 0x1p-52;
        };
    return 2 * (nRanks + 1) * eps;
  }

  /**
   * Counts elements of {@code result} that differ from the reduction of every rank's input.
   *
   * @param inputs every rank's input, indexed by rank
   */
  public static long countWrong(
      ByteBuffer result, ByteBuffer[] inputs, long count, DataType type, ReduceOp op) {
    int n = inputs.length;
    long wrong = 0;
    double tol = type.isFloatingPoint() ? tolerance(type, op, n) : 0;
    for (int i = 0; i < count; i++) {
      if (type.isFloatingPoint()) {
        double ref = asDouble(inputs[0], i, type);
        for (int r = 1; r < n; r++) {
          double v = asDouble(inputs[r], i, type);
          ref =
              switch (op) {
                case SUM, AVG -> ref + v;
                case PROD -> ref * v;
                case MIN -> Math.min(ref, v);
                case MAX -> Math.max(ref, v);
              };
        }
        if (op == ReduceOp.AVG) {
          ref /= n;
        }
        double got = asDouble(result, i, type);
        if (!(Math.abs(got - ref) <= tol * Math.abs(ref))) {
          wrong++;
        }
      } else {
        long ref = asLong(inputs[0], i, type);
        for (int r = 1; r < n; r++) {
          ref = combine(type, op, ref, asLong(inputs[r], i, type));
        }
        if (truncate(type, ref) != truncate(type, asLong(result, i, type))) {
          wrong++;
        }
      }
    }
    return wrong;
  }

  /** Elements of {@code a} (from byte {@code ao}) that differ bit for bit from {@code b}'s. */
  public static long countDifferent(
      ByteBuffer a, int ao, ByteBuffer b, int bo, long count, DataType type) {
    long wrong = 0;
    int size = type.size();
    for (int i = 0; i < count; i++) {
      for (int k = 0; k < size; k++) {
        if (a.get(ao + i * size + k) != b.get(bo + i * size + k)) {
          wrong++;
          break;
        }
      }
    }
    return wrong;
  }

  private static long combine(DataType type, ReduceOp op, long a, long b) {
    return switch (op) {
      case SUM, AVG -> a + b;
      case PROD -> a * b;
      case MIN ->
          type == DataType.UINT64 ? (Long.compareUnsigned(a, b) <= 0 ? a : b) : Math.min(a, b);
      case MAX ->
          type == DataType.UINT64 ? (Long.compareUnsigned(a, b) >= 0 ? a : b) : Math.max(a, b);
    };
  }

  private static long truncate(DataType type, long v) {
    return switch (type.size()) {
      case 1 -> v & 0xffL;
      case 4 -> v & 0xffffffffL;
      default -> v;
    };
  }

  /** A native-order heap-free scratch buffer for references. */
  public static ByteBuffer scratch(long bytes) {
    return ByteBuffer.allocateDirect((int) bytes).order(ByteOrder.nativeOrder());
  }
}
