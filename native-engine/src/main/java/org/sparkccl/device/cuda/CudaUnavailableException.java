package org.sparkccl.device.cuda;

/** The CUDA backend was asked for where it cannot run; the message says why. */
public final class CudaUnavailableException extends IllegalStateException {
  public CudaUnavailableException(String reason) {
    super("CUDA backend unavailable: " + reason);
  }
}
