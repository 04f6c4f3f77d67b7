package org.sparkccl.perf;

import static jcuda.driver.JCudaDriver.cuCtxSynchronize;
import static jcuda.driver.JCudaDriver.cuEventCreate;
import static jcuda.driver.JCudaDriver.cuEventElapsedTime;
import static jcuda.driver.JCudaDriver.cuEventRecord;
import static jcuda.driver.JCudaDriver.cuEventSynchronize;
import static jcuda.driver.JCudaDriver.cuLaunchKernel;
import static jcuda.driver.JCudaDriver.cuMemcpyDtoDAsync;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.Locale;
import java.util.SplittableRandom;
import jcuda.Pointer;
import jcuda.driver.CUevent;
import jcuda.driver.CUstream;
import org.sparkccl.DataType;
import org.sparkccl.ReduceOp;
import org.sparkccl.config.Values;
import org.sparkccl.device.cuda.CudaBackend;
import org.sparkccl.device.cuda.CudaBuffer;
import org.sparkccl.device.cuda.CudaDevice;
import org.sparkccl.device.cuda.MappedMemory;
import org.sparkccl.kernel.HalfFloats;

/**
 * The reduce kernel alone against {@code cuMemcpyDtoD} of the same size, on one GPU: {@code out = a
 * + b} over {@code bytes} per buffer, bandwidth counted as bytes read plus written (3x for the
 * reduction, 2x for the copy), median of timed runs with CUDA events, for several launch shapes
 * (the best one counts). The kernel is the channel kernel's own reduction pass over the whole grid.
 * Checks a sample of the sum.
 *
 * <pre>
 * java -cp ... org.sparkccl.perf.CudaReduceBench [bytes, default 1G] [device ordinal]
 * </pre>
 */
public final class CudaReduceBench {
  private static final int RUNS = 20;

  private CudaReduceBench() {}

  public static void main(String[] args) {
    long bytes = args.length > 0 ? Values.bytes("bytes", args[0]) : 1L << 30;
    CudaDevice gpu = CudaBackend.device(args.length > 1 ? Integer.parseInt(args[1]) : 0);
    gpu.makeCurrent();
    System.out.println(
        "# reduce kernel vs cuMemcpyDtoD on " + gpu + ", " + bytes + " bytes per buffer");
    try (CudaBuffer a = gpu.allocate(bytes);
        CudaBuffer b = gpu.allocate(bytes);
        CudaBuffer out = gpu.allocate(bytes);
        MappedMemory host = gpu.allocateMapped(bytes)) {
      for (DataType t : new DataType[] {DataType.FLOAT32, DataType.BFLOAT16}) {
        fill(host.buffer(), t, 1);
        a.copyFromHost(host.buffer().duplicate().order(ByteOrder.nativeOrder()), 0);
        fill(host.buffer(), t, 2);
        b.copyFromHost(host.buffer().duplicate().order(ByteOrder.nativeOrder()), 0);
        double reduce = Double.MAX_VALUE;
        String shape = "";
        for (int threads : new int[] {128, 256, 512}) {
          for (int perSm : new int[] {1, 2, 4, 8, 16}) {
            int blocks = gpu.multiprocessors() * perSm;
            double s = time(() -> launch(gpu, a, b, out, bytes, t, blocks, threads));
            System.out.printf(
                Locale.ROOT,
                "#   %s %d blocks x %d threads: %.1f GB/s%n",
                t,
                blocks,
                threads,
                3.0 * bytes / s / 1e9);
            if (s < reduce) {
              reduce = s;
              shape = blocks + "x" + threads;
            }
          }
        }
        launch(gpu, a, b, out, bytes, t, gpu.multiprocessors(), 512);
        String check = check(a, b, out, t);
        double copy = time(() -> cuMemcpyDtoDAsync(out.pointer(0), a.pointer(0), bytes, null));
        double reduceBw = 3.0 * bytes / reduce / 1e9;
        double copyBw = 2.0 * bytes / copy / 1e9;
        System.out.printf(
            Locale.ROOT,
            "%-9s reduce %8.3f ms %8.1f GB/s (%s)   copy %8.3f ms %8.1f GB/s   ratio %.3f   %s%n",
            t,
            reduce * 1e3,
            reduceBw,
            shape,
            copy * 1e3,
            copyBw,
            reduceBw / copyBw,
            check);
      }
    }
  }

  private static void launch(
      CudaDevice gpu,
      CudaBuffer a,
      CudaBuffer b,
      CudaBuffer out,
      long bytes,
      DataType t,
      int blocks,
      int threads) {
    Pointer params =
        Pointer.to(
            Pointer.to(a.pointer(0)),
            Pointer.to(b.pointer(0)),
            Pointer.to(out.pointer(0)),
            Pointer.to(new long[] {bytes}),
            Pointer.to(new int[] {t.ordinal()}),
            Pointer.to(new int[] {ReduceOp.SUM.ordinal()}));
    cuLaunchKernel(
        gpu.kernels().reduceKernel(), blocks, 1, 1, threads, 1, 1, 0, null, params, null);
  }

  /** Median seconds of {@link #RUNS} runs after two warm-ups, timed with events. */
  private static double time(Runnable work) {
    work.run();
    work.run();
    cuCtxSynchronize();
    CUevent start = new CUevent();
    CUevent stop = new CUevent();
    cuEventCreate(start, 0);
    cuEventCreate(stop, 0);
    double[] ms = new double[RUNS];
    for (int i = 0; i < RUNS; i++) {
      cuEventRecord(start, (CUstream) null);
      work.run();
      cuEventRecord(stop, (CUstream) null);
      cuEventSynchronize(stop);
      float[] f = new float[1];
      cuEventElapsedTime(f, start, stop);
      ms[i] = f[0];
    }
    Arrays.sort(ms);
    return ms[RUNS / 2] / 1e3;
  }

  private static void fill(ByteBuffer host, DataType t, long seed) {
    SplittableRandom rnd = new SplittableRandom(seed);
    int n = host.capacity() / t.size();
    for (int i = 0; i < n; i++) {
      float v = (float) (rnd.nextDouble() * 2 - 1);
      if (t == DataType.FLOAT32) {
        host.putFloat(4 * i, v);
      } else {
        host.putShort(2 * i, HalfFloats.floatToBfloat16(v));
      }
    }
  }

  /** Compares the first 64 Ki elements of {@code out} with {@code a + b} computed here. */
  private static String check(CudaBuffer a, CudaBuffer b, CudaBuffer out, DataType t) {
    int n = 1 << 16;
    int len = n * t.size();
    ByteBuffer[] got = new ByteBuffer[3];
    CudaBuffer[] bufs = {a, b, out};
    for (int k = 0; k < 3; k++) {
      got[k] = ByteBuffer.allocateDirect(len).order(java.nio.ByteOrder.nativeOrder());
      bufs[k].copyToHost(0, got[k]);
    }
    int wrong = 0;
    for (int i = 0; i < n; i++) {
      if (t == DataType.FLOAT32) {
        float want = got[0].getFloat(4 * i) + got[1].getFloat(4 * i);
        wrong += Float.compare(want, got[2].getFloat(4 * i)) != 0 ? 1 : 0;
      } else {
        float x = HalfFloats.bfloat16ToFloat(got[0].getShort(2 * i));
        float y = HalfFloats.bfloat16ToFloat(got[1].getShort(2 * i));
        wrong += HalfFloats.floatToBfloat16(x + y) != got[2].getShort(2 * i) ? 1 : 0;
      }
    }
    return wrong == 0 ? "check ok" : "check FAILED: " + wrong + " of " + n + " wrong";
  }
}
