package org.sparkccl.device.cuda;

import static jcuda.driver.JCudaDriver.cuDeviceGetCount;
import static jcuda.driver.JCudaDriver.cuDriverGetVersion;
import static jcuda.driver.JCudaDriver.cuInit;

import java.util.concurrent.ConcurrentHashMap;
import jcuda.CudaException;
import jcuda.driver.JCudaDriver;
import org.apache.logging.log4j.Logger;
import org.sparkccl.util.EngineLog;

/**
 * Whether this JVM can use CUDA, decided once: JCuda's natives load, the driver initialises and
 * there is at least one device. Without a driver the first JCuda call throws {@code
 * UnsatisfiedLinkError} and later ones {@code NoClassDefFoundError}, so the answer is remembered
 * and the reason logged once.
 */
public final class CudaBackend {
  private static final Logger LOG = EngineLog.logger(CudaBackend.class);
  private static final ConcurrentHashMap<Integer, CudaDevice> DEVICES = new ConcurrentHashMap<>();
  private static volatile Status status;

  /** The answer: available with a device count and driver version, or not, with the reason. */
  public record Status(boolean available, String reason, int deviceCount, int driverVersion) {}

  private CudaBackend() {}

  /** Probes CUDA on first call; later calls return the same answer. */
  public static Status status() {
    Status s = status;
    if (s == null) {
      synchronized (CudaBackend.class) {
        s = status;
        if (s == null) {
          s = probe();
          status = s;
          if (s.available()) {
            LOG.info("CUDA backend: {} device(s), driver {}", s.deviceCount(), s.driverVersion());
          } else {
            LOG.info("CUDA backend unavailable: {}", s.reason());
          }
        }
      }
    }
    return s;
  }

  public static boolean isAvailable() {
    return status().available();
  }

  /**
   * The device of CUDA ordinal {@code ordinal} (the Spark executor's GPU address), one object per
   * ordinal for the JVM.
   *
   * @throws CudaUnavailableException when CUDA cannot be used here, with the reason
   * @throws IllegalArgumentException when there is no such device
   */
  public static CudaDevice device(int ordinal) {
    Status s = status();
    if (!s.available()) {
      throw new CudaUnavailableException(s.reason());
    }
    if (ordinal < 0 || ordinal >= s.deviceCount()) {
      throw new IllegalArgumentException(
          "cuda device " + ordinal + " does not exist; expected 0.." + (s.deviceCount() - 1));
    }
    return DEVICES.computeIfAbsent(ordinal, CudaDevice::open);
  }

  /**
   * The device of this process with PCI bus id {@code busId}.
   *
   * @throws IllegalArgumentException when this process sees no such GPU
   */
  static CudaDevice deviceByBusId(String busId) {
    for (int i = 0; i < status().deviceCount(); i++) {
      CudaDevice d = device(i);
      if (d.pciBusId().equals(busId)) {
        return d;
      }
    }
    throw new IllegalArgumentException("no GPU with PCI bus id " + busId + " in this process");
  }

  /**
   * JCuda's message holds two nested stack traces; the last linker error names what is missing
   * ({@code libcuda.so.1: cannot open shared object file}).
   */
  static String rootCause(String message) {
    if (message == null) {
      return "the JCuda driver library did not load";
    }
    String marker = "UnsatisfiedLinkError: ";
    int at = message.lastIndexOf(marker);
    String s = at >= 0 ? message.substring(at + marker.length()) : message;
    int nl = s.indexOf('\n');
    return nl >= 0 ? s.substring(0, nl).trim() : s.trim();
  }

  private static Status probe() {
    try {
      JCudaDriver.setExceptionsEnabled(true);
      cuInit(0);
      int[] count = new int[1];
      cuDeviceGetCount(count);
      int[] version = new int[1];
      cuDriverGetVersion(version);
      if (count[0] == 0) {
        return new Status(false, "the CUDA driver reports no device", 0, version[0]);
      }
      return new Status(true, null, count[0], version[0]);
    } catch (LinkageError e) {
      return new Status(false, "no CUDA driver: " + rootCause(e.getMessage()), 0, 0);
    } catch (CudaException e) {
      return new Status(false, "cuInit failed: " + e.getMessage(), 0, 0);
    }
  }
}
