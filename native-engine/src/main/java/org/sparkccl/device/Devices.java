package org.sparkccl.device;

import org.sparkccl.device.cuda.CudaBackend;

/** Turns a {@link DeviceSpec} (the {@code device} setting) into a {@link Device}. */
public final class Devices {
  private Devices() {}

  /**
   * The device {@code spec} names: the host, or a GPU through the CUDA backend.
   *
   * @throws org.sparkccl.device.cuda.CudaUnavailableException when a GPU was asked for and CUDA
   *     cannot be used here, with the reason
   */
  public static Device resolve(DeviceSpec spec) {
    return switch (spec.kind()) {
      case AUTO -> CudaBackend.isAvailable() ? CudaBackend.device(0) : HostDevice.INSTANCE;
      case CUDA -> CudaBackend.device(spec.ordinal());
      case HOST -> HostDevice.INSTANCE;
    };
  }
}
