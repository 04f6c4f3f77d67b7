import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;

/**
 * How the size of the on-heap blocks a float32 sum goes through decides its speed on this machine:
 * {@code out = a + b} over direct buffers of BYTES, through blocks of 512 to 8,192 floats (2 to 32
 * KiB an array; the engine's {@code Reducer} uses 1,024), beside element accessors of float views
 * and of the byte buffers, and a bulk copy of the same bytes (the memory's own pace). Prints, per
 * way, the median us of five rounds after two of warm-up. No engine needed.
 *
 * <p>Run: java bench/micro/ReduceBlocks.java [BYTES] (default 262144, a multiple of 4).
 */
public class ReduceBlocks {
  private static final int[] BLOCKS = {512, 1024, 2048, 4096, 8192};

  static void blocks(FloatBuffer a, FloatBuffer b, FloatBuffer o, int n, float[] x, float[] y,
      int block) {
    for (int base = 0; base < n; base += block) {
      int len = Math.min(block, n - base);
      a.get(base, x, 0, len);
      b.get(base, y, 0, len);
      for (int i = 0; i < len; i++) {
        x[i] += y[i];
      }
      o.put(base, x, 0, len);
    }
  }

  static void views(FloatBuffer a, FloatBuffer b, FloatBuffer o, int n) {
    for (int i = 0; i < n; i++) {
      o.put(i, a.get(i) + b.get(i));
    }
  }

  static void bytes(ByteBuffer a, ByteBuffer b, ByteBuffer o, int n) {
    for (int i = 0; i < 4 * n; i += 4) {
      o.putFloat(i, a.getFloat(i) + b.getFloat(i));
    }
  }

  public static void main(String[] args) {
    int bytes = args.length > 0 ? Integer.parseInt(args[0]) : 256 * 1024;
    int n = bytes / 4;
    ByteBuffer a = ByteBuffer.allocateDirect(bytes).order(ByteOrder.nativeOrder());
    ByteBuffer b = ByteBuffer.allocateDirect(bytes).order(ByteOrder.nativeOrder());
    ByteBuffer o = ByteBuffer.allocateDirect(bytes).order(ByteOrder.nativeOrder());
    for (int i = 0; i < n; i++) {
      a.putFloat(4 * i, i * 0.5f);
      b.putFloat(4 * i, i);
    }
    FloatBuffer fa = a.asFloatBuffer();
    FloatBuffer fb = b.asFloatBuffer();
    FloatBuffer fo = o.asFloatBuffer();
    float[] x = new float[BLOCKS[BLOCKS.length - 1]];
    float[] y = new float[x.length];
    int calls = Math.max(50, (int) (400L * 256 * 1024 / bytes));
    String[] names = new String[BLOCKS.length + 3];
    for (int w = 0; w < BLOCKS.length; w++) {
      names[w] = "blocks of " + BLOCKS[w];
    }
    names[BLOCKS.length] = "float views";
    names[BLOCKS.length + 1] = "byte accessors";
    names[BLOCKS.length + 2] = "copy";
    double[][] us = new double[names.length][5];
    for (int round = 0; round < 7; round++) {
      for (int w = 0; w < names.length; w++) {
        long t0 = System.nanoTime();
        for (int c = 0; c < calls; c++) {
          if (w < BLOCKS.length) {
            blocks(fa, fb, fo, n, x, y, BLOCKS[w]);
          } else if (w == BLOCKS.length) {
            views(fa, fb, fo, n);
          } else if (w == BLOCKS.length + 1) {
            bytes(a, b, o, n);
          } else {
            o.put(0, a, 0, bytes);
          }
        }
        if (round >= 2) {
          us[w][round - 2] = (System.nanoTime() - t0) / 1e3 / calls;
        }
      }
    }
    for (int w = 0; w < names.length; w++) {
      java.util.Arrays.sort(us[w]);
      System.out.printf("%d B float32 sum, %-15s %9.2f us%n", bytes, names[w] + ":", us[w][2]);
    }
  }
}
