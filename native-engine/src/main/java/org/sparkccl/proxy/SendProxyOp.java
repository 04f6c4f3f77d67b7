package org.sparkccl.proxy;

import org.sparkccl.comm.CollectiveCall;
import org.sparkccl.fifo.Fifo;
import org.sparkccl.transport.NetRequest;
import org.sparkccl.transport.SendConnection;

/**
 * Sends FIFO steps the kernel has produced: NCCL's {@code netSendProxy}. A slot goes back to the
 * kernel once the transport has sent it.
 */
public final class SendProxyOp extends FifoProxyOp {
  private final SendConnection connection;

  private CollectiveCall call;

  public SendProxyOp(
      SendConnection connection,
      Fifo fifo,
      long base,
      long nSteps,
      CollectiveCall call,
      long timeoutNanos,
      String what) {
    super(connection, connection.progressedByOwner(), fifo, base, nSteps, timeoutNanos, what);
    this.connection = connection;
    this.call = call;
  }

  /** Described by {@code site} and {@code call} only when asked (an error, a stall). */
  public SendProxyOp(
      SendConnection connection,
      Fifo fifo,
      long base,
      long nSteps,
      CollectiveCall call,
      long timeoutNanos,
      OpSite site) {
    super(connection, connection.progressedByOwner(), fifo, base, nSteps, timeoutNanos, site, call);
    this.connection = connection;
    this.call = call;
  }

  /** Reuses this finished operation ({@link #isUnlinked()}) for another collective. */
  public void restart(long base, long nSteps, CollectiveCall call) {
    restartFifo(base, nSteps, call);
    this.call = call;
  }

  @Override
  protected boolean canPost(long step) {
    return fifo.isFilled(step) && connection.isReady();
  }

  @Override
  protected NetRequest post(long step) {
    return connection.postSend(fifo.bytesOf(step), fifo.size(step), step, call);
  }

  @Override
  protected void complete(long step, NetRequest request) {
    fifo.release(step);
  }
}
