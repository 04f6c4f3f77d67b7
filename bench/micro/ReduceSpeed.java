import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.sparkccl.DataType;
import org.sparkccl.ReduceOp;
import org.sparkccl.kernel.Reducer;

/**
 * float32 sum of 512 KiB slices (one FIFO slot), or of BYTES, in one run:
 *
 * <ul>
 *   <li>the engine's Reducer (on-heap blocks the JIT vectorises) over direct buffers, one call site,
 *       beside a plain element-accessor loop over the same buffers;
 *   <li>the Reducer as a reduceScatter's halving rounds call it: a received slot and the input into
 *       a heap scratch buffer, then a slot and the scratch into the scratch itself, so that one
 *       method sees direct and heap buffers (as a kernel's does) and the JIT cannot drop the views
 *       it makes.
 * </ul>
 *
 * Each with the time of one call and the bytes the Reducer allocates per call. Run:
 * bench/micro/run.sh (needs the built engine), or java -cp "perf/target/lib/*"
 * bench/micro/ReduceSpeed.java [BYTES] (a multiple of 4).
 */
public class ReduceSpeed {
  /** As a kernel calls it: a slot at 0, the user's buffer at some offset, the output at 0. */
  static void accessors(ByteBuffer a, ByteBuffer b, int bo, ByteBuffer o, int n) {
    for (int i = 0; i < 4 * n; i += 4) {
      o.putFloat(i, a.getFloat(i) + b.getFloat(bo + i));
    }
  }

  /** Two reductions as halving rounds make them: into the scratch, then in place there. */
  static void halving(ByteBuffer slot, ByteBuffer src, int at, ByteBuffer scratch, int n) {
    Reducer.reduce(DataType.FLOAT32, ReduceOp.SUM, slot, 0, src, at, scratch, at, n);
    Reducer.reduce(DataType.FLOAT32, ReduceOp.SUM, slot, 0, scratch, at, scratch, at, n);
  }

  public static void main(String[] args) {
    int n = (args.length > 0 ? Integer.parseInt(args[0]) : 512 * 1024) / 4;
    // about 100 MiB written per pass, so that small slices run long enough to time
    int calls = Math.max(200, (int) (200L * 512 * 1024 / (4L * n)));
    ByteBuffer a = ByteBuffer.allocateDirect(4 * n).order(ByteOrder.nativeOrder());
    int bo = 4 * 12_345;
    ByteBuffer b = ByteBuffer.allocateDirect(4 * n + bo).order(ByteOrder.nativeOrder());
    ByteBuffer o = ByteBuffer.allocateDirect(4 * n).order(ByteOrder.nativeOrder());
    ByteBuffer scratch = ByteBuffer.allocate(4 * n + bo).order(ByteOrder.nativeOrder());
    for (int i = 0; i < n; i++) {
      a.putFloat(4 * i, i * 0.5f);
      b.putFloat(bo + 4 * i, i);
    }
    var threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    for (int round = 0; round < 5; round++) {
      long allocated = threads.getCurrentThreadAllocatedBytes();
      long t0 = System.nanoTime();
      for (int i = 0; i < calls; i++) {
        Reducer.reduce(DataType.FLOAT32, ReduceOp.SUM, a, 0, b, bo, o, 0, n);
      }
      long engineNanos = System.nanoTime() - t0;
      long engineBytes = threads.getCurrentThreadAllocatedBytes() - allocated;
      double engine = (double) calls * 4 * n / engineNanos;
      t0 = System.nanoTime();
      for (int i = 0; i < calls; i++) {
        accessors(a, b, bo, o, n);
      }
      double plain = (double) calls * 4 * n / (System.nanoTime() - t0);
      allocated = threads.getCurrentThreadAllocatedBytes();
      t0 = System.nanoTime();
      for (int i = 0; i < calls / 2; i++) {
        halving(a, b, bo, scratch, n);
      }
      long halvingNanos = System.nanoTime() - t0;
      long halvingBytes = threads.getCurrentThreadAllocatedBytes() - allocated;
      System.out.printf(
          "round %d, %d B: Reducer %.2f GB/s (%.2f us a call, %d bytes allocated a call), element"
              + " accessors %.2f GB/s; as halving rounds %.2f us a call, %d bytes allocated a call%n",
          round,
          4 * n,
          engine,
          engineNanos / 1e3 / calls,
          engineBytes / calls,
          plain,
          halvingNanos / 1e3 / (calls / 2 * 2),
          halvingBytes / (calls / 2 * 2));
    }
  }
}
