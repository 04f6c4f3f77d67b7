import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;
import java.nio.IntBuffer;
import java.util.Random;

/**
 * What making NaNs canonical after a recursive-doubling reduction costs (every NaN rewritten as the
 * canonical one, so ranks agree bit for bit), on one 32 KiB slice (8,192 floats, no NaN: the common
 * case):
 * <ul>
 *   <li>"element pass": a getInt/putInt loop over the result, the engine's way until
 *       kernel.Reducer#reduceCanonical;
 *   <li>"bulk scan": a bulk copy into an int[] block and a branch-free integer scan, rewriting only
 *       blocks that hold a NaN;
 *   <li>"sum alone" (the floor), "sum + pass" (the sum in on-heap blocks as kernel.Reducer does,
 *       then the element pass), "fused !=" (a NaN test of each element in the sum's block loop),
 *       "fused max" (the largest magnitude of each block, NaN or infinite only where the block
 *       holds a NaN or an infinity; fast on the 2-core VM, slower than "sum + pass" on the 16-core
 *       host, where C2 did not vectorise it) and "sum + scan" (the bulk scan of each block
 *       right after the sum wrote it: what kernel.Reducer#reduceCanonical does).
 * </ul>
 * Run: java bench/micro/NanPassCost.java [floats]
 */
public class NanPassCost {
  private static final int BLOCK = 4096; // kernel.Reducer's block
  private static final int[] INTS = new int[BLOCK];
  private static final float[] X = new float[BLOCK];
  private static final float[] Y = new float[BLOCK];
  private static final int CANONICAL = 0x7fc00000;

  static void elementPass(ByteBuffer buf, int count) {
    for (int i = 0, p = 0; i < count; i++, p += 4) {
      if ((buf.getInt(p) & 0x7fffffff) > 0x7f800000) {
        buf.putInt(p, CANONICAL);
      }
    }
  }

  static void bulkScan(ByteBuffer buf, int count) {
    IntBuffer ints = buf.slice(0, 4 * count).order(ByteOrder.nativeOrder()).asIntBuffer();
    for (int base = 0; base < count; base += BLOCK) {
      int len = Math.min(BLOCK, count - base);
      ints.get(base, INTS, 0, len);
      int nan = 0;
      for (int i = 0; i < len; i++) {
        nan |= 0x7f800000 - (INTS[i] & 0x7fffffff); // negative exactly where a NaN is
      }
      if (nan < 0) {
        for (int i = 0; i < len; i++) {
          if ((INTS[i] & 0x7fffffff) > 0x7f800000) {
            ints.put(base + i, CANONICAL);
          }
        }
      }
    }
  }

  /** The sum in blocks; {@code check} 0: no NaN check, 1: fused !=, 2: fused max, 3: scan. */
  static void sum(ByteBuffer a, ByteBuffer b, ByteBuffer o, int n, int check) {
    FloatBuffer fa = a.slice(0, 4 * n).order(ByteOrder.nativeOrder()).asFloatBuffer();
    FloatBuffer fb = b.slice(0, 4 * n).order(ByteOrder.nativeOrder()).asFloatBuffer();
    FloatBuffer fo = o.slice(0, 4 * n).order(ByteOrder.nativeOrder()).asFloatBuffer();
    for (int base = 0; base < n; base += BLOCK) {
      int len = Math.min(BLOCK, n - base);
      fa.get(base, X, 0, len);
      fb.get(base, Y, 0, len);
      for (int i = 0; i < len; i++) {
        X[i] += Y[i];
      }
      boolean nan = false;
      if (check == 1) {
        for (int i = 0; i < len; i++) {
          nan |= X[i] != X[i];
        }
      } else if (check == 2) {
        float largest = 0;
        for (int i = 0; i < len; i++) {
          largest = Math.max(largest, Math.abs(X[i]));
        }
        nan = !(largest < Float.POSITIVE_INFINITY);
      }
      if (nan) {
        for (int i = 0; i < len; i++) {
          if (X[i] != X[i]) {
            X[i] = Float.intBitsToFloat(CANONICAL);
          }
        }
      }
      fo.put(base, X, 0, len);
      if (check == 3) {
        scanBlock(o.slice(4 * base, 4 * len).order(ByteOrder.nativeOrder()), len);
      }
    }
  }

  /** The bulk scan of one block (as kernel.NanBits does after each block of a reduction). */
  static void scanBlock(ByteBuffer block, int len) {
    block.asIntBuffer().get(0, INTS, 0, len);
    int nan = 0;
    for (int i = 0; i < len; i++) {
      nan |= 0x7f800000 - (INTS[i] & 0x7fffffff);
    }
    if (nan < 0) {
      elementPass(block, len);
    }
  }

  private static ByteBuffer randomFloats(int n, Random random) {
    ByteBuffer b = ByteBuffer.allocateDirect(4 * n).order(ByteOrder.nativeOrder());
    for (int i = 0; i < n; i++) {
      b.putFloat(4 * i, 1 + random.nextFloat());
    }
    return b;
  }

  private static double usPerCall(Runnable r, int calls) {
    long t0 = System.nanoTime();
    for (int k = 0; k < calls; k++) {
      r.run();
    }
    return (System.nanoTime() - t0) / 1e3 / calls;
  }

  public static void main(String[] args) {
    int n = args.length > 0 ? Integer.parseInt(args[0]) : 8192;
    Random random = new Random(7);
    ByteBuffer a = randomFloats(n, random);
    ByteBuffer b = randomFloats(n, random);
    ByteBuffer o = ByteBuffer.allocateDirect(4 * n).order(ByteOrder.nativeOrder());
    int calls = 20_000;
    for (int round = 1; round <= 5; round++) {
      double element = usPerCall(() -> elementPass(a, n), calls);
      double bulk = usPerCall(() -> bulkScan(a, n), calls);
      double alone = usPerCall(() -> sum(a, b, o, n, 0), calls);
      double separate =
          usPerCall(
              () -> {
                sum(a, b, o, n, 0);
                elementPass(o, n);
              },
              calls);
      double fusedTest = usPerCall(() -> sum(a, b, o, n, 1), calls);
      double fusedMax = usPerCall(() -> sum(a, b, o, n, 2), calls);
      double scanned = usPerCall(() -> sum(a, b, o, n, 3), calls);
      System.out.printf(
          "round %d, %d floats, us a call: element pass %.2f, bulk scan %.2f; sum alone %.2f,"
              + " sum + pass %.2f, fused != %.2f, fused max %.2f, sum + scan %.2f%n",
          round, n, element, bulk, alone, separate, fusedTest, fusedMax, scanned);
    }
  }
}
