package org.sparkccl.comm;

import java.util.function.Consumer;
import org.sparkccl.config.CclConfig;
import org.sparkccl.device.Device;
import org.sparkccl.idle.AutoIdle;
import org.sparkccl.idle.IdleStrategies;
import org.sparkccl.proxy.ProxyThread;

/**
 * What the parts of one communicator share: who this rank is, its configuration and device, the
 * channels with their kernel threads, the proxy thread, the collectives in flight and the sticky
 * failure. The parts ({@link CollectiveLauncher}, {@link PointToPoint}, {@link Lifecycle}, {@link
 * TransportSelector}) each do one job on it; {@code org.sparkccl.Communicator} is the public face.
 */
final class CommContext {
  final int rank;
  final int nRanks;
  final CclConfig config;
  final Device device;
  final long timeoutNanos;

  /** How every waiting thread of this communicator idles (key {@code idle}). */
  final IdleStrategies idle;

  final ProxyThread proxy;
  final CommChannel[] channels;
  final CallChecker calls;
  final FailureState failure;
  final InFlight pending = new InFlight();

  /** Orders launches: collectives and groups start in call order on every channel. */
  final Object launchLock = new Object();

  /**
   * The calls posted between this rank and its ring neighbours in shared memory, where the ring's
   * edges are direct between processes of one host (null elsewhere: calls are announced).
   */
  volatile NeighbourCalls neighbours;

  /** Set once the ranks are connected (null with one rank or while connecting). */
  private volatile Links links;

  /**
   * @param onError what a failure on the proxy thread does (the lifecycle's {@code fail})
   */
  CommContext(
      int rank, int nRanks, CclConfig config, Device device, Consumer<RuntimeException> onError) {
    this.rank = rank;
    this.nRanks = nRanks;
    this.config = config;
    this.device = device;
    this.timeoutNanos = config.timeout().toNanos();
    this.idle = IdleStrategies.of(config);
    this.failure = new FailureState(rank);
    this.calls = new CallChecker(rank, nRanks, config.checkCalls());
    this.proxy = new ProxyThread("sparkccl-proxy-r" + rank, idle, onError, config.nChannels());
    this.channels = new CommChannel[config.nChannels()];
  }

  /** Makes channel {@code c}; the caller fills every slot before connecting. */
  void openChannel(int c) {
    channels[c] =
        new CommChannel(
            c,
            rank,
            config.stepSize(),
            new ChannelGuard(this, c),
            () -> assistProxy(c),
            proxy::wakeIfBusy,
            idle,
            device,
            config);
  }

  /**
   * A waiting kernel lends itself to the proxy for its own channel's operations (the proxy's lane
   * of that channel: the kernels of several channels move their sockets at once), unless operations
   * that only the proxy thread may move are queued (UCX: every UCX call on the proxy thread); then
   * it only wakes the proxy for what it queued. The socket edges of trees and doubling over a UCX
   * ring are the kernels' to move.
   */
  private boolean assistProxy(int channel) {
    if (proxy.ownerWorkPending()) {
      channels[channel].waiter.flushProxyWake();
      return false;
    }
    return proxy.assist(channel);
  }

  /**
   * Settles {@code idle=auto} for {@code ranksOnHost} ranks of this communicator on this host, each
   * with this rank's polling threads, on the cores the JVM sees (capped by {@code
   * idle.cpusPerRank}).
   */
  void settleIdle(int ranksOnHost) {
    idle.settle(
        ranksOnHost,
        pollingThreadsPerRank(),
        AutoIdle.cores(availableCores(), config.idleCpusPerRank(), ranksOnHost));
  }

  /** This rank's threads that poll while work is in flight (what {@code idle=auto} counts). */
  int pollingThreadsPerRank() {
    return AutoIdle.pollingThreadsPerRank(config.nChannels(), config.socketThreads());
  }

  /** The cores this JVM sees. */
  static int availableCores() {
    return Runtime.getRuntime().availableProcessors();
  }

  Links links() {
    return links;
  }

  void setLinks(Links l) {
    links = l;
  }
}
