package org.sparkccl.transport.p2p;

import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;

/**
 * What a rank publishes in the bootstrap round where receivers hand out their FIFOs: one {@link
 * FifoHandle} per channel (none where the edge is not direct), or {@link #failed()} when the rank
 * could not make them, so that the next rank fails at once rather than waiting.
 *
 * <pre>{@code
 * FifoHandle[] back = ChannelHandles.decode(ChannelHandles.encode(handles), handles.length);
 * }</pre>
 */
public final class ChannelHandles {
  /** The message of a rank whose FIFOs failed. */
  public static byte[] failed() {
    return new byte[] {1};
  }

  private ChannelHandles() {}

  /** One message for every channel's handle; a null handle travels as none. */
  public static byte[] encode(FifoHandle[] handles) {
    byte[][] bytes = new byte[handles.length][];
    int size = 1 + 4;
    for (int c = 0; c < handles.length; c++) {
      bytes[c] = handles[c] == null ? null : handles[c].encode();
      size += 4 + (bytes[c] == null ? 0 : bytes[c].length);
    }
    ByteBuffer out = ByteBuffer.allocate(size).put((byte) 0).putInt(handles.length);
    for (byte[] h : bytes) {
      out.putInt(h == null ? -1 : h.length);
      if (h != null) {
        out.put(h);
      }
    }
    return out.array();
  }

  /**
   * Reads what {@link #encode} wrote.
   *
   * @throws IllegalArgumentException when the sender failed ({@link #failed()}), has another number
   *     of channels, or the bytes are malformed
   */
  public static FifoHandle[] decode(byte[] msg, int channels) {
    ByteBuffer in = ByteBuffer.wrap(msg);
    try {
      if (in.get() != 0) {
        throw new IllegalArgumentException("it failed to export its receive FIFOs");
      }
      int count = in.getInt();
      if (count != channels) {
        throw new IllegalArgumentException(
            "it has " + count + " channels; expected " + channels + ", as this rank");
      }
      FifoHandle[] out = new FifoHandle[count];
      for (int c = 0; c < count; c++) {
        int len = in.getInt();
        if (len > in.remaining()) {
          throw new BufferUnderflowException();
        }
        if (len >= 0) {
          byte[] h = new byte[len];
          in.get(h);
          out[c] = FifoHandle.decode(h);
        }
      }
      if (in.hasRemaining()) {
        throw new BufferUnderflowException();
      }
      return out;
    } catch (BufferUnderflowException e) {
      throw new IllegalArgumentException(
          "its " + msg.length + " bytes of FIFO handles are malformed", e);
    }
  }
}
