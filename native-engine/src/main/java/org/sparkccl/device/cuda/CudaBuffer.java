package org.sparkccl.device.cuda;

import static jcuda.driver.JCudaDriver.cuMemAlloc;
import static jcuda.driver.JCudaDriver.cuMemFree;
import static jcuda.driver.JCudaDriver.cuMemcpyDtoD;
import static jcuda.driver.JCudaDriver.cuMemcpyDtoH;
import static jcuda.driver.JCudaDriver.cuMemcpyHtoD;

import java.nio.ByteBuffer;
import jcuda.Pointer;
import jcuda.driver.CUdeviceptr;
import org.sparkccl.device.DeviceBuffer;
import org.sparkccl.memory.BufferUse;
import org.sparkccl.memory.HostOrder;

/**
 * A {@link DeviceBuffer} in GPU memory ({@code cuMemAlloc}), released at {@link #close()}. Copies
 * to and from the host are synchronous; from pinned or direct memory they run at the link's speed,
 * from heap buffers through JCuda's staging.
 */
public final class CudaBuffer implements DeviceBuffer {
  private final CudaDevice device;
  private final CUdeviceptr pointer = new CUdeviceptr();
  private final long bytes;
  private final BufferUse use = new BufferUse();

  /** {@link #address()} once asked; 0 before. */
  private volatile long address;

  CudaBuffer(CudaDevice device, long bytes) {
    if (bytes < 0) {
      throw new IllegalArgumentException("bytes=" + bytes + " is negative");
    }
    this.device = device;
    this.bytes = bytes;
    device.makeCurrent();
    cuMemAlloc(pointer, Math.max(1, bytes));
  }

  @Override
  public CudaDevice device() {
    return device;
  }

  @Override
  public long byteSize() {
    return bytes;
  }

  @Override
  public boolean isClosed() {
    return use.isClosed();
  }

  /**
   * The device address of byte 0 as a number, for plans that a resident kernel reads from host
   * memory.
   */
  long address() {
    use.checkNotFreed();
    long a = address;
    if (a == 0) {
      a = MappedMemory.addressOf(pointer);
      address = a;
    }
    return a;
  }

  /** The device address of byte {@code offset}, for kernels and copies. */
  public CUdeviceptr pointer(long offset) {
    use.checkNotFreed(); // a collective that still holds the buffer keeps it past close()
    return offset == 0 ? pointer : pointer.withByteOffset(offset);
  }

  @Override
  public void copyFromHost(ByteBuffer src, long offset) {
    HostOrder.check(src, "src");
    checkRange(offset, src.remaining());
    device.makeCurrent();
    cuMemcpyHtoD(pointer(offset), Pointer.toBuffer(src), src.remaining());
  }

  @Override
  public void copyToHost(long offset, ByteBuffer dst) {
    HostOrder.check(dst, "dst");
    checkRange(offset, dst.remaining());
    device.makeCurrent();
    cuMemcpyDtoH(Pointer.toBuffer(dst), pointer(offset), dst.remaining());
  }

  @Override
  public void copyFrom(DeviceBuffer other, long srcOffset, long offset, long length) {
    if (!(other instanceof CudaBuffer src) || src.device != device) {
      throw new IllegalArgumentException(
          "cannot copy from "
              + other
              + " to "
              + this
              + " on the device; expected a buffer of "
              + device);
    }
    src.checkRange(srcOffset, length);
    checkRange(offset, length);
    device.makeCurrent();
    cuMemcpyDtoD(pointer(offset), src.pointer(srcOffset), length);
  }

  private void checkRange(long offset, long length) {
    // engine copies may still run on a buffer closed during its collective: only freed is fatal
    use.checkNotFreed();
    if (offset < 0 || length < 0 || offset > bytes - length) {
      throw new IndexOutOfBoundsException(
          "offset=" + offset + " length=" + length + " is outside a buffer of " + bytes + " bytes");
    }
  }

  @Override
  public void retain() {
    use.retain();
  }

  @Override
  public void release() {
    use.release();
  }

  @Override
  public void close() {
    use.close(
        () -> {
          device.makeCurrent();
          cuMemFree(pointer);
        });
  }

  @Override
  public String toString() {
    return "CudaBuffer["
        + device.name()
        + ", "
        + bytes
        + " bytes"
        + (use.isClosed() ? ", closed" : "")
        + "]";
  }
}
