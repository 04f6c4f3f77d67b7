package org.sparkccl.device;

import org.sparkccl.device.cuda.CudaBackend;

/**
 * Turns the {@code device} setting into a {@link Device}: {@code host}, {@code cuda} (ordinal 0),
 * {@code cuda:N} (the Spark executor's GPU address N) or {@code auto} (the first GPU when the
 * CUDA backend is available, the host otherwise).
 */
public final class Devices {
  private Devices() {}

  /**
   * @throws org.sparkccl.device.cuda.CudaUnavailableException when a GPU was asked for and CUDA
   *     cannot be used here, with the reason
   * @throws IllegalArgumentException for a setting of another form
   */
  public static Device resolve(String setting) {
    String s = setting == null ? "host" : setting.trim();
    if (s.equals("host")) {
      return HostDevice.INSTANCE;
    }
    if (s.equals("auto")) {
      return CudaBackend.isAvailable() ? CudaBackend.device(0) : HostDevice.INSTANCE;
    }
    if (s.equals("cuda")) {
      return CudaBackend.device(0);
    }
    if (s.matches("cuda:\\d{1,4}")) {
      return CudaBackend.device(Integer.parseInt(s.substring(5)));
    }
    throw new IllegalArgumentException(
        "device=" + setting + " is invalid; expected host, cuda, cuda:N or auto");
  }
}
