package org.sparkccl.device.cuda;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import jcuda.driver.CUipcMemHandle;
import org.sparkccl.transport.p2p.FifoHandle;

/**
 * The bytes of a CUDA IPC memory handle. JCuda 12.6 keeps them in a private field of {@link
 * CUipcMemHandle} with no accessor, and they must cross to another process (the handle is all CUDA
 * IPC is), so this one class reads and writes that field; JCuda's package is open to us (an
 * automatic module, or the class path). It is the only reflective access to JCuda in the engine.
 */
final class IpcHandles {
  private static final VarHandle RESERVED = reserved();

  private IpcHandles() {}

  static byte[] bytes(CUipcMemHandle h) {
    return ((byte[]) RESERVED.get(h)).clone();
  }

  static CUipcMemHandle of(byte[] bytes) {
    if (bytes.length != FifoHandle.IPC_HANDLE_BYTES) {
      throw new IllegalArgumentException(
          "an IPC handle of " + bytes.length + " bytes; expected " + FifoHandle.IPC_HANDLE_BYTES);
    }
    CUipcMemHandle h = new CUipcMemHandle();
    RESERVED.set(h, bytes.clone());
    return h;
  }

  private static VarHandle reserved() {
    try {
      return MethodHandles.privateLookupIn(CUipcMemHandle.class, MethodHandles.lookup())
          .findVarHandle(CUipcMemHandle.class, "reserved", byte[].class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }
}
