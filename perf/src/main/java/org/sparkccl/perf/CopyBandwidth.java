package org.sparkccl.perf;

import java.nio.ByteOrder;
import java.util.Locale;
import org.sparkccl.device.cuda.CudaBuffer;
import org.sparkccl.device.cuda.CudaDevice;
import org.sparkccl.device.cuda.MappedMemory;

/**
 * Pinned host-to-device and device-to-host copy bandwidth, measured in the perf run itself: the
 * bound of the host-staged path, where every byte a GPU rank sends or receives crosses the link
 * through its FIFOs in host memory.
 */
final class CopyBandwidth {
  private static final int ITERATIONS = 10;

  private CopyBandwidth() {}

  /** Measures and prints one comment line; {@code bytes} capped at 1 GiB. */
  static void print(CudaDevice gpu, long bytes) {
    long size = Math.max(1 << 20, Math.min(bytes, 1L << 30));
    try (MappedMemory host = gpu.allocateMapped(size);
        CudaBuffer dev = gpu.allocate(size)) {
      double h2d =
          measure(
              () -> dev.copyFromHost(host.buffer().duplicate().order(ByteOrder.nativeOrder()), 0),
              size);
      double d2h =
          measure(
              () -> dev.copyToHost(0, host.buffer().duplicate().order(ByteOrder.nativeOrder())),
              size);
      System.out.printf(
          Locale.ROOT,
          "# pinned copy bandwidth, %d bytes: H2D %.1f GB/s, D2H %.1f GB/s (bound of the"
              + " host-staged path: min %.1f GB/s)%n",
          size,
          h2d,
          d2h,
          Math.min(h2d, d2h));
    }
  }

  private static double measure(Runnable copy, long size) {
    copy.run();
    long t0 = System.nanoTime();
    for (int i = 0; i < ITERATIONS; i++) {
      copy.run();
    }
    double seconds = (System.nanoTime() - t0) / 1e9;
    return size * (double) ITERATIONS / seconds / 1e9;
  }
}
