package org.sparkccl.transport.p2p;

import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * How a sending rank finds the receive FIFO of a direct edge, published by the receiver through the
 * bootstrap: the shared-memory file that holds its control block (head, tail, sizes, abort; and the
 * slots too for {@link EdgeKind#SHM}), and for {@link EdgeKind#PEER} the slots in the receiver's
 * GPU: a CUDA IPC handle for another process (a process cannot open its own IPC handle, so ranks
 * that are threads of one process find the slots by the file's name instead).
 *
 * @param ownerPid the receiver's process id
 * @param file the shared-memory file's path
 * @param deviceId the receiver's GPU (PCI bus id)
 * @param ipcHandle the 64-byte IPC handle of the slots, empty for {@link EdgeKind#SHM}
 */
public record FifoHandle(
    EdgeKind kind, long ownerPid, int stepSize, String file, String deviceId, byte[] ipcHandle) {
  /** Bytes of a CUDA IPC memory handle. */
  public static final int IPC_HANDLE_BYTES = 64;

  public FifoHandle {
    if (kind == EdgeKind.NET) {
      throw new IllegalArgumentException("kind=NET has no FIFO handle; expected PEER or SHM");
    }
    if (kind == EdgeKind.PEER && ipcHandle.length != IPC_HANDLE_BYTES) {
      throw new IllegalArgumentException(
          "ipcHandle has " + ipcHandle.length + " bytes; expected " + IPC_HANDLE_BYTES);
    }
    ipcHandle = ipcHandle.clone();
  }

  @Override
  public byte[] ipcHandle() {
    return ipcHandle.clone();
  }

  public byte[] encode() {
    byte[] f = file.getBytes(StandardCharsets.UTF_8);
    byte[] d = deviceId.getBytes(StandardCharsets.UTF_8);
    return ByteBuffer.allocate(1 + 8 + 4 + 4 + f.length + 4 + d.length + 4 + ipcHandle.length)
        .put((byte) kind.ordinal())
        .putLong(ownerPid)
        .putInt(stepSize)
        .putInt(f.length)
        .put(f)
        .putInt(d.length)
        .put(d)
        .putInt(ipcHandle.length)
        .put(ipcHandle)
        .array();
  }

  /**
   * Reads what {@link #encode()} wrote.
   *
   * @throws IllegalArgumentException when {@code bytes} are not what {@link #encode()} wrote
   */
  public static FifoHandle decode(byte[] bytes) {
    ByteBuffer in = ByteBuffer.wrap(bytes);
    try {
      int k = in.get();
      if (k != EdgeKind.PEER.ordinal() && k != EdgeKind.SHM.ordinal()) {
        throw new IllegalArgumentException(malformed(bytes, "kind " + k));
      }
      long pid = in.getLong();
      int stepSize = in.getInt();
      byte[] f = new byte[length(in)];
      in.get(f);
      byte[] d = new byte[length(in)];
      in.get(d);
      byte[] h = new byte[length(in)];
      in.get(h);
      if (in.hasRemaining()) {
        throw new IllegalArgumentException(malformed(bytes, in.remaining() + " bytes too many"));
      }
      return new FifoHandle(
          EdgeKind.values()[k],
          pid,
          stepSize,
          new String(f, StandardCharsets.UTF_8),
          new String(d, StandardCharsets.UTF_8),
          h);
    } catch (BufferUnderflowException e) {
      throw new IllegalArgumentException(malformed(bytes, "truncated"), e);
    }
  }

  private static int length(ByteBuffer in) {
    int n = in.getInt();
    if (n < 0 || n > in.remaining()) {
      throw new BufferUnderflowException();
    }
    return n;
  }

  private static String malformed(byte[] bytes, String why) {
    return "a FIFO handle of " + bytes.length + " bytes is malformed (" + why + ")";
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof FifoHandle h
        && kind == h.kind
        && ownerPid == h.ownerPid
        && stepSize == h.stepSize
        && file.equals(h.file)
        && deviceId.equals(h.deviceId)
        && Arrays.equals(ipcHandle, h.ipcHandle);
  }

  @Override
  public int hashCode() {
    return 31 * file.hashCode() + Arrays.hashCode(ipcHandle);
  }

  @Override
  public String toString() {
    return kind + " FIFO of process " + ownerPid + " in " + file;
  }
}
