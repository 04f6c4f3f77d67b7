package org.sparkccl.comm;

import java.util.Objects;
import org.apache.logging.log4j.Logger;
import org.sparkccl.CclAbortedException;
import org.sparkccl.bootstrap.Bootstrap;
import org.sparkccl.config.CclConfig;
import org.sparkccl.device.Device;
import org.sparkccl.device.Devices;
import org.sparkccl.idle.IdleStrategies;
import org.sparkccl.util.EngineLog;

/**
 * The inside of one communicator, as {@code ncclCommInitRank} builds it: the channels with their
 * kernel threads, the proxy thread and the connections, and the parts that use them. {@code
 * org.sparkccl.Communicator} is its public face and holds nothing else.
 */
public final class CommCore {
  private static final Logger LOG = EngineLog.logger(CommCore.class);

  private final CommContext ctx;
  private final Lifecycle lifecycle;
  private final CollectiveLauncher collectives;
  private final PointToPoint pointToPoint;

  private CommCore(Bootstrap bootstrap, CclConfig config) {
    Device device = Devices.resolve(config.device());
    CclConfig resolved = ChannelCount.resolve(config, bootstrap, device);
    this.ctx = new CommContext(bootstrap.rank(), bootstrap.nRanks(), resolved, device, this::fail);
    this.lifecycle = new Lifecycle(ctx);
    this.collectives = new CollectiveLauncher(ctx, lifecycle);
    this.pointToPoint = new PointToPoint(ctx, collectives);
    try {
      for (int c = 0; c < ctx.channels.length; c++) {
        ctx.openChannel(c);
        CommChannel ch = ctx.channels[c];
        ch.waiter.onStall(() -> collectives.announceStalled(ch));
      }
      if (ctx.nRanks > 1) {
        ctx.setLinks(TransportSelector.connect(ctx, bootstrap));
      } else {
        ctx.settleIdle(1);
      }
      ctx.proxy.start();
    } catch (RuntimeException e) {
      lifecycle.release();
      throw e;
    }
    Links links = ctx.links();
    LOG.info(
        "rank {}/{} ready: device={} channels={} transport={}(nThreads={}, nSocksPerThread={},"
            + " qps={}) algo={} (the tuner's constants: {}) buffSize={}"
            + " stepSize={} ringProxyMinBytes={} idle={} timeout={}ms next={} prev={} listen={}",
        ctx.rank,
        ctx.nRanks,
        device,
        ctx.channels.length,
        ringTransport(),
        config.socketThreads(),
        config.socketsPerThread(),
        config.qpsPerConnection(),
        config.algo(),
        collectives.tunerInUse(),
        config.buffSize(),
        config.stepSize(),
        links == null ? 0 : links.ringProxyMinBytes(),
        ctx.idle,
        config.timeout().toMillis(),
        (ctx.rank + 1) % ctx.nRanks,
        (ctx.rank - 1 + ctx.nRanks) % ctx.nRanks,
        links == null ? "none" : links.sockets().address());
  }

  /** Forms this rank's part of a communicator; every rank of {@code bootstrap} must call it. */
  public static CommCore create(Bootstrap bootstrap, CclConfig config) {
    Objects.requireNonNull(bootstrap, "bootstrap");
    Objects.requireNonNull(config, "config");
    if (config.debug() != null) {
      EngineLog.setLevel(config.debug());
    }
    return new CommCore(bootstrap, config);
  }

  private void fail(RuntimeException e) {
    lifecycle.fail(e);
  }

  /** The parts, for tests in this package that reach inside. */
  CommContext context() {
    return ctx;
  }

  public CollectiveLauncher collectives() {
    return collectives;
  }

  public PointToPoint pointToPoint() {
    return pointToPoint;
  }

  public int rank() {
    return ctx.rank;
  }

  public int nRanks() {
    return ctx.nRanks;
  }

  public CclConfig config() {
    return ctx.config;
  }

  /** How this communicator's threads, and callers waiting on it, idle. */
  public IdleStrategies idle() {
    return ctx.idle;
  }

  public Device device() {
    return ctx.device;
  }

  /** The ring's transport ({@code ucx}, {@code socket}, {@code local}), or {@code none} alone. */
  public String ringTransport() {
    Links links = ctx.links();
    return links == null ? "none" : links.ring().name();
  }

  /** Fails every pending and future call; see {@code Communicator.abort()}. */
  public void abort() {
    lifecycle.fail(
        new CclAbortedException("rank " + ctx.rank + ": communicator aborted by abort()", null));
  }

  public boolean isAborted() {
    return ctx.failure.get() != null;
  }

  /** Waits for pending work, then releases every thread, socket and FIFO. Idempotent. */
  public void close() {
    lifecycle.close();
  }
}
