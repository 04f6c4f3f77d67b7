package org.sparkccl.spark;

import java.util.Locale;
import org.sparkccl.device.Device;
import org.sparkccl.device.HostDevice;

/**
 * Which device an executor's (or a task's) collectives use, and why: the {@code gpu} resource
 * address Spark assigned, when there is one and a GPU backend can open it, else host memory.
 *
 * <p>{@code spark.ccl.device}: {@code auto} [default] takes the GPU when it can and says why not
 * otherwise; {@code host} always uses host memory; {@code cuda} insists on the GPU and fails with
 * the reason when there is none.
 */
public record DeviceChoice(Device device, String reason) {
  public static final String AUTO = "auto";
  public static final String HOST = "host";
  public static final String CUDA = "cuda";

  /** Opens the device of one GPU ordinal, or explains why it cannot. */
  public interface GpuBackend {
    /** The device for GPU {@code ordinal}; throws with the reason when it cannot be used. */
    Device open(int ordinal);
  }

  /** A backend that has no GPU to give, for builds and tests without one. */
  public static final GpuBackend NO_GPU_BACKEND =
      ordinal -> {
        throw new IllegalStateException(
            "no CUDA backend here, so GPU " + ordinal + " cannot be used");
      };

  /**
   * Chooses the device for {@code mode} given the {@code gpu} addresses Spark assigned (empty or
   * {@code null} when none).
   *
   * @throws IllegalArgumentException for an unknown mode, or for {@code cuda} without a usable GPU
   */
  public static DeviceChoice choose(String mode, String[] gpuAddresses, GpuBackend backend) {
    String m = mode(mode);
    if (m.equals(HOST)) {
      return new DeviceChoice(HostDevice.INSTANCE, "spark.ccl.device=host");
    }
    if (gpuAddresses == null || gpuAddresses.length == 0) {
      if (m.equals(CUDA)) {
        throw new IllegalArgumentException(
            "spark.ccl.device=cuda but Spark assigned this executor no gpu resource; set"
                + " spark.executor.resource.gpu.amount and spark.task.resource.gpu.amount (and a"
                + " discovery script)");
      }
      return new DeviceChoice(HostDevice.INSTANCE, "no gpu resource assigned");
    }
    int ordinal = parseOrdinal(gpuAddresses[0]);
    try {
      return new DeviceChoice(backend.open(ordinal), "gpu resource address " + gpuAddresses[0]);
    } catch (RuntimeException | LinkageError e) {
      if (m.equals(CUDA)) {
        throw new IllegalArgumentException(
            "spark.ccl.device=cuda but GPU "
                + gpuAddresses[0]
                + " cannot be used: "
                + e.getMessage(),
            e);
      }
      return new DeviceChoice(
          HostDevice.INSTANCE, "gpu " + gpuAddresses[0] + " not usable (" + e.getMessage() + ")");
    }
  }

  /**
   * The mode {@code text} names, in lower case ({@code null} is {@code auto}).
   *
   * @throws IllegalArgumentException when it names none
   */
  public static String mode(String text) {
    String m = text == null ? AUTO : text.trim().toLowerCase(Locale.ROOT);
    if (!m.equals(AUTO) && !m.equals(HOST) && !m.equals(CUDA)) {
      throw new IllegalArgumentException(
          SparkConfKeys.DEVICE
              + "="
              + text
              + " is not a device mode; expected auto, host or cuda"
              + " (in Spark the GPU ordinal comes from the task's gpu resource)");
    }
    return m;
  }

  private static int parseOrdinal(String address) {
    try {
      return Integer.parseInt(address.trim());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(
          "gpu resource address '"
              + address
              + "' is not a device ordinal; the discovery script"
              + " should list CUDA ordinals such as 0, 1");
    }
  }
}
