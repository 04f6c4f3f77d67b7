import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.sparkccl.DataType;
import org.sparkccl.ReduceOp;
import org.sparkccl.kernel.Reducer;

/**
 * float32 sum of 512 KiB slices (one FIFO slot), or of BYTES: the engine's Reducer (on-heap blocks
 * the JIT vectorises) beside a plain element-accessor loop over the same direct buffers, in one
 * run, with the time of one call. Run: bench/micro/run.sh (needs the built engine), or java -cp
 * "perf/target/lib/*" bench/micro/ReduceSpeed.java [BYTES] (a multiple of 4).
 */
public class ReduceSpeed {
  /** As a kernel calls it: a slot at 0, the user's buffer at some offset, the output at 0. */
  static void accessors(ByteBuffer a, ByteBuffer b, int bo, ByteBuffer o, int n) {
    for (int i = 0; i < 4 * n; i += 4) {
      o.putFloat(i, a.getFloat(i) + b.getFloat(bo + i));
    }
  }

  public static void main(String[] args) {
    int n = (args.length > 0 ? Integer.parseInt(args[0]) : 512 * 1024) / 4;
    // about 100 MiB written per pass, so that small slices run long enough to time
    int calls = Math.max(200, (int) (200L * 512 * 1024 / (4L * n)));
    ByteBuffer a = ByteBuffer.allocateDirect(4 * n).order(ByteOrder.nativeOrder());
    int bo = 4 * 12_345;
    ByteBuffer b = ByteBuffer.allocateDirect(4 * n + bo).order(ByteOrder.nativeOrder());
    ByteBuffer o = ByteBuffer.allocateDirect(4 * n).order(ByteOrder.nativeOrder());
    for (int round = 0; round < 5; round++) {
      long t0 = System.nanoTime();
      for (int i = 0; i < calls; i++) Reducer.reduce(DataType.FLOAT32, ReduceOp.SUM, a, 0, b, bo, o, 0, n);
      long engineNanos = System.nanoTime() - t0;
      double engine = (double) calls * 4 * n / engineNanos;
      t0 = System.nanoTime();
      for (int i = 0; i < calls; i++) accessors(a, b, bo, o, n);
      double plain = (double) calls * 4 * n / (System.nanoTime() - t0);
      System.out.printf(
          "round %d, %d B: Reducer %.2f GB/s (%.2f us a call), element accessors %.2f GB/s (bytes written)%n",
          round, 4 * n, engine, engineNanos / 1e3 / calls, plain);
    }
  }
}
