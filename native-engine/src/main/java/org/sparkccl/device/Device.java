package org.sparkccl.device;

/** Where buffers live and where a communicator's kernels run. */
public interface Device {
  /** A short name for logs and messages, such as {@code host} or {@code cuda:0}. */
  String name();

  /** Allocates {@code bytes} of memory on this device. */
  DeviceBuffer allocate(long bytes);
}
