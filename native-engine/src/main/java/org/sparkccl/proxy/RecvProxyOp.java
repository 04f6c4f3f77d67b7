package org.sparkccl.proxy;

import org.sparkccl.fifo.Fifo;
import org.sparkccl.transport.NetRequest;
import org.sparkccl.transport.RecvConnection;

/**
 * Receives FIFO steps into slots the kernel has freed: the seed's {@code netRecvProxy}. A slot is
 * published to the kernel as its data lands.
 */
public final class RecvProxyOp extends FifoProxyOp {
  private final RecvConnection connection;

  public RecvProxyOp(
      RecvConnection connection, Fifo fifo, long base, long nSteps, long timeoutNanos,
      String what) {
    super(connection, fifo, base, nSteps, timeoutNanos, what);
    this.connection = connection;
  }

  @Override
  protected boolean canPost(long step) {
    return fifo.hasRoomFor(step);
  }

  @Override
  protected NetRequest post(long step) {
    return connection.postRecv(fifo.slot(step), step);
  }

  @Override
  protected void complete(long step, NetRequest request) {
    fifo.publish(step, request.size());
  }
}
