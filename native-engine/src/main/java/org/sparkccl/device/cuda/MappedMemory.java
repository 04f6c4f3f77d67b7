package org.sparkccl.device.cuda;

import static jcuda.driver.JCudaDriver.CU_MEMHOSTALLOC_DEVICEMAP;
import static jcuda.driver.JCudaDriver.CU_MEMHOSTALLOC_PORTABLE;
import static jcuda.driver.JCudaDriver.cuMemFreeHost;
import static jcuda.driver.JCudaDriver.cuMemHostAlloc;
import static jcuda.driver.JCudaDriver.cuMemHostGetDevicePointer;
import static jcuda.driver.JCudaDriver.cuPointerGetAttribute;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import jcuda.Pointer;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUpointer_attribute;

/**
 * Pinned host memory mapped into a device ({@code cuMemHostAlloc} with {@code DEVICEMAP |
 * PORTABLE}): Java threads see it as a direct {@link ByteBuffer}, kernels through {@link
 * #devicePointer}. The FIFOs between CUDA kernels and the proxy thread live here, and so do the
 * kernels' status words.
 */
public final class MappedMemory implements AutoCloseable {
  private final CudaDevice device;
  private final Pointer host = new Pointer();
  private final CUdeviceptr devicePointer = new CUdeviceptr();
  private final ByteBuffer buffer;
  private final long address;
  private boolean closed;

  MappedMemory(CudaDevice device, long bytes) {
    if (bytes <= 0 || bytes > Integer.MAX_VALUE) {
      throw new IllegalArgumentException(
          "bytes=" + bytes + " is out of range 1.." + Integer.MAX_VALUE);
    }
    this.device = device;
    device.makeCurrent();
    cuMemHostAlloc(host, bytes, CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE);
    cuMemHostGetDevicePointer(devicePointer, host, 0);
    this.buffer = host.getByteBuffer(0, bytes).order(ByteOrder.nativeOrder());
    this.address = addressOf(devicePointer);
    byte[] zeros = new byte[(int) Math.min(bytes, 1 << 16)];
    for (int at = 0; at < bytes; at += zeros.length) {
      buffer.put(at, zeros, 0, (int) Math.min(zeros.length, bytes - at));
    }
  }

  /** The memory, native byte order, position 0. */
  public ByteBuffer buffer() {
    return buffer;
  }

  /** The device's address of byte {@code offset} as a number, for plans in host memory. */
  public long deviceAddress(long offset) {
    return address + offset;
  }

  /** What {@code pointer} (without a byte offset) points to, as the device sees it. */
  static long addressOf(CUdeviceptr pointer) {
    long[] value = new long[1];
    cuPointerGetAttribute(
        Pointer.to(value), CUpointer_attribute.CU_POINTER_ATTRIBUTE_DEVICE_POINTER, pointer);
    return value[0];
  }

  /** The device's address of byte {@code offset}. */
  public CUdeviceptr devicePointer(long offset) {
    return offset == 0 ? devicePointer : devicePointer.withByteOffset(offset);
  }

  /** Frees the memory; no kernel or thread may touch it afterwards. Idempotent. */
  @Override
  public synchronized void close() {
    if (!closed) {
      closed = true;
      device.makeCurrent();
      cuMemFreeHost(host);
    }
  }
}
