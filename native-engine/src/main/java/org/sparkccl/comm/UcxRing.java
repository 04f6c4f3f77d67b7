package org.sparkccl.comm;

import org.sparkccl.CclException;
import org.sparkccl.bootstrap.Bootstrap;
import org.sparkccl.fifo.Fifo;
import org.sparkccl.transport.ucx.UcxTransport;
import org.sparkccl.transport.ucx.UcxUnavailableException;

/**
 * The ring over UCX (NCCL's IB {@code net}): one-sided puts into the next rank's registered receive
 * FIFO. Once the ring runs on it, the proxy thread owns the UCX worker.
 */
final class UcxRing implements RingTransport {
  private UcxTransport ucx;
  private String unavailable;

  /** Opens UCX for the channels' FIFOs; a failure makes it unavailable on this rank. */
  UcxRing(CommContext ctx) {
    Fifo[] sendFifos = new Fifo[ctx.channels.length];
    Fifo[] recvFifos = new Fifo[ctx.channels.length];
    for (CommChannel ch : ctx.channels) {
      sendFifos[ch.id] = ch.sendFifo;
      recvFifos[ch.id] = ch.recvFifo;
    }
    try {
      ucx = UcxTransport.open(ctx.rank, ctx.config.qpsPerConnection(), sendFifos, recvFifos);
    } catch (UcxUnavailableException e) {
      unavailable = e.getMessage();
    } catch (CclException e) {
      // a worker or registration that failed here: this rank joins the exchange without UCX,
      // so every rank falls back together (or fails together with transport=ucx)
      unavailable = e.getMessage();
    } catch (LinkageError e) {
      // the Jucx jar itself is missing (an application that shipped only SparkCCL's own jars)
      unavailable = "the Jucx classes (org.openucx:jucx) are not on the classpath: " + e;
    }
  }

  @Override
  public String name() {
    return "ucx";
  }

  @Override
  public byte[] localInfo() {
    return ucx == null ? null : ucx.localInfo();
  }

  @Override
  public String unavailableReason() {
    return unavailable;
  }

  @Override
  public String installHint() {
    return UcxTransport.INSTALL_HINT;
  }

  @Override
  public void connect(
      CommContext ctx, Bootstrap bootstrap, long token, int next, int prev, byte[][] infos) {
    for (CommChannel ch : ctx.channels) {
      ch.send = ucx.connectSend(next, ch.id, infos[next]);
      ch.recv = ucx.connectRecv(prev, ch.id, infos[prev]);
    }
    ucx.awaitPeersProven(System.nanoTime() + ctx.timeoutNanos);
  }

  @Override
  public void useSecret(byte[] secret) {
    if (ucx != null) {
      ucx.useSecret(secret);
    }
  }

  @Override
  public boolean confirmsConnect() {
    return true;
  }

  /**
   * Collectives up to this size take the tuner's choice (recursive doubling or a tree over the
   * sockets of the point-to-point links); larger ones the ring of one-sided puts, which moves more
   * per second than sockets. At 8 B, host memory, on a 16-core host, recursive doubling over
   * sockets took 31.2 us against the UCX ring's 40.1 at 4 ranks, and 74.7 against 602 at 8 (the
   * ring's 14 hops); at 4 ranks on a 2-core VM it was ahead from 8 B to 4 KiB, and level at 32 KiB
   * ({@code docs/benchmarks.md}).
   */
  static final long TUNED_UP_TO = 4096;

  @Override
  public long tunedUpTo() {
    return TUNED_UP_TO;
  }

  @Override
  public void start(CommContext ctx) {
    ucx.checkCalls(ctx.calls.checks());
    ctx.proxy.setOwnedPoller(ucx::poll, ucx.idleWait());
    ucx.onProxy(ctx.proxy::execute);
  }

  @Override
  public void close(boolean afterFailure) {
    if (ucx != null) {
      ucx.close(afterFailure);
      ucx = null;
    }
  }

  @Override
  public String describe(CommContext ctx) {
    String tls = System.getenv("UCX_TLS");
    return "UCX_TLS="
        + (tls == null ? "unset (UCX default)" : tls)
        + ", ib.qpsPerConnection="
        + ctx.config.qpsPerConnection()
        + "; flush after receive skipped: receive slots are host"
        + " memory; point-to-point on sockets";
  }
}
