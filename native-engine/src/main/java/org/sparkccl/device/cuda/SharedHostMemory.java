package org.sparkccl.device.cuda;

import static jcuda.driver.JCudaDriver.CU_MEMHOSTREGISTER_DEVICEMAP;
import static jcuda.driver.JCudaDriver.CU_MEMHOSTREGISTER_PORTABLE;
import static jcuda.driver.JCudaDriver.cuMemHostGetDevicePointer;
import static jcuda.driver.JCudaDriver.cuMemHostRegister;
import static jcuda.driver.JCudaDriver.cuMemHostUnregister;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import jcuda.Pointer;
import jcuda.driver.CUdeviceptr;
import org.sparkccl.memory.SharedFile;

/**
 * Host memory that several processes of one host share: a file in {@code /dev/shm} mapped by each
 * of them and registered with CUDA ({@code cuMemHostRegister} with {@code DEVICEMAP | PORTABLE}),
 * so that a kernel on one GPU writes what a kernel on another reads, as NCCL's SHM transport does.
 * The creator unlinks the file once the other side has mapped it; the pages live until both unmap.
 */
final class SharedHostMemory implements AutoCloseable {
  private final CudaDevice device;
  private final SharedFile file;
  private final ByteBuffer buffer;
  private final Pointer host;
  private final CUdeviceptr devicePointer = new CUdeviceptr();
  private boolean closed;

  private SharedHostMemory(CudaDevice device, Path path, long bytes, boolean create) {
    this.device = device;
    this.file = create ? SharedFile.create(path, bytes) : SharedFile.openPublished(path, bytes);
    this.buffer = file.buffer();
    this.host = Pointer.to(file.mapped());
    device.makeCurrent();
    try {
      cuMemHostRegister(host, bytes, CU_MEMHOSTREGISTER_DEVICEMAP | CU_MEMHOSTREGISTER_PORTABLE);
      cuMemHostGetDevicePointer(devicePointer, host, 0);
    } catch (RuntimeException e) {
      if (create) {
        file.unlink();
      }
      file.close();
      throw e;
    }
  }

  /** Creates the file ({@code bytes}, zeroed; it must not exist) and maps it. */
  static SharedHostMemory create(CudaDevice device, Path path, long bytes) {
    return new SharedHostMemory(device, path, bytes, true);
  }

  /** Maps a file another rank created. */
  static SharedHostMemory open(CudaDevice device, Path path, long bytes) {
    return new SharedHostMemory(device, path, bytes, false);
  }

  /** The memory, native order; shares its bytes with every other mapping of the file. */
  ByteBuffer buffer() {
    return buffer;
  }

  /** The device's address of byte {@code offset} as a number, for plans in host memory. */
  long deviceAddress(long offset) {
    return MappedMemory.addressOf(devicePointer) + offset;
  }

  CUdeviceptr devicePointer(long offset) {
    return offset == 0 ? devicePointer : devicePointer.withByteOffset(offset);
  }

  /** Removes the file's name; mappings stay valid. Idempotent. */
  void unlink() {
    file.unlink();
  }

  /** Unregisters and unmaps; no kernel or thread may touch the memory afterwards. Idempotent. */
  @Override
  public synchronized void close() {
    if (!closed) {
      closed = true;
      device.makeCurrent();
      cuMemHostUnregister(host);
      file.close();
    }
  }
}
