package org.sparkccl;

import static jcuda.driver.JCudaDriver.cuMemGetInfo;

import java.util.List;
import org.sparkccl.config.CclConfig;
import org.sparkccl.config.Key;
import org.sparkccl.device.cuda.CudaBackend;
import org.sparkccl.device.cuda.CudaDevice;

/**
 * The soak on a GPU ({@code bench/gpu/run.sh DIR soak}): communicators of 2 thread ranks with CUDA
 * kernels on GPU 0, created, used and closed (normal, aborted, timed out), {@code args[0]} of them
 * (default 1,000); the process's threads, file descriptors, off-heap bytes and the GPU memory in
 * use (the driver's {@code cuMemGetInfo}) must come back to where they were. Exits 0 when they do,
 * 1 when not, 2 without a GPU.
 */
public final class GpuSoakMain {
  private GpuSoakMain() {}

  public static void main(String[] args) throws InterruptedException {
    CudaBackend.Status status = CudaBackend.status();
    if (!status.available()) {
      System.out.println("GPU soak: CUDA backend unavailable: " + status.reason());
      System.exit(2);
    }
    int count = args.length > 0 ? Integer.parseInt(args[0]) : 1000;
    CudaDevice gpu = CudaBackend.device(0);
    CclConfig base = CclConfig.fromEnvironment().toBuilder().set(Key.DEVICE, "cuda").build();
    SoakRun.Result r = new SoakRun("GPU soak", base, () -> deviceBytesInUse(gpu)).run(count);
    System.out.println("GPU soak on " + gpu + ": " + r);
    List<String> threads = r.after().newThreads(r.before());
    boolean back = r.after().backTo(r.before());
    System.out.println(
        "GPU soak: "
            + (back ? "everything came back" : "LEFT BEHIND")
            + " (device bytes "
            + (r.after().deviceBytes() - r.before().deviceBytes())
            + ", off-heap bytes "
            + (r.after().offHeapBytes() - r.before().offHeapBytes())
            + ", fds "
            + (r.after().fds() - r.before().fds())
            + ", new threads "
            + threads
            + ")");
    System.exit(back ? 0 : 1);
  }

  /** GPU memory in use on {@code gpu}, by every process: total minus free. */
  private static long deviceBytesInUse(CudaDevice gpu) {
    gpu.makeCurrent();
    long[] free = new long[1];
    long[] total = new long[1];
    cuMemGetInfo(free, total);
    return total[0] - free[0];
  }
}
