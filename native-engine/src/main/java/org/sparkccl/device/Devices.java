package org.sparkccl.device;

import org.sparkccl.device.cuda.CudaBackend;

/** Turns a {@link DeviceSpec} (the {@code device} setting) into a {@link Device}. */
public final class Devices {
  private Devices() {}

  /**
   * @throws org.sparkccl.device.cuda.CudaUnavailableException when a GPU was asked for and CUDA
   *     cannot be used here, with the reason
   */
  public static Device resolve(DeviceSpec spec) {
    switch (spec.kind()) {
      case AUTO:
        return CudaBackend.isAvailable() ? CudaBackend.device(0) : HostDevice.INSTANCE;
      case CUDA:
        return CudaBackend.device(spec.ordinal());
      default:
        return HostDevice.INSTANCE;
    }
  }
}
