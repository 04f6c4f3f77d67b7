package org.sparkccl.spark;

import com.esotericsoftware.kryo.Kryo;
import com.esotericsoftware.kryo.KryoException;
import com.esotericsoftware.kryo.Serializer;
import com.esotericsoftware.kryo.io.Input;
import com.esotericsoftware.kryo.io.Output;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.apache.spark.serializer.KryoRegistrator;
import org.sparkccl.device.DeviceBuffer;
import org.sparkccl.device.HostBuffer;
import org.sparkccl.device.HostDevice;
import org.sparkccl.device.cuda.CudaBuffer;

/**
 * Lets Kryo move {@link DeviceBuffer}s (shuffles, {@code collect}, caching): a buffer is written as
 * its length and its contents copied to host bytes, and read back into a new host buffer.
 *
 * <pre>
 * --conf spark.serializer=org.apache.spark.serializer.KryoSerializer
 * --conf spark.kryo.registrator=org.sparkccl.spark.SparkCCLKryoRegistrator
 * </pre>
 *
 * A buffer read back is released when the garbage collector finds it unreachable, or at once by
 * {@code close()}.
 */
public final class SparkCCLKryoRegistrator implements KryoRegistrator {
  @Override
  public void registerClasses(Kryo kryo) {
    DeviceBufferSerializer serializer = new DeviceBufferSerializer();
    kryo.register(HostBuffer.class, serializer);
    // GPU buffers travel as their bytes too and come back as host buffers
    kryo.register(CudaBuffer.class, serializer);
  }

  /** Length, then the bytes, copied through a small host window (device memory later too). */
  static final class DeviceBufferSerializer extends Serializer<DeviceBuffer> {
    private static final int WINDOW = 1 << 20;

    @Override
    public void write(Kryo kryo, Output output, DeviceBuffer buf) {
      long size = buf.byteSize();
      output.writeLong(size);
      byte[] window = new byte[(int) Math.min(WINDOW, size)];
      for (long off = 0; off < size; off += window.length) {
        int len = (int) Math.min(window.length, size - off);
        buf.copyToHost(off, ByteBuffer.wrap(window, 0, len).order(ByteOrder.nativeOrder()));
        output.writeBytes(window, 0, len);
      }
    }

    /** The most bytes a buffer read back may hold: what one host buffer can. */
    static final long MAX_BYTES = Integer.MAX_VALUE - 8;

    /**
     * Checks the length against {@link #MAX_BYTES} and, for input held in memory, against the bytes
     * left, before allocating; frees the buffer when the input ends early.
     */
    @Override
    public DeviceBuffer read(Kryo kryo, Input input, Class<DeviceBuffer> type) {
      long size = input.readLong();
      long left = input.getInputStream() == null ? input.limit() - input.position() : MAX_BYTES;
      if (size < 0 || size > MAX_BYTES || size > left) {
        throw new KryoException(
            "a serialized SparkCCL buffer of "
                + size
                + " bytes with "
                + (input.getInputStream() == null ? left + " bytes left" : "a stream left")
                + "; expected 0.."
                + Math.min(MAX_BYTES, left)
                + " bytes");
      }
      DeviceBuffer buf = HostDevice.INSTANCE.allocate(size);
      try {
        byte[] window = new byte[(int) Math.min(WINDOW, size)];
        for (long off = 0; off < size; off += window.length) {
          int len = (int) Math.min(window.length, size - off);
          input.readBytes(window, 0, len);
          buf.copyFromHost(ByteBuffer.wrap(window, 0, len).order(ByteOrder.nativeOrder()), off);
        }
        return buf;
      } catch (RuntimeException e) {
        buf.close();
        throw new KryoException(
            "a serialized SparkCCL buffer of " + size + " bytes ended early: " + e.getMessage(), e);
      }
    }
  }
}
