package org.sparkccl.transport.ucx;

import org.apache.logging.log4j.Logger;
import org.openucx.jucx.ucp.UcpMemory;
import org.sparkccl.CclException;
import org.sparkccl.util.EngineLog;

/**
 * NCCL's flush step ({@code ncclNetFlush}): after a receive completes and before the kernel is
 * told, a receive into device memory through GPUDirect needs a read that forces the NIC's earlier
 * writes to land. Receive slots in host memory need none: the completion record is put after a
 * flush on the sender's side, so the data is there when the record is. The decision is made here,
 * once per connection, from the memory type UCX reports for the registered slots.
 */
final class ReceiveFlush {
  private static final Logger LOG = EngineLog.logger(ReceiveFlush.class);

  /** UCS_MEMORY_TYPE_HOST. */
  private static final int HOST = 0;

  private ReceiveFlush() {}

  /** Logs the decision; refuses device memory, whose flush comes with the CUDA backend. */
  static void check(UcpMemory slots, String what) {
    int type = slots.getMemType();
    if (type == HOST) {
      LOG.debug(
          "{}: flush after receive skipped: the receive slots are host memory (UCS memory type"
              + " 0), which the sender's flush before its completion record already orders",
          what);
      return;
    }
    throw new CclException(
        what
            + ": receive slots in device memory (UCS memory type "
            + type
            + ") need a"
            + " GPUDirect flush after each receive, which this build does not do yet");
  }
}
