import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.SplittableRandom;
import org.sparkccl.DataType;
import org.sparkccl.ReduceOp;
import org.sparkccl.kernel.Reducer;

/**
 * The engine's host reduction of every dtype at one size (256 KiB by default, half a FIFO slot):
 * one sum of a received slice and the input into the output, as a ring's reduce step makes it, and
 * for integer types also a min (the signed and unsigned orders). Prints, per dtype and operator,
 * the median of five rounds: us a call and GB/s of output. Inputs are random values of the type's
 * ordinary range (no NaN, no overflow to infinity), the same for every build.
 *
 * <p>Run: java -cp "perf/target/lib/*" bench/micro/ReduceTypes.java [BYTES] [DTYPE,...]; run it
 * with another build's jars on the class path, in turn, to compare two builds. One JVM compiles the
 * reduction's code once for every dtype it measured before: name one dtype to see it alone.
 */
public class ReduceTypes {
  public static void main(String[] args) {
    int bytes = args.length > 0 ? Integer.parseInt(args[0]) : 256 * 1024;
    int calls = Math.max(100, (int) (400L * 256 * 1024 / bytes));
    java.util.List<String> only = args.length > 1 ? java.util.List.of(args[1].split(",")) : null;
    for (DataType type : DataType.values()) {
      if (only != null && !only.contains(type.wireName())) {
        continue;
      }
      for (ReduceOp op : new ReduceOp[] {ReduceOp.SUM, ReduceOp.MIN}) {
        if (op == ReduceOp.MIN && type.isFloatingPoint()) {
          continue;
        }
        int n = bytes / type.size();
        ByteBuffer a = filled(type, n, 1);
        ByteBuffer b = filled(type, n, 2);
        ByteBuffer o = ByteBuffer.allocateDirect(bytes).order(ByteOrder.nativeOrder());
        double[] us = new double[5];
        for (int round = 0; round < 2 + us.length; round++) {
          long t0 = System.nanoTime();
          for (int i = 0; i < calls; i++) {
            Reducer.reduce(type, op, a, 0, b, 0, o, 0, n);
          }
          if (round >= 2) {
            us[round - 2] = (System.nanoTime() - t0) / 1e3 / calls;
          }
        }
        java.util.Arrays.sort(us);
        double median = us[us.length / 2];
        System.out.printf(
            "%-9s %-4s %d B: %.2f us a call, %.2f GB/s%n",
            type.wireName(), op.name().toLowerCase(java.util.Locale.ROOT), bytes, median,
            bytes / median / 1e3);
      }
    }
  }

  /** n random elements of {@code type}: small integers, or floats in [1, 2) as its bits encode. */
  private static ByteBuffer filled(DataType type, int n, long seed) {
    SplittableRandom rnd = new SplittableRandom(seed);
    ByteBuffer buf = ByteBuffer.allocateDirect(n * type.size()).order(ByteOrder.nativeOrder());
    for (int i = 0; i < n; i++) {
      int at = i * type.size();
      switch (type) {
        case FLOAT32 -> buf.putFloat(at, 1 + rnd.nextFloat());
        case FLOAT64 -> buf.putDouble(at, 1 + rnd.nextDouble());
        // 1.0 to 2.0 in either half format: the exponent of 1, random mantissa bits
        case FLOAT16 -> buf.putShort(at, (short) (0x3c00 | rnd.nextInt(1 << 10)));
        case BFLOAT16 -> buf.putShort(at, (short) (0x3f80 | rnd.nextInt(1 << 7)));
        default -> {
          long v = rnd.nextLong();
          switch (type.size()) {
            case 1 -> buf.put(at, (byte) v);
            case 4 -> buf.putInt(at, (int) v);
            default -> buf.putLong(at, v);
          }
        }
      }
    }
    return buf;
  }
}
