package org.sparkccl.proxy;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.sparkccl.DataType;
import org.sparkccl.ReduceOp;
import org.sparkccl.comm.CollectiveCall;
import org.sparkccl.fifo.Fifo;
import org.sparkccl.transport.SendConnection;
import org.sparkccl.transport.local.LocalPipe;

/**
 * A launcher can make an operation of a connection that kernels may move the proxy thread's alone
 * ({@link FifoProxyOp#proxyOnly}, key {@code ring.proxyMinBytes}), and give it back to kernels for
 * the next collective; assisting kernels skip the proxy's operations ({@code
 * OwnedProxyAssistTest}).
 */
@DisplayName("operations the proxy moves alone")
class ProxyOnlyOpTest {
  private static final CollectiveCall CALL =
      new CollectiveCall(CollectiveCall.Kind.ALL_REDUCE, 1, 4096, DataType.INT8, ReduceOp.SUM, -1);

  @Test
  @DisplayName("proxyOnly makes an operation the proxy's, and undoes it for the next collective")
  void proxyOnlyChoosesWhoMovesTheOperation() {
    SendConnection sender = LocalPipe.sender(201, 0, 1, 0, () -> {}, m -> {});
    assertFalse(sender.progressedByOwner(), "the in-process pipe is one that kernels move");
    SendProxyOp op =
        new SendProxyOp(
            sender, new Fifo(4096), 0, 1, CALL, TimeUnit.SECONDS.toNanos(30), "send in a test");
    assertFalse(op.needsTransportOwner(), "kernels may move it until told otherwise");
    op.proxyOnly(true);
    assertTrue(op.needsTransportOwner(), "proxyOnly(true): only the proxy thread moves it");
    op.proxyOnly(false);
    assertFalse(op.needsTransportOwner(), "proxyOnly(false): kernels may move it again");
  }
}
