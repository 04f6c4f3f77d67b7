package org.sparkccl.proxy;

import org.sparkccl.fifo.Fifo;
import org.sparkccl.fifo.FifoLayout;
import org.sparkccl.transport.NetRequest;
import org.sparkccl.transport.SendConnection;

/**
 * Sends {@code nSteps} FIFO steps from {@code base} on: the seed's {@code netSendProxy}. Three
 * counters pipeline it: the kernel's tail (produced), {@code posted} (handed to the transport) and
 * {@code done} (sent; the slot goes back to the kernel).
 */
public final class SendProxyOp extends ProxyOp {
  private final SendConnection connection;
  private final Fifo fifo;
  private final long base;
  private final long nSteps;
  private final NetRequest[] requests = new NetRequest[FifoLayout.STEPS];
  private final StallClock clock;
  private final String what;
  private long posted;
  private long done;

  public SendProxyOp(
      SendConnection connection, Fifo fifo, long base, long nSteps, long timeoutNanos,
      String what) {
    this.connection = connection;
    this.fifo = fifo;
    this.base = base;
    this.nSteps = nSteps;
    this.clock = new StallClock(timeoutNanos);
    this.what = what;
  }

  @Override
  public Object peerKey() {
    return connection;
  }

  @Override
  public boolean progress(long now) {
    boolean moved = false;
    while (posted < nSteps && fifo.isFilled(base + posted)) {
      long step = base + posted;
      requests[FifoLayout.slotOf(step)] = connection.postSend(fifo.slot(step), fifo.size(step), step);
      posted++;
      moved = true;
    }
    while (done < posted && requests[FifoLayout.slotOf(base + done)].test()) {
      long step = base + done;
      requests[FifoLayout.slotOf(step)] = null;
      fifo.release(step);
      done++;
      moved = true;
    }
    if (moved) {
      clock.moved(now);
    } else if (done < posted) {
      clock.check(now);
    }
    return moved;
  }

  @Override
  public String what() {
    return what;
  }

  @Override
  public boolean isDone() {
    return done == nSteps;
  }
}
