package org.sparkccl.proxy;

import org.sparkccl.fifo.Fifo;
import org.sparkccl.fifo.FifoLayout;
import org.sparkccl.transport.NetRequest;
import org.sparkccl.transport.RecvConnection;

/**
 * Receives {@code nSteps} FIFO steps from {@code base} on: the seed's {@code netRecvProxy}. It posts
 * a receive for every slot the kernel has freed ({@code posted}), and publishes each slot to the
 * kernel as its data lands ({@code done}).
 */
public final class RecvProxyOp extends ProxyOp {
  private final RecvConnection connection;
  private final Fifo fifo;
  private final long base;
  private final long nSteps;
  private final NetRequest[] requests = new NetRequest[FifoLayout.STEPS];
  private final StallClock clock;
  private final String what;
  private long posted;
  private long done;

  public RecvProxyOp(
      RecvConnection connection, Fifo fifo, long base, long nSteps, long timeoutNanos,
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
    while (posted < nSteps && fifo.hasRoomFor(base + posted)) {
      long step = base + posted;
      requests[FifoLayout.slotOf(step)] = connection.postRecv(fifo.slot(step), step);
      posted++;
      moved = true;
    }
    while (done < posted && requests[FifoLayout.slotOf(base + done)].test()) {
      long step = base + done;
      NetRequest r = requests[FifoLayout.slotOf(step)];
      requests[FifoLayout.slotOf(step)] = null;
      fifo.publish(step, r.size());
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
