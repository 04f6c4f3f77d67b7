import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.sparkccl.DataType;
import org.sparkccl.ReduceOp;
import org.sparkccl.kernel.Reducer;

/**
 * float32 sum of 512 KiB slices (one FIFO slot), or of BYTES, in one run (float64 where the second
 * argument says so):
 *
 * <ul>
 *   <li>the engine's Reducer (on-heap blocks the JIT vectorises) over direct buffers, one call site,
 *       beside a plain element-accessor loop over the same buffers;
 *   <li>the Reducer as a reduceScatter's halving rounds call it: a received slot and the input into
 *       a heap scratch buffer, then a slot and the scratch into the scratch itself, so that one
 *       method sees direct and heap buffers (as a kernel's does) and the JIT cannot drop the views
 *       it makes;
 *   <li>avg's last step: the sum into the output, then {@code Reducer.divide} there.
 * </ul>
 *
 * Each with the time of one call and the bytes the Reducer allocates per call. Run:
 * bench/micro/run.sh (needs the built engine), or java -cp "perf/target/lib/*"
 * bench/micro/ReduceSpeed.java [BYTES] [float32|float64] (BYTES a multiple of the element's size).
 */
public class ReduceSpeed {
  /** As a kernel calls it: a slot at 0, the user's buffer at some offset, the output at 0. */
  static void accessors(ByteBuffer a, ByteBuffer b, int bo, ByteBuffer o, int n) {
    for (int i = 0; i < 4 * n; i += 4) {
      o.putFloat(i, a.getFloat(i) + b.getFloat(bo + i));
    }
  }

  static void doubleAccessors(ByteBuffer a, ByteBuffer b, int bo, ByteBuffer o, int n) {
    for (int i = 0; i < 8 * n; i += 8) {
      o.putDouble(i, a.getDouble(i) + b.getDouble(bo + i));
    }
  }

  /** Two reductions as halving rounds make them: into the scratch, then in place there. */
  static void halving(DataType type, ByteBuffer slot, ByteBuffer src, int at, ByteBuffer scratch, int n) {
    Reducer.reduce(type, ReduceOp.SUM, slot, 0, src, at, scratch, at, n);
    Reducer.reduce(type, ReduceOp.SUM, slot, 0, scratch, at, scratch, at, n);
  }

  public static void main(String[] args) {
    DataType type = args.length > 1 ? DataType.fromName(args[1]) : DataType.FLOAT32;
    if (type != DataType.FLOAT32 && type != DataType.FLOAT64) {
      throw new IllegalArgumentException("dtype " + args[1] + ": expected float32 or float64");
    }
    int size = type.size();
    int bytes = args.length > 0 ? Integer.parseInt(args[0]) : 512 * 1024;
    int n = bytes / size;
    // about 100 MiB written per pass, so that small slices run long enough to time
    int calls = Math.max(200, (int) (200L * 512 * 1024 / bytes));
    ByteBuffer a = ByteBuffer.allocateDirect(bytes).order(ByteOrder.nativeOrder());
    int bo = 8 * 12_345;
    ByteBuffer b = ByteBuffer.allocateDirect(bytes + bo).order(ByteOrder.nativeOrder());
    ByteBuffer o = ByteBuffer.allocateDirect(bytes).order(ByteOrder.nativeOrder());
    ByteBuffer scratch = ByteBuffer.allocate(bytes + bo).order(ByteOrder.nativeOrder());
    for (int i = 0; i < n; i++) {
      if (size == 4) {
        a.putFloat(4 * i, i * 0.5f);
        b.putFloat(bo + 4 * i, i);
      } else {
        a.putDouble(8 * i, i * 0.5);
        b.putDouble(bo + 8 * i, i);
      }
    }
    var threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    for (int round = 0; round < 5; round++) {
      long allocated = threads.getCurrentThreadAllocatedBytes();
      long t0 = System.nanoTime();
      for (int i = 0; i < calls; i++) {
        Reducer.reduce(type, ReduceOp.SUM, a, 0, b, bo, o, 0, n);
      }
      long engineNanos = System.nanoTime() - t0;
      long engineBytes = threads.getCurrentThreadAllocatedBytes() - allocated;
      double engine = (double) calls * bytes / engineNanos;
      t0 = System.nanoTime();
      for (int i = 0; i < calls; i++) {
        if (size == 4) {
          accessors(a, b, bo, o, n);
        } else {
          doubleAccessors(a, b, bo, o, n);
        }
      }
      double plain = (double) calls * bytes / (System.nanoTime() - t0);
      allocated = threads.getCurrentThreadAllocatedBytes();
      t0 = System.nanoTime();
      for (int i = 0; i < calls / 2; i++) {
        halving(type, a, b, bo, scratch, n);
      }
      long halvingNanos = System.nanoTime() - t0;
      // avg's last step as a kernel makes it: the sum into the output, then the division there
      t0 = System.nanoTime();
      for (int i = 0; i < calls; i++) {
        Reducer.reduce(type, ReduceOp.SUM, a, 0, b, bo, o, 0, n);
        Reducer.divide(type, o, 0, n, 8);
      }
      long avgNanos = System.nanoTime() - t0;
      long halvingBytes = threads.getCurrentThreadAllocatedBytes() - allocated;
      System.out.printf(
          "round %d, %d B %s: Reducer %.2f GB/s (%.2f us a call, %d bytes allocated a call),"
              + " element accessors %.2f GB/s; as halving rounds %.2f us a call, %d bytes"
              + " allocated a call; sum then divide (avg's last step) %.2f us a call%n",
          round,
          bytes,
          type.name().toLowerCase(java.util.Locale.ROOT),
          engine,
          engineNanos / 1e3 / calls,
          engineBytes / calls,
          plain,
          halvingNanos / 1e3 / (calls / 2 * 2),
          halvingBytes / (calls / 2 * 2),
          avgNanos / 1e3 / calls);
    }
  }
}
