package org.sparkccl.device.cuda;

import static jcuda.driver.JCudaDriver.cuCtxEnablePeerAccess;
import static jcuda.driver.JCudaDriver.cuCtxSetCurrent;
import static jcuda.driver.JCudaDriver.cuDeviceCanAccessPeer;
import static jcuda.driver.JCudaDriver.cuDeviceGet;
import static jcuda.driver.JCudaDriver.cuDeviceGetAttribute;
import static jcuda.driver.JCudaDriver.cuDeviceGetByPCIBusId;
import static jcuda.driver.JCudaDriver.cuDeviceGetName;
import static jcuda.driver.JCudaDriver.cuDeviceGetPCIBusId;
import static jcuda.driver.JCudaDriver.cuDevicePrimaryCtxRetain;

import java.nio.charset.StandardCharsets;
import java.util.function.BooleanSupplier;
import jcuda.CudaException;
import jcuda.driver.CUcontext;
import jcuda.driver.CUdevice;
import jcuda.driver.CUdevice_attribute;
import jcuda.driver.CUresult;
import org.sparkccl.config.CclConfig;
import org.sparkccl.device.Device;
import org.sparkccl.kernel.ChannelKernel;
import org.sparkccl.kernel.KernelGuard;
import org.sparkccl.kernel.KernelWaiter;

/**
 * One GPU, through its primary context (the one the CUDA runtime and other libraries of the process
 * share). Every thread that touches its memory or launches on it calls {@link #makeCurrent()}
 * first; the methods here do so themselves.
 */
public final class CudaDevice implements Device {
  private final int ordinal;
  private final CUdevice device = new CUdevice();
  private final CUcontext context = new CUcontext();
  private final String model;
  private final int computeCapability;
  private final int multiprocessors;
  private final String pciBusId;
  private volatile CudaKernels kernels;

  private CudaDevice(int ordinal) {
    this.ordinal = ordinal;
    cuDeviceGet(device, ordinal);
    cuDevicePrimaryCtxRetain(context, device);
    byte[] name = new byte[256];
    cuDeviceGetName(name, name.length, device);
    int len = 0;
    while (len < name.length && name[len] != 0) {
      len++;
    }
    this.model = new String(name, 0, len, StandardCharsets.US_ASCII);
    this.computeCapability =
        10 * attribute(CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)
            + attribute(CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
    this.multiprocessors = attribute(CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
    String[] bus = new String[1];
    cuDeviceGetPCIBusId(bus, 32, device);
    this.pciBusId = bus[0].trim().toLowerCase(java.util.Locale.ROOT);
  }

  /** The PCI bus id ({@code 0000:19:00.0}): the same name for this GPU in every process. */
  public String pciBusId() {
    return pciBusId;
  }

  /**
   * Whether kernels on this GPU can write into the memory of the GPU with PCI bus id {@code busId}:
   * it is this one, or the driver reports peer access ({@code cuDeviceCanAccessPeer}). A GPU this
   * process cannot see counts as unreachable.
   */
  public boolean reaches(String busId) {
    if (busId.equals(pciBusId)) {
      return true;
    }
    CUdevice other = new CUdevice();
    try {
      cuDeviceGetByPCIBusId(other, busId);
    } catch (CudaException e) {
      return false;
    }
    int[] can = new int[1];
    cuDeviceCanAccessPeer(can, device, other);
    return can[0] == 1;
  }

  /**
   * Lets kernels on this GPU reach {@code other}'s memory through device pointers (ranks that are
   * threads of one process on two GPUs). Idempotent.
   */
  void enablePeerAccess(CudaDevice other) {
    if (other == this) {
      return;
    }
    makeCurrent();
    try {
      cuCtxEnablePeerAccess(other.context, 0);
    } catch (CudaException e) {
      if (!e.getMessage()
          .contains(CUresult.stringFor(CUresult.CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED))) {
        throw e;
      }
    }
  }

  static CudaDevice open(int ordinal) {
    return new CudaDevice(ordinal);
  }

  private int attribute(int which) {
    int[] v = new int[1];
    cuDeviceGetAttribute(v, which, device);
    return v[0];
  }

  /** Makes this device's primary context current on the calling thread. */
  public void makeCurrent() {
    cuCtxSetCurrent(context);
  }

  public int ordinal() {
    return ordinal;
  }

  /** The product name, such as {@code NVIDIA H200}. */
  public String model() {
    return model;
  }

  /** Major and minor version as one number: 90 for Hopper. */
  public int computeCapability() {
    return computeCapability;
  }

  public int multiprocessors() {
    return multiprocessors;
  }

  @Override
  public String name() {
    return "cuda:" + ordinal;
  }

  @Override
  public CudaBuffer allocate(long bytes) {
    return new CudaBuffer(this, bytes);
  }

  /** Pinned host memory mapped into this device, for FIFOs that kernel and proxy share. */
  public MappedMemory allocateMapped(long bytes) {
    return new MappedMemory(this, bytes);
  }

  /** The kernels, compiled for this device on first use. */
  public CudaKernels kernels() {
    CudaKernels k = kernels;
    if (k == null) {
      synchronized (this) {
        k = kernels;
        if (k == null) {
          k = CudaKernels.load(this);
          kernels = k;
        }
      }
    }
    return k;
  }

  /** A CUDA block per collective on the channel's stream, over FIFOs in mapped host memory. */
  @Override
  public ChannelKernel newChannelKernel(
      int stepSize, KernelWaiter waiter, KernelGuard guard, BooleanSupplier assist) {
    return newChannelKernel(stepSize, waiter, guard, assist, CclConfig.builder().build());
  }

  /** As above, resident or launched per collective as {@code cuda.residentUs} says. */
  @Override
  public ChannelKernel newChannelKernel(
      int stepSize,
      KernelWaiter waiter,
      KernelGuard guard,
      BooleanSupplier assist,
      CclConfig config) {
    return new CudaChannelKernel(
        this, stepSize, guard, assist, config.cudaResidentUs(), config.cudaBlocks());
  }

  @Override
  public String toString() {
    return name() + " (" + model + ", sm_" + computeCapability + ")";
  }
}
