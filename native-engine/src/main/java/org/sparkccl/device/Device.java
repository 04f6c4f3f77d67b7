package org.sparkccl.device;

import java.util.function.BooleanSupplier;
import org.sparkccl.config.CclConfig;
import org.sparkccl.kernel.ChannelKernel;
import org.sparkccl.kernel.KernelGuard;
import org.sparkccl.kernel.KernelWaiter;

/**
 * Where buffers live and where a communicator's kernels run. Everything that differs between
 * devices is decided here, so that the communicator, proxy and transports never ask which device
 * they serve.
 *
 * <pre>{@code
 * Device device = comm.device();
 * try (DeviceBuffer buf = device.allocate(4 * 1024)) {
 *   comm.allReduce(buf, buf, 1024, DataType.FLOAT32, ReduceOp.SUM);
 * }
 * }</pre>
 */
public interface Device {
  /** A short name for logs and messages, such as {@code host} or {@code cuda:0}. */
  String name();

  /** Allocates {@code bytes} of memory on this device. */
  DeviceBuffer allocate(long bytes);

  /**
   * Makes the kernel side of one channel, with its send and receive FIFOs of {@code
   * FifoLayout.STEPS} slots of {@code stepSize} bytes. For the engine.
   *
   * @param waiter how the channel's kernel thread waits for its FIFOs
   * @param guard what a waiting kernel checks: abort and the deadline
   * @param assist one proxy progress pass, for kernels whose thread lends itself to the proxy
   */
  // The engine's hook for device-specific kernels: its types are internal on purpose, since only
  // the engine calls it.
  @SuppressWarnings("exports")
  ChannelKernel newChannelKernel(
      int stepSize, KernelWaiter waiter, KernelGuard guard, BooleanSupplier assist);

  /**
   * As {@link #newChannelKernel(int, KernelWaiter, KernelGuard, BooleanSupplier)}, for devices
   * whose kernels take settings of {@code config} (the CUDA backend: {@code cuda.residentUs}).
   */
  @SuppressWarnings("exports")
  default ChannelKernel newChannelKernel(
      int stepSize,
      KernelWaiter waiter,
      KernelGuard guard,
      BooleanSupplier assist,
      CclConfig config) {
    return newChannelKernel(stepSize, waiter, guard, assist);
  }
}
