package org.sparkccl.device;

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

  @Override
  public String toString() {
    return name();
  }
}
