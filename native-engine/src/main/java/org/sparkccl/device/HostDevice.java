package org.sparkccl.device;

import java.util.function.BooleanSupplier;
import org.sparkccl.fifo.Fifo;
import org.sparkccl.kernel.ChannelKernel;
import org.sparkccl.kernel.HostChannelKernel;
import org.sparkccl.kernel.KernelGuard;
import org.sparkccl.kernel.KernelWaiter;

/** Off-heap host memory; its kernels run on Java threads. */
public final class HostDevice implements Device {
  public static final HostDevice INSTANCE = new HostDevice();

  private HostDevice() {}

  @Override
  public String name() {
    return "host";
  }

  @Override
  public HostBuffer allocate(long bytes) {
    return new HostBuffer(bytes);
  }

  /** A Java kernel on the channel's kernel thread, over FIFOs in off-heap memory. */
  @Override
  @SuppressWarnings("exports") // see Device.newChannelKernel
  public ChannelKernel newChannelKernel(
      int stepSize, KernelWaiter waiter, KernelGuard guard, BooleanSupplier assist) {
    return new HostChannelKernel(new Fifo(stepSize), new Fifo(stepSize), waiter, guard);
  }

  @Override
  public String toString() {
    return name();
  }
}
