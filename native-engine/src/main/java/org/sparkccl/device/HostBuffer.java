package org.sparkccl.device;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.sparkccl.memory.BufferUse;
import org.sparkccl.memory.DirectMemory;
import org.sparkccl.memory.HostOrder;

/** A {@link DeviceBuffer} in off-heap host memory, released at {@link #close()}. */
public final class HostBuffer implements DeviceBuffer {
  private final ByteBuffer memory;
  private final BufferUse use = new BufferUse();
  private final boolean owned;

  HostBuffer(long bytes) {
    if (bytes < 0 || bytes > Integer.MAX_VALUE - 8) {
      throw new IllegalArgumentException(
          "bytes=" + bytes + " is out of range; a host buffer holds 0.." + (Integer.MAX_VALUE - 8));
    }
    this.memory = DirectMemory.allocate((int) bytes);
    this.owned = true;
  }

  private HostBuffer(ByteBuffer memory) {
    this.memory = memory;
    this.owned = false;
  }

  /**
   * A host buffer over direct memory that the caller owns, such as a file mapping shared with
   * another process: collectives read and write that memory in place, and {@link #close()} ends the
   * buffer's use without freeing it. The caller keeps the memory valid until the buffer is closed
   * and no collective holds it.
   *
   * <pre>{@code
   * MappedByteBuffer shared = file.map(FileChannel.MapMode.READ_WRITE, 0, bytes);
   * try (HostBuffer buf = HostBuffer.wrap(shared.order(ByteOrder.nativeOrder()))) {
   *   communicator.allReduce(buf, buf, bytes / 4, DataType.FLOAT32, ReduceOp.SUM);
   * }
   * }</pre>
   *
   * @throws IllegalArgumentException when {@code memory} is not direct or not in the machine's byte
   *     order
   */
  public static HostBuffer wrap(ByteBuffer memory) {
    if (!memory.isDirect()) {
      throw new IllegalArgumentException("a heap buffer; expected direct memory");
    }
    HostOrder.check(memory, "memory");
    return new HostBuffer(memory.slice().order(ByteOrder.nativeOrder()));
  }

  @Override
  public Device device() {
    return HostDevice.INSTANCE;
  }

  @Override
  public long byteSize() {
    return memory.capacity();
  }

  @Override
  public boolean isClosed() {
    return use.isClosed();
  }

  /** The memory itself, native byte order; for host kernels and tests, not for general use. */
  public ByteBuffer memory() {
    use.checkNotFreed(); // a collective that still holds the buffer keeps it past close()
    return memory;
  }

  @Override
  public void copyFromHost(ByteBuffer src, long offset) {
    HostOrder.check(src, "src");
    checkRange(offset, src.remaining());
    memory.put((int) offset, src, src.position(), src.remaining());
  }

  @Override
  public void copyToHost(long offset, ByteBuffer dst) {
    HostOrder.check(dst, "dst");
    checkRange(offset, dst.remaining());
    dst.put(dst.position(), memory, (int) offset, dst.remaining());
  }

  @Override
  public void copyFrom(DeviceBuffer src, long srcOffset, long offset, long length) {
    if (!(src instanceof HostBuffer h)) {
      throw new IllegalArgumentException(
          "cannot copy from " + src + " to host memory on the device; expected a host buffer");
    }
    ByteBuffer from = h.memory();
    ByteBuffer to = memory();
    if (srcOffset < 0
        || offset < 0
        || length < 0
        || srcOffset > from.capacity() - length
        || offset > to.capacity() - length) {
      throw new IndexOutOfBoundsException(
          "copying "
              + length
              + " bytes from offset "
              + srcOffset
              + " of "
              + from.capacity()
              + " to offset "
              + offset
              + " of "
              + to.capacity()
              + " bytes is out of range");
    }
    to.put((int) offset, from, (int) srcOffset, (int) length);
  }

  private void checkRange(long offset, int length) {
    use.checkOpen();
    if (offset < 0 || offset > memory.capacity() - (long) length) {
      throw new IndexOutOfBoundsException(
          "offset="
              + offset
              + " length="
              + length
              + " is outside a buffer of "
              + memory.capacity()
              + " bytes");
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

  /**
   * Releases the memory; idempotent. While a collective still uses the buffer, the memory is freed
   * when it lets go ({@link BufferUse}).
   */
  @Override
  public void close() {
    use.close(owned ? () -> DirectMemory.free(memory) : () -> {});
  }

  @Override
  public String toString() {
    return "HostBuffer[" + memory.capacity() + " bytes" + (use.isClosed() ? ", closed" : "") + "]";
  }
}
