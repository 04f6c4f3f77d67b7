package org.sparkccl.device.cuda;

import static jcuda.driver.JCudaDriver.CU_MEMHOSTREGISTER_DEVICEMAP;
import static jcuda.driver.JCudaDriver.CU_MEMHOSTREGISTER_PORTABLE;
import static jcuda.driver.JCudaDriver.cuMemHostGetDevicePointer;
import static jcuda.driver.JCudaDriver.cuMemHostRegister;
import static jcuda.driver.JCudaDriver.cuMemHostUnregister;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import jcuda.Pointer;
import jcuda.driver.CUdeviceptr;
import org.sparkccl.memory.DirectMemory;

/**
 * Host memory that several processes of one host share: a file in {@code /dev/shm} mapped by each
 * of them and registered with CUDA ({@code cuMemHostRegister} with {@code DEVICEMAP | PORTABLE}),
 * so that a kernel on one GPU writes what a kernel on another reads, as NCCL's SHM transport does.
 * The creator unlinks the file once the other side has mapped it; the pages live until both unmap.
 */
final class SharedHostMemory implements AutoCloseable {
  private final CudaDevice device;
  private final Path path;
  private final MappedByteBuffer mapped;
  private final ByteBuffer buffer;
  private final Pointer host;
  private final CUdeviceptr devicePointer = new CUdeviceptr();
  private boolean closed;

  private SharedHostMemory(CudaDevice device, Path path, long bytes, boolean create) {
    this.device = device;
    this.path = path;
    try (FileChannel ch =
        create
            ? FileChannel.open(
                path,
                StandardOpenOption.CREATE_NEW,
                StandardOpenOption.READ,
                StandardOpenOption.WRITE)
            : FileChannel.open(path, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
      if (create) {
        ch.truncate(bytes); // a new file: truncate does not grow it
        ch.write(ByteBuffer.allocate(1), bytes - 1);
      } else if (ch.size() != bytes) {
        throw new IllegalArgumentException(
            path + " has " + ch.size() + " bytes; expected " + bytes + " (the FIFO's size)");
      }
      this.mapped = ch.map(FileChannel.MapMode.READ_WRITE, 0, bytes);
    } catch (IOException e) {
      throw new UncheckedIOException(
          "cannot " + (create ? "create" : "open") + " shared memory " + path + ": " + e, e);
    }
    this.buffer = mapped.duplicate().order(ByteOrder.nativeOrder());
    this.host = Pointer.to(mapped);
    device.makeCurrent();
    try {
      cuMemHostRegister(host, bytes, CU_MEMHOSTREGISTER_DEVICEMAP | CU_MEMHOSTREGISTER_PORTABLE);
      cuMemHostGetDevicePointer(devicePointer, host, 0);
    } catch (RuntimeException e) {
      DirectMemory.unmap(mapped);
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
    try {
      Files.deleteIfExists(path);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot remove " + path + ": " + e, e);
    }
  }

  /** Unregisters and unmaps; no kernel or thread may touch the memory afterwards. Idempotent. */
  @Override
  public synchronized void close() {
    if (!closed) {
      closed = true;
      device.makeCurrent();
      cuMemHostUnregister(host);
      DirectMemory.unmap(mapped);
    }
  }
}
