package org.sparkccl.proxy;

import org.sparkccl.comm.CollectiveCall;
import org.sparkccl.fifo.Fifo;
import org.sparkccl.fifo.FifoLayout;
import org.sparkccl.transport.NetRequest;

/**
 * Moves {@code nSteps} FIFO steps from {@code base} on between a FIFO and a connection, with the
 * proxy counters of NCCL: {@code posted} (handed to the transport) and {@code done} (completed by
 * it). At most one request per slot is in flight; a stall with requests in flight fails after the
 * timeout.
 */
abstract class FifoProxyOp extends ProxyOp {
  protected final Fifo fifo;
  private final Object connection;

  /** Whether the connection is moved only by the proxy thread ({@link #needsTransportOwner}). */
  private final boolean needsOwner;

  /** This operation's launcher gave it to the proxy thread alone ({@link #proxyOnly}). */
  private boolean proxyOnly;

  // not final: a finished, unlinked operation may be restarted for the next collective
  private long base;
  private long nSteps;
  private final NetRequest[] requests = new NetRequest[FifoLayout.STEPS];
  private final StallClock clock;
  private final String what;
  private final OpSite site;
  private CollectiveCall call;
  private long posted;
  private long done;

  FifoProxyOp(
      Object connection,
      boolean needsOwner,
      Fifo fifo,
      long base,
      long nSteps,
      long timeoutNanos,
      String what) {
    this(connection, needsOwner, fifo, base, nSteps, timeoutNanos, what, null, null);
  }

  /** Described by {@code site} and {@code call} when asked, not at launch. */
  FifoProxyOp(
      Object connection,
      boolean needsOwner,
      Fifo fifo,
      long base,
      long nSteps,
      long timeoutNanos,
      OpSite site,
      CollectiveCall call) {
    this(connection, needsOwner, fifo, base, nSteps, timeoutNanos, null, site, call);
  }

  /** Described by {@code what}, or else by {@code site} and {@code call}. */
  private FifoProxyOp(
      Object connection,
      boolean needsOwner,
      Fifo fifo,
      long base,
      long nSteps,
      long timeoutNanos,
      String what,
      OpSite site,
      CollectiveCall call) {
    this.connection = connection;
    this.needsOwner = needsOwner;
    this.fifo = fifo;
    this.base = base;
    this.nSteps = nSteps;
    this.clock = new StallClock(timeoutNanos);
    this.what = what;
    this.site = site;
    this.call = call;
  }

  /**
   * Makes this finished operation ({@link #isUnlinked()}) move {@code nSteps} steps from {@code
   * base} for {@code call}, on the same connection and FIFO, described by the same site.
   */
  protected final void restartFifo(long base, long nSteps, CollectiveCall call) {
    if (!isUnlinked() || site == null) {
      throw new IllegalStateException(
          "only a finished, unlinked operation described by its site restarts: " + what());
    }
    this.base = base;
    this.nSteps = nSteps;
    this.call = call;
    this.posted = 0;
    this.done = 0;
    clock.reset();
    clearUnlinked();
  }

  /** The step this operation starts at. */
  protected final long firstStep() {
    return base;
  }

  /** Whether {@code step} can be handed to the transport now. */
  protected abstract boolean canPost(long step);

  /** Hands {@code step} to the transport. */
  protected abstract NetRequest post(long step);

  /** The transport finished {@code step}: give the slot to the kernel. */
  protected abstract void complete(long step, NetRequest request);

  /** {@code step}, the oldest in flight, has not finished yet: what moved of it may be told. */
  protected void inFlight(long step, NetRequest request) {}

  @Override
  public final Object peerKey() {
    return connection;
  }

  @Override
  public final boolean progress(long now) {
    boolean moved = false;
    while (posted < nSteps && canPost(base + posted)) {
      long step = base + posted;
      requests[FifoLayout.slotOf(step)] = post(step);
      posted++;
      moved = true;
    }
    while (done < posted && requests[FifoLayout.slotOf(base + done)].test()) {
      long step = base + done;
      NetRequest r = requests[FifoLayout.slotOf(step)];
      requests[FifoLayout.slotOf(step)] = null;
      complete(step, r);
      done++;
      moved = true;
    }
    if (done < posted) {
      long step = base + done;
      inFlight(step, requests[FifoLayout.slotOf(step)]);
    }
    if (moved) {
      clock.moved(now);
    } else if (done < posted) {
      clock.check(now);
    }
    return moved;
  }

  /**
   * Whether only the proxy thread moves this operation, though waiting kernels could (key {@code
   * ring.proxyMinBytes}); a connection whose transport the proxy owns stays the proxy's either way.
   * Only while the operation is not queued: the proxy counts such operations when they are queued
   * and when they retire.
   */
  public final void proxyOnly(boolean only) {
    proxyOnly = only;
  }

  @Override
  final boolean needsTransportOwner() {
    return needsOwner || proxyOnly;
  }

  @Override
  public final boolean isDone() {
    return done == nSteps;
  }

  @Override
  public final String what() {
    return what != null ? what : site.describe(call);
  }
}
