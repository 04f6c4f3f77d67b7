package org.sparkccl.transport.p2p;

import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * What a rank tells the others so that each ring edge can decide whether it stays on the host
 * ({@link EdgeKind}): the host (the kernel's boot id), the process, the GPU (its PCI bus id, the
 * same in every process whatever the device numbering; empty when the rank's kernel cannot share
 * FIFOs) and whether {@code p2p} allows peer writes.
 *
 * <pre>{@code
 * SameHostInfo i = SameHostInfo.decode(new SameHostInfo("boot:1", 42, "0000:19:00.0", true).encode());
 * }</pre>
 */
public record SameHostInfo(String host, long pid, String deviceId, boolean p2p) {
  /** The device id of a host-memory kernel, whose FIFOs lie in shared host memory. */
  public static final String HOST_MEMORY = "host";

  /** Whether this rank's kernel runs on host memory rather than a GPU. */
  public boolean hostMemory() {
    return HOST_MEMORY.equals(deviceId);
  }

  /** The bytes that travel through the bootstrap. */
  public byte[] encode() {
    byte[] h = host.getBytes(StandardCharsets.UTF_8);
    byte[] d = deviceId.getBytes(StandardCharsets.UTF_8);
    return ByteBuffer.allocate(4 + h.length + 8 + 4 + d.length + 1)
        .putInt(h.length)
        .put(h)
        .putLong(pid)
        .putInt(d.length)
        .put(d)
        .put((byte) (p2p ? 1 : 0))
        .array();
  }

  /**
   * Reads what {@link #encode()} wrote.
   *
   * @throws IllegalArgumentException when {@code bytes} are not what {@link #encode()} wrote
   */
  public static SameHostInfo decode(byte[] bytes) {
    ByteBuffer in = ByteBuffer.wrap(bytes);
    try {
      String host = string(in);
      long pid = in.getLong();
      String device = string(in);
      byte p2p = in.get();
      if (in.hasRemaining() || p2p > 1 || p2p < 0) {
        throw new IllegalArgumentException(malformed(bytes));
      }
      return new SameHostInfo(host, pid, device, p2p == 1);
    } catch (BufferUnderflowException e) {
      throw new IllegalArgumentException(malformed(bytes), e);
    }
  }

  private static String string(ByteBuffer in) {
    int n = in.getInt();
    if (n < 0 || n > in.remaining()) {
      throw new BufferUnderflowException();
    }
    byte[] b = new byte[n];
    in.get(b);
    return new String(b, StandardCharsets.UTF_8);
  }

  private static String malformed(byte[] bytes) {
    return "a same-host description of "
        + bytes.length
        + " bytes is malformed; expected host, process id, device id and the p2p flag";
  }
}
