package org.sparkccl;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.sparkccl.algorithm.ChannelPlan;
import org.sparkccl.algorithm.ChannelSplit;
import org.sparkccl.algorithm.RingAllReduce;
import org.sparkccl.algorithm.RingChain;
import org.sparkccl.algorithm.RingGather;
import org.sparkccl.algorithm.Tree;
import org.sparkccl.algorithm.Tuner;
import org.sparkccl.bootstrap.Bootstrap;
import org.sparkccl.bootstrap.LocalBootstrap;
import org.sparkccl.config.CclConfig;
import org.sparkccl.device.Device;
import org.sparkccl.device.DeviceBuffer;
import org.sparkccl.device.Devices;
import org.sparkccl.device.HostBuffer;
import org.sparkccl.fifo.Fifo;
import org.sparkccl.device.HostDevice;
import org.sparkccl.device.cuda.CudaBuffer;
import org.sparkccl.device.cuda.CudaDevice;
import org.sparkccl.kernel.CudaChannelKernel;
import org.sparkccl.kernel.ChannelWork;
import org.sparkccl.kernel.HostChannelKernel;
import org.sparkccl.kernel.HostP2pKernel;
import org.sparkccl.kernel.HostTreeKernel;
import org.sparkccl.kernel.KernelTask;
import org.sparkccl.proxy.ProxyThread;
import org.sparkccl.proxy.RecvProxyOp;
import org.sparkccl.proxy.SendProxyOp;
import org.sparkccl.transport.RecvConnection;
import org.sparkccl.transport.local.LocalPipe;
import org.sparkccl.transport.socket.SocketTransport;
import org.sparkccl.transport.ucx.UcxTransport;
import org.sparkccl.transport.ucx.UcxUnavailableException;
import org.sparkccl.util.Backoff;

/**
 * A group of ranks that run collectives together, like an {@code ncclComm_t}.
 *
 * <p>Made from a {@link Bootstrap} (rank, rank count, allGather) and a {@link CclConfig}. Each
 * collective is split over {@code nChannels} rings; per channel a kernel thread moves slices
 * through FIFOs that the persistent proxy thread drains to, and fills from, the transport.
 * Collectives run in the order they are called. A failure anywhere (a peer that dies, a closed
 * connection, a stall past {@code timeout}, {@link #abort()}) fails the running collective and
 * every later call, and closes the connections so that the peers fail too.
 *
 * <pre>{@code
 * LocalBootstrap.Group group = LocalBootstrap.group(2);
 * // on each of two threads, r = 0 or 1:
 * try (Communicator comm = Communicator.create(group.rank(r), CclConfig.fromEnvironment());
 *     DeviceBuffer buf = HostDevice.INSTANCE.allocate(4 * 1024)) {
 *   comm.allReduce(buf, buf, 1024, DataType.FLOAT32, ReduceOp.SUM);
 * }
 * }</pre>
 */
public final class Communicator implements AutoCloseable {
  private static final Logger LOG = LogManager.getLogger(Communicator.class);


  private final int rank;
  private final int nRanks;
  private final CclConfig config;
  private final Device device;
  private final long timeoutNanos;
  private final CommChannel[] channels;
  private final ProxyThread proxy;
  private final Object launchLock = new Object();
  private final Tuner tuner;
  private final Object failLock = new Object();
  private final Set<Collective> pending = ConcurrentHashMap.newKeySet();
  private SocketTransport transport;
  /** The ring's UCX transport when it was chosen, else null (point-to-point stays on sockets). */
  private UcxTransport ucx;
  private PeerLinks peers;
  private String[] addresses;
  private long token;
  private final List<PeerCall> group = new ArrayList<>();
  private int groupDepth;
  private long seq;
  private long groups;
  private final CallChecker calls;
  private volatile CclException failure;
  private boolean closed;

  private Communicator(Bootstrap bootstrap, CclConfig config) {
    this.rank = bootstrap.rank();
    this.nRanks = bootstrap.nRanks();
    this.config = config;
    this.device = Devices.resolve(config.device());
    this.timeoutNanos = config.timeout().toNanos();
    this.proxy = new ProxyThread("sparkccl-proxy-r" + rank, this::fail);
    this.calls = new CallChecker(rank);
    this.tuner =
        new Tuner(
            config.hopLatencyUs(), config.treeHopLatencyUs(), config.linkGBps(), config.algo());
    this.channels = new CommChannel[config.nChannels()];
    try {
      for (int c = 0; c < channels.length; c++) {
        int id = c;
        channels[c] =
            new CommChannel(
                c, rank, config.stepSize(), guard(c), () -> assistProxy(id), proxy::wake,
                device);
        CommChannel ch = channels[c];
        ch.waiter.onStall(() -> announceStalled(ch));
      }
      if (nRanks > 1) {
        connect(bootstrap);
      }
      proxy.start();
    } catch (RuntimeException e) {
      release();
      throw e;
    }
    LOG.info(
        "rank {}/{} ready: device={} channels={} transport={}(nThreads={}, nSocksPerThread={},"
            + " qps={}) algo={} (ring or tree by the tuner: hop {} us, link {} GB/s) buffSize={}"
            + " stepSize={} timeout={}ms next={} prev={} listen={}",
        rank, nRanks, device, channels.length, ringTransport(), config.socketThreads(),
        config.socketsPerThread(), config.qpsPerConnection(), config.algo(),
        config.hopLatencyUs(), config.linkGBps(), config.buffSize(),
        config.stepSize(), config.timeout().toMillis(),
        (rank + 1) % nRanks, (rank - 1 + nRanks) % nRanks,
        transport == null ? "none" : transport.address());
  }

  /**
   * Forms a communicator: every rank of {@code bootstrap} must call this.
   *
   * @throws CclException when the ranks cannot connect within the timeout
   */
  public static Communicator create(Bootstrap bootstrap, CclConfig config) {
    Objects.requireNonNull(bootstrap, "bootstrap");
    Objects.requireNonNull(config, "config");
    EngineLogging.apply(config.debug());
    return new Communicator(bootstrap, config);
  }

  /**
   * A waiting kernel lends itself to the proxy, unless the proxy owns a transport's progress
   * (UCX: every UCX call on the proxy thread); then it only wakes the proxy for what it queued.
   */
  private boolean assistProxy(int channel) {
    if (proxy.ownsTransport()) {
      channels[channel].waiter.flushProxyWake();
      return false;
    }
    return proxy.assist();
  }

  private void connect(Bootstrap bootstrap) {
    String host = config.socketHost() != null ? config.socketHost() : bootstrap.localHost();
    // Sockets always: point-to-point links (send/recv, trees) use them with either ring transport.
    transport =
        SocketTransport.listen(
            host == null ? "127.0.0.1" : host, rank, config.socketThreads(),
            config.socketsPerThread());
    String ucxMissing = openUcx();
    byte[] address = transport.address().getBytes(StandardCharsets.UTF_8);
    byte[] ucxInfo = ucx == null ? new byte[0] : ucx.localInfo();
    ByteBuffer mine = ByteBuffer.allocate(12 + address.length + ucxInfo.length);
    mine.putLong(new SecureRandom().nextLong()).putInt(address.length).put(address).put(ucxInfo);
    byte[][] all = bootstrap.allGather(mine.array(), config.timeout());
    token = ByteBuffer.wrap(all[0]).getLong();
    addresses = new String[nRanks];
    byte[][] ucxInfos = new byte[nRanks][];
    List<Integer> withoutUcx = new ArrayList<>();
    for (int r = 0; r < nRanks; r++) {
      ByteBuffer b = ByteBuffer.wrap(all[r]);
      int length = b.getInt(8);
      addresses[r] = new String(all[r], 12, length, StandardCharsets.UTF_8);
      ucxInfos[r] = java.util.Arrays.copyOfRange(all[r], 12 + length, all[r].length);
      if (ucxInfos[r].length == 0) {
        withoutUcx.add(r);
      }
    }
    chooseTransport(withoutUcx, ucxMissing);
    int next = (rank + 1) % nRanks;
    int prev = (rank - 1 + nRanks) % nRanks;
    if (config.transport().equals("local")) {
      if (!(bootstrap instanceof LocalBootstrap)) {
        throw new IllegalArgumentException(
            "transport=local needs ranks that are threads of one JVM (LocalBootstrap); this rank"
                + " has " + bootstrap.getClass().getSimpleName());
      }
      connectLocal(bootstrap, next, prev);
    } else if (ucx == null || !connectUcx(bootstrap, next, prev, ucxInfos)) {
      connectSockets(next, prev);
    }
    peers =
        new PeerLinks(
            config.stepSize(),
            channels[0].waiter,
            peer ->
                transport.connect(
                    addresses[peer], peer, SocketTransport.P2P_CHANNEL, token, proxy.selector(),
                    proxy::wake, System.nanoTime() + timeoutNanos),
            transport.acceptPeers(token, nRanks, proxy.selector(), proxy::wake),
            calls::onAnnounce);
    for (CommChannel ch : channels) {
      ch.send.onAnnounce(call -> calls.onAnnounce(ch.send.peer(), call));
    }
  }

  /**
   * Opens UCX unless {@code transport=socket}; returns why it is missing, or null. A rank without
   * UCX still takes part in the bootstrap exchange, so that every rank reaches the same decision.
   */
  private String openUcx() {
    if ("socket".equals(config.transport()) || "local".equals(config.transport())) {
      return null;
    }
    Fifo[] sendFifos = new Fifo[channels.length];
    Fifo[] recvFifos = new Fifo[channels.length];
    for (CommChannel ch : channels) {
      sendFifos[ch.id] = ch.sendFifo;
      recvFifos[ch.id] = ch.recvFifo;
    }
    try {
      ucx = UcxTransport.open(rank, config.qpsPerConnection(), sendFifos, recvFifos);
      return null;
    } catch (UcxUnavailableException e) {
      return e.getMessage();
    } catch (CclException e) {
      // a worker or registration that failed here: this rank joins the exchange without UCX,
      // so every rank falls back together (or fails together with transport=ucx)
      return e.getMessage();
    } catch (LinkageError e) {
      // the Jucx jar itself is missing (an application that shipped only SparkCCL's own jars)
      return "the Jucx classes (org.openucx:jucx) are not on the classpath: " + e;
    }
  }

  /**
   * UCX when every rank has it ({@code auto}) or was told to use it ({@code ucx}, which fails
   * with how to install UCX when a rank lacks it); sockets otherwise. One INFO line says which.
   */
  private void chooseTransport(List<Integer> withoutUcx, String ucxMissing) {
    if (ucx != null && withoutUcx.isEmpty()) {
      return; // connectUcx logs the choice once the connections are made
    }
    if ("local".equals(config.transport())) {
      LOG.info("rank {}: ring transport local (transport=local: ranks are threads of one JVM)", rank);
      return;
    }
    String why = "transport=socket";
    if (!"socket".equals(config.transport())) {
      String ranks = "UCX did not load on rank(s) " + withoutUcx
          + (ucxMissing != null ? " (here: " + ucxMissing + ")" : "");
      if ("ucx".equals(config.transport())) {
        throw new CclException(
            "rank " + rank + ": transport=ucx but " + ranks + "; " + UcxTransport.INSTALL_HINT);
      }
      why = "transport=auto and " + ranks;
      if (ucx != null) {
        ucx.close();
        ucx = null;
      }
    }
    LOG.info("rank {}: ring transport socket ({})", rank, why);
  }

  private void connectSockets(int next, int prev) {
    String nextAddress = addresses[next];
    long deadline = System.nanoTime() + timeoutNanos;
    for (CommChannel ch : channels) {
      ch.send =
          transport.connect(
              nextAddress, next, ch.id, token, proxy.selector(), proxy::wake, deadline);
    }
    RecvConnection[] recvs =
        transport.accept(prev, channels.length, token, proxy.selector(), proxy::wake, deadline);
    for (CommChannel ch : channels) {
      ch.recv = recvs[ch.id];
    }
  }

  /**
   * Makes the UCX ring connections from the exchanged worker addresses and remote keys, then
   * exchanges every rank's outcome, so a failure on one rank (a remote key that fails to unpack,
   * an endpoint that cannot be made) is the same on every rank rather than a timeout elsewhere:
   * with {@code transport=ucx} every rank throws it, with {@code auto} every rank falls back to
   * sockets. From here on the proxy thread owns the worker.
   *
   * @return whether the ring runs over UCX
   */
  private boolean connectUcx(Bootstrap bootstrap, int next, int prev, byte[][] infos) {
    String error = "";
    try {
      for (CommChannel ch : channels) {
        ch.send = ucx.connectSend(next, ch.id, infos[next]);
        ch.recv = ucx.connectRecv(prev, ch.id, infos[prev]);
      }
    } catch (CclException e) {
      error = e.getMessage();
    }
    byte[][] outcomes =
        bootstrap.allGather(error.getBytes(StandardCharsets.UTF_8), config.timeout());
    for (int r = 0; r < nRanks; r++) {
      if (outcomes[r].length > 0) {
        String why =
            "setting up UCX failed on rank " + r + ": "
                + new String(outcomes[r], StandardCharsets.UTF_8);
        if ("ucx".equals(config.transport())) {
          throw new CclException("rank " + rank + ": " + why);
        }
        LOG.info("rank {}: ring transport socket (transport=auto and {})", rank, why);
        ucx.close(false);
        ucx = null;
        for (CommChannel ch : channels) {
          ch.send = null;
          ch.recv = null;
        }
        return false;
      }
    }
    String tls = System.getenv("UCX_TLS");
    LOG.info(
        "rank {}: ring transport ucx (transport={} and UCX set up on every rank); UCX_TLS={},"
            + " ib.qpsPerConnection={}; flush after receive skipped: receive slots are host"
            + " memory; point-to-point on sockets",
        rank, config.transport(), tls == null ? "unset (UCX default)" : tls,
        config.qpsPerConnection());
    proxy.setOwnedPoller(ucx::poll);
    ucx.onProxy(proxy::execute);
    return true;
  }

  /**
   * Ranks that are threads of this JVM: ring connections are in-memory pipes. On a GPU each
   * rank's blocks read the previous rank's send slots in place, so the pipes copy nothing; the
   * barrier makes sure every rank has published its channels before any looks them up.
   */
  private void connectLocal(Bootstrap bootstrap, int next, int prev) {
    boolean shared = device instanceof CudaDevice;
    for (CommChannel ch : channels) {
      ch.send = LocalPipe.sender(token, rank, next, ch.id, proxy::wake);
      ch.recv =
          LocalPipe.receiver(
              token, prev, rank, ch.id, proxy::wake, shared ? ch.recvFifo : null);
      LOCAL_CHANNELS.put(new LocalChannel(token, rank, ch.id), ch);
    }
    try {
      bootstrap.allGather(new byte[0], config.timeout());
      if (shared) {
        for (CommChannel ch : channels) {
          CommChannel sender = LOCAL_CHANNELS.get(new LocalChannel(token, prev, ch.id));
          ((CudaChannelKernel) ch.kernel).readSlotsOf((CudaChannelKernel) sender.kernel);
        }
      }
      bootstrap.allGather(new byte[0], config.timeout());
    } finally {
      // also when a rank timed out or the ranks sit on different GPUs: nothing stays behind
      for (CommChannel ch : channels) {
        LOCAL_CHANNELS.remove(new LocalChannel(token, rank, ch.id));
      }
    }
  }

  /** A channel of a rank of a communicator, for ranks of one JVM to find each other's. */
  private record LocalChannel(long token, int rank, int channel) {}

  private static final ConcurrentHashMap<LocalChannel, CommChannel> LOCAL_CHANNELS =
      new ConcurrentHashMap<>();

  /**
   * A kernel of {@code ch} has waited past the fast phase: if its collective is one that needs
   * it, tell the ring predecessor what this rank called (once per collective). Matching calls
   * rarely stall that long, so the normal path pays nothing.
   */
  private void announceStalled(CommChannel ch) {
    Collective coll = ch.current;
    if (coll == null || !coll.announceOnStall || channels[0].recv == null) {
      return;
    }
    if (calls.claimAnnouncement(coll.call.seq())) {
      channels[0].recv.announce(coll.call);
    }
  }


  private HostChannelKernel.Guard guard(int channel) {
    return new HostChannelKernel.Guard() {
      @Override
      public void checkAbort() {
        CclException f = failure;
        if (f != null) {
          throw aborted(channels[channel].currentOp(), f);
        }
      }

      @Override
      public long timeoutNanos() {
        return timeoutNanos;
      }

      @Override
      public String describe(boolean sending) {
        String peer =
            sending
                ? "waiting for rank " + (rank + 1) % nRanks + " to take data"
                : "waiting for data from rank " + (rank - 1 + nRanks) % nRanks;
        return "rank " + rank + ": " + channels[channel].currentOp() + ": " + peer + " (channel "
            + channel + ")";
      }
    };
  }

  public int rank() {
    return rank;
  }

  public int nRanks() {
    return nRanks;
  }

  public CclConfig config() {
    return config;
  }

  /** The transport of the ring connections: {@code ucx}, {@code socket}, or {@code none} alone. */
  public String ringTransport() {
    if (nRanks == 1) {
      return "none";
    }
    return ucx != null ? "ucx" : "local".equals(config.transport()) ? "local" : "socket";
  }

  /** Where this communicator's buffers live and its kernels run (setting {@code device}). */
  public Device device() {
    return device;
  }

  private DeviceBuffer buffer(String name, DeviceBuffer b, long count, DataType dtype) {
    return Arguments.buffer(name, b, count, dtype, device);
  }

  /**
   * Starts an allReduce: {@code recv[i] = op over ranks of send[i]} for {@code i < count}. {@code
   * send == recv} works in place.
   *
   * @return completes when this rank's part is done, or exceptionally with a {@link
   *     CclException} that names the rank, the peer and the operation
   * @throws IllegalArgumentException for a null or closed buffer, a negative count, a count that
   *     does not fit a buffer, or an op the dtype does not support
   * @throws CclAbortedException when the communicator has failed or was aborted
   */
  public CompletableFuture<Void> allReduceAsync(
      DeviceBuffer send, DeviceBuffer recv, long count, DataType dtype, ReduceOp op) {
    Arguments.checkOp(dtype, op);
    DeviceBuffer src = buffer("send", send, count, dtype);
    DeviceBuffer dst = buffer("recv", recv, count, dtype);
    return launch(
        CollectiveCall.Kind.ALL_REDUCE, count, dtype, op, 0, src, dst, 0, 0,
        (c, start, len) ->
            RingAllReduce.plan(c, rank, nRanks, start, len, dtype.size(), config.stepSize()));
  }

  /** Blocking {@link #allReduceAsync}. */
  public void allReduce(
      DeviceBuffer send, DeviceBuffer recv, long count, DataType dtype, ReduceOp op) {
    await(allReduceAsync(send, recv, count, dtype, op));
  }

  /**
   * Starts a broadcast: {@code recv[i] = send[i]} of rank {@code root}, for {@code i < count}.
   * Only the root reads {@code send}; {@code send == recv} works in place.
   */
  public CompletableFuture<Void> broadcastAsync(
      DeviceBuffer send, DeviceBuffer recv, long count, DataType dtype, int root) {
    Arguments.checkDtype(dtype);
    Arguments.checkRoot(root, nRanks);
    DeviceBuffer dst = buffer("recv", recv, count, dtype);
    DeviceBuffer src = rank == root ? buffer("send", send, count, dtype) : dst;
    return launch(
        CollectiveCall.Kind.BROADCAST, count, dtype, null, root, src, dst, 0, 0,
        (c, start, len) ->
            RingChain.broadcast(
                c, rank, nRanks, root, start, len, dtype.size(), config.stepSize()));
  }

  /** In-place broadcast of {@code buf}, like {@code ncclBcast}. */
  public CompletableFuture<Void> broadcastAsync(
      DeviceBuffer buf, long count, DataType dtype, int root) {
    return broadcastAsync(buf, buf, count, dtype, root);
  }

  /** Blocking in-place {@link #broadcastAsync}. */
  public void broadcast(DeviceBuffer buf, long count, DataType dtype, int root) {
    await(broadcastAsync(buf, buf, count, dtype, root));
  }

  /** Blocking {@link #broadcastAsync(DeviceBuffer, DeviceBuffer, long, DataType, int)}. */
  public void broadcast(
      DeviceBuffer send, DeviceBuffer recv, long count, DataType dtype, int root) {
    await(broadcastAsync(send, recv, count, dtype, root));
  }

  /**
   * Starts a reduce: on rank {@code root}, {@code recv[i] = op over ranks of send[i]}. Other
   * ranks do not touch {@code recv}, which may be {@code null} there.
   */
  public CompletableFuture<Void> reduceAsync(
      DeviceBuffer send, DeviceBuffer recv, long count, DataType dtype, ReduceOp op, int root) {
    Arguments.checkOp(dtype, op);
    Arguments.checkRoot(root, nRanks);
    DeviceBuffer src = buffer("send", send, count, dtype);
    DeviceBuffer dst = rank == root || recv != null ? buffer("recv", recv, count, dtype) : src;
    return launch(
        CollectiveCall.Kind.REDUCE, count, dtype, op, root, src, dst, 0, 0,
        (c, start, len) ->
            RingChain.reduce(c, rank, nRanks, root, start, len, dtype.size(), config.stepSize()));
  }

  /** Blocking {@link #reduceAsync}. */
  public void reduce(
      DeviceBuffer send, DeviceBuffer recv, long count, DataType dtype, ReduceOp op, int root) {
    await(reduceAsync(send, recv, count, dtype, op, root));
  }

  /**
   * Starts an allGather: {@code recv} gets {@code nRanks} blocks of {@code sendCount} elements,
   * block {@code k} being rank {@code k}'s {@code send}. In place when {@code send == recv}: this
   * rank's input is then block {@code rank} of {@code recv}, as in NCCL.
   */
  public CompletableFuture<Void> allGatherAsync(
      DeviceBuffer send, DeviceBuffer recv, long sendCount, DataType dtype) {
    Arguments.checkDtype(dtype);
    long total = Arguments.multiply(sendCount, nRanks, "sendCount");
    DeviceBuffer dst = buffer("recv", recv, total, dtype);
    boolean inPlace = send == recv;
    DeviceBuffer src = inPlace ? dst : buffer("send", send, sendCount, dtype);
    long srcBase = inPlace ? rank * sendCount : 0;
    return launch(
        CollectiveCall.Kind.ALL_GATHER, sendCount, dtype, null, 0, src, dst, srcBase,
        rank * sendCount,
        (c, start, len) ->
            RingGather.allGather(
                c, rank, nRanks, sendCount, start, len, srcBase, dtype.size(),
                config.stepSize()));
  }

  /** Blocking {@link #allGatherAsync}. */
  public void allGather(DeviceBuffer send, DeviceBuffer recv, long sendCount, DataType dtype) {
    await(allGatherAsync(send, recv, sendCount, dtype));
  }

  /**
   * Starts a reduceScatter: {@code send} holds {@code nRanks} blocks of {@code recvCount}
   * elements; {@code recv} gets the reduction over ranks of block {@code rank}. In place when
   * {@code send == recv}: the result is then written to block {@code rank} of the buffer.
   */
  public CompletableFuture<Void> reduceScatterAsync(
      DeviceBuffer send, DeviceBuffer recv, long recvCount, DataType dtype, ReduceOp op) {
    Arguments.checkOp(dtype, op);
    long total = Arguments.multiply(recvCount, nRanks, "recvCount");
    DeviceBuffer src = buffer("send", send, total, dtype);
    boolean inPlace = send == recv;
    DeviceBuffer dst = inPlace ? src : buffer("recv", recv, recvCount, dtype);
    long dstBase = inPlace ? rank * recvCount : 0;
    return launch(
        CollectiveCall.Kind.REDUCE_SCATTER, recvCount, dtype, op, 0, src, dst, rank * recvCount,
        dstBase,
        (c, start, len) ->
            RingGather.reduceScatter(
                c, rank, nRanks, recvCount, start, len, dstBase, dtype.size(),
                config.stepSize()));
  }

  /** Blocking {@link #reduceScatterAsync}. */
  public void reduceScatter(
      DeviceBuffer send, DeviceBuffer recv, long recvCount, DataType dtype, ReduceOp op) {
    await(reduceScatterAsync(send, recv, recvCount, dtype, op));
  }

  /**
   * Starts sending {@code count} elements of {@code buf} to rank {@code peer}, which must call
   * {@link #recvAsync} with the same count and dtype. Inside a group (see {@link #group()}) the
   * transfer starts with the group's other calls at its end; outside one it starts now, and two
   * ranks that both send large messages to each other before receiving can fill each other's
   * buffers and time out, as with NCCL: use a group.
   */
  public CompletableFuture<Void> sendAsync(DeviceBuffer buf, long count, DataType dtype, int peer) {
    return peerCall(true, buf, count, dtype, peer);
  }

  /** Starts receiving {@code count} elements from rank {@code peer} into {@code buf}. */
  public CompletableFuture<Void> recvAsync(DeviceBuffer buf, long count, DataType dtype, int peer) {
    return peerCall(false, buf, count, dtype, peer);
  }

  /** Blocking {@link #sendAsync}; not inside a group, where it would wait for the group's end. */
  public void send(DeviceBuffer buf, long count, DataType dtype, int peer) {
    await(sendAsync(buf, count, dtype, peer));
  }

  /** Blocking {@link #recvAsync}; not inside a group. */
  public void recv(DeviceBuffer buf, long count, DataType dtype, int peer) {
    await(recvAsync(buf, count, dtype, peer));
  }

  /**
   * Opens a group, like {@code ncclGroupStart}: sends and receives called until {@link
   * #groupEnd()} start together, so any mix of them completes without deadlock. Groups nest;
   * the outermost end launches. Collectives called inside run as usual.
   *
   * <pre>{@code
   * try (Communicator.Group g = comm.group()) {
   *   comm.sendAsync(out, n, DataType.FLOAT32, next);
   *   comm.recvAsync(in, n, DataType.FLOAT32, prev);
   * } // both done here
   * }</pre>
   */
  public Group group() {
    groupStart();
    return new Group();
  }

  /** A group as a resource: {@link #close()} is {@link #groupEnd()}. */
  public final class Group implements AutoCloseable {
    private Group() {}

    /** Ends the group and waits for its transfers. */
    @Override
    public void close() {
      await(groupEndAsync());
    }
  }

  /** Starts recording sends and receives (see {@link #group()}). */
  public void groupStart() {
    synchronized (launchLock) {
      checkUsable();
      groupDepth++;
    }
  }

  /** Ends a group: launches its transfers and waits for them. */
  public void groupEnd() {
    await(groupEndAsync());
  }

  /** Ends a group: launches its transfers; the future completes when all are done. */
  public CompletableFuture<Void> groupEndAsync() {
    synchronized (launchLock) {
      if (groupDepth == 0) {
        throw new IllegalStateException("groupEnd without groupStart");
      }
      if (--groupDepth > 0) {
        return CompletableFuture.completedFuture(null);
      }
      List<PeerCall> calls = List.copyOf(group);
      group.clear();
      return launchPeerCalls(calls);
    }
  }

  /** One send or receive, as recorded. */
  private record PeerCall(boolean send, DeviceBuffer buf, long count, DataType dtype, int peer,
      CompletableFuture<Void> done) {}

  private CompletableFuture<Void> peerCall(
      boolean send, DeviceBuffer buf, long count, DataType dtype, int peer) {
    Arguments.checkDtype(dtype);
    if (peer < 0 || peer >= nRanks || peer == rank) {
      throw new IllegalArgumentException(
          "peer=" + peer + " is invalid; expected another rank in 0.." + (nRanks - 1)
              + " (this is rank " + rank + ")");
    }
    DeviceBuffer b = buffer(send ? "send" : "recv", buf, count, dtype);
    synchronized (launchLock) {
      checkUsable();
      PeerCall call = new PeerCall(send, b, count, dtype, peer, new CompletableFuture<>());
      if (groupDepth > 0) {
        group.add(call);
        return call.done();
      }
      return launchPeerCalls(List.of(call));
    }
  }

  /** Launches sends and receives as one kernel task on channel 0's kernel thread. */
  private CompletableFuture<Void> launchPeerCalls(List<PeerCall> calls) {
    checkUsable();
    List<PeerCall> live = calls.stream().filter(c -> c.count() > 0).toList();
    if (live.isEmpty()) {
      calls.forEach(c -> c.done().complete(null));
      return CompletableFuture.completedFuture(null);
    }
    // Groups have their own numbering: ranks may run different numbers of them, while the
    // collectives' numbers must agree on every rank for the mismatch check.
    String what = "send/recv group #" + (++groups) + " (" + live.size() + " transfers)";
    live.forEach(c -> c.buf().retain());
    List<HostBuffer> staging = new ArrayList<>();
    List<Runnable> copyIn = new ArrayList<>();
    List<Runnable> copyOut = new ArrayList<>();
    Collective coll =
        new Collective(
            what,
            1,
            () -> {
              live.forEach(c -> c.buf().release());
              staging.forEach(HostBuffer::close);
            });
    pending.add(coll);
    // The group's future is the stage after the per-call futures completed, so that every one
    // of them is done when groupEnd returns.
    CompletableFuture<Void> all =
        coll.future.whenComplete(
        (v, e) -> {
          pending.remove(coll);
          for (PeerCall c : calls) {
            if (e == null) {
              c.done().complete(null);
            } else {
              c.done().completeExceptionally(e);
            }
          }
        });
    List<HostP2pKernel.Transfer> transfers = new ArrayList<>();
    for (PeerCall c : live) {
      PeerLinks.Link link = c.send() ? peers.sendTo(c.peer()) : peers.recvFrom(c.peer());
      long bytes = c.count() * c.dtype().size();
      long steps = (bytes + config.stepSize() - 1) / config.stepSize();
      CollectiveCall desc =
          new CollectiveCall(
              CollectiveCall.Kind.SEND_RECV, link.nextSeq++, c.count(), c.dtype(), null,
              c.send() ? c.peer() : rank);
      String where = "rank " + rank + ": " + what + ": " + (c.send() ? "sending to" : "receiving from")
          + " rank " + c.peer();
      if (c.send()) {
        proxy.enqueue(
            new SendProxyOp(link.send(), link.fifo, link.nextStep, steps, desc, timeoutNanos, where));
      } else {
        proxy.enqueue(
            new RecvProxyOp(
                link.recv(), link.fifo, link.nextStep, steps, desc, rank, timeoutNanos, where));
      }
      transfers.add(
          new HostP2pKernel.Transfer(
              c.send(), link.fifo, link.nextStep,
              hostSide(c, bytes, staging, copyIn, copyOut).memory(), 0, (int) bytes,
              "rank " + rank + ": " + what + ": "
                  + (c.send() ? "waiting for rank " + c.peer() + " to take data"
                      : "waiting for data from rank " + c.peer())));
      link.nextStep += steps;
    }
    CommChannel ch = channels[0];
    runOn(
        ch,
        coll,
        () -> {
          copyIn.forEach(Runnable::run);
          HostP2pKernel.run(transfers, ch.waiter, guard(0));
          copyOut.forEach(Runnable::run);
        });
    return all;
  }

  /**
   * The host memory a point-to-point transfer moves: the buffer itself on the host; for a GPU
   * buffer a staging copy, filled before the transfer (send) or copied out after it (recv). The
   * GPU's collectives have CUDA kernels; sends and receives are staged through the host.
   */
  private static HostBuffer hostSide(
      PeerCall c, long bytes, List<HostBuffer> staging, List<Runnable> copyIn,
      List<Runnable> copyOut) {
    if (c.buf() instanceof HostBuffer h) {
      return h;
    }
    HostBuffer s = HostDevice.INSTANCE.allocate(bytes);
    staging.add(s);
    ByteBuffer region = s.memory().slice(0, (int) bytes);
    if (c.send()) {
      copyIn.add(() -> c.buf().copyToHost(0, region.duplicate()));
    } else {
      copyOut.add(() -> c.buf().copyFromHost(region.duplicate(), 0));
    }
    return s;
  }

  private static void await(CompletableFuture<Void> f) {
    Backoff.briefly(f::isDone);
    try {
      f.join();
    } catch (CompletionException e) {
      if (e.getCause() instanceof RuntimeException r) {
        throw r;
      }
      throw e;
    }
  }

  /** Plans one channel's part, elements {@code [start, start + len)} of the per-rank count. */
  private interface Planner {
    ChannelPlan plan(int channel, long start, long len);
  }

  /**
   * Launches a collective on the channels, in call order. With one rank it is a copy of {@code
   * count} elements from {@code localSrc} to {@code localDst} (element offsets).
   */
  private CompletableFuture<Void> launch(
      CollectiveCall.Kind kind, long count, DataType dtype, ReduceOp op, int root,
      DeviceBuffer src, DeviceBuffer dst, long localSrc, long localDst, Planner planner) {
    synchronized (launchLock) {
      checkUsable();
      CollectiveCall call = new CollectiveCall(kind, ++seq, count, dtype, op, root);
      CclMismatchException announcedMismatch = nRanks > 1 ? calls.recordLaunch(call) : null;
      if (announcedMismatch != null) {
        fail(announcedMismatch);
        checkUsable();
      }

      if (count == 0) {
        return CompletableFuture.completedFuture(null);
      }
      // Trees run over point-to-point links, which are sockets; with the ring on UCX the tuner's
      // choice applies only when asked for explicitly (algo=tree). Tree collectives have host
      // kernels only; on a GPU every collective runs as a ring.
      boolean tree =
          nRanks > 1
              && (ucx == null || "tree".equals(config.algo()))
              && device == HostDevice.INSTANCE
              && tuner.choose(kind, count * dtype.size(), nRanks) == Tuner.Algorithm.TREE;
      // Tree and chain collectives can leave two mismatched ranks both waiting to receive; a
      // kernel stalled in one then announces the call to its ring predecessor (see
      // announceStalled). Ring allReduce, allGather and reduceScatter need no announcement:
      // every rank's first step sends to its successor, whose receive checks the header.
      boolean rooted = kind == CollectiveCall.Kind.BROADCAST || kind == CollectiveCall.Kind.REDUCE;
      boolean announce = CollectiveCall.CHECKED && nRanks > 1 && (tree || rooted);
      if (announce && rooted) {
        // A root may finish its part without ever waiting, so it could not announce on a
        // stall: broadcast and reduce announce at once (one small frame, nobody waits for it).
        calls.claimAnnouncement(call.seq());
        channels[0].recv.announce(call);
      }
      int used =
          nRanks == 1 || tree ? 1 : ChannelSplit.channels(count, dtype.size(), channels.length);
      src.retain();
      dst.retain();
      Collective coll =
          new Collective(
              call.what(),
              call,
              nRanks,
              announce,
              used,
              () -> {
                src.release();
                dst.release();
              });
      pending.add(coll);
      coll.future.whenComplete((v, e) -> pending.remove(coll));
      try {
        if (nRanks == 1) {
          int size = dtype.size();
          launchLocalCopy(src, dst, localSrc * size, localDst * size, count * size, coll);
        } else if (tree) {
          launchTree(src, dst, call, coll);
        } else {
          launchRing(src, dst, call, used, planner, coll);
        }
      } catch (RuntimeException e) {
        // A tree's first use of a point-to-point link connects it and can fail: the peers must
        // hear of it, and the collective must still complete and let go of the buffers.
        CclException c =
            e instanceof CclException ce
                ? ce
                : new CclException("rank " + rank + ": launching " + call.what() + " failed: " + e, e);
        fail(c);
        coll.launchFailed(used, c);
      }
      return coll.future;
    }
  }

  private void launchLocalCopy(
      DeviceBuffer src, DeviceBuffer dst, long srcOff, long dstOff, long bytes, Collective coll) {
    runOn(
        channels[0],
        coll,
        () -> {
          if (src == dst && srcOff == dstOff) {
            return;
          }
          if (dst instanceof CudaBuffer gpu) {
            gpu.copyFrom((CudaBuffer) src, srcOff, dstOff, bytes);
          } else {
            ((HostBuffer) dst)
                .memory()
                .put((int) dstOff, ((HostBuffer) src).memory(), (int) srcOff, (int) bytes);
          }
        });
  }

  /**
   * Launches a tree collective (allReduce: reduce up then broadcast down, rooted at rank 0;
   * broadcast: down only; reduce: up only) over point-to-point links, on channel 0's kernel.
   */
  private void launchTree(
      DeviceBuffer src, DeviceBuffer dst, CollectiveCall call, Collective coll) {
    CollectiveCall.Kind kind = call.kind();
    boolean up = kind != CollectiveCall.Kind.BROADCAST;
    boolean down = kind != CollectiveCall.Kind.REDUCE;
    Tree tree = new Tree(rank, nRanks, kind == CollectiveCall.Kind.ALL_REDUCE ? 0 : call.root());
    long bytes = call.count() * call.dtype().size();
    long slices = (bytes + config.stepSize() - 1) / config.stepSize();
    String where = "rank " + rank + ": " + coll.what + " (tree)";
    int parent = tree.parent();
    HostTreeKernel.Edge toParent = up && parent >= 0 ? treeEdge(true, parent, slices, call, where) : null;
    HostTreeKernel.Edge fromParent =
        down && parent >= 0 ? treeEdge(false, parent, slices, call, where) : null;
    int[] children = tree.children();
    HostTreeKernel.Edge[] fromChildren = new HostTreeKernel.Edge[up ? children.length : 0];
    HostTreeKernel.Edge[] toChildren = new HostTreeKernel.Edge[down ? children.length : 0];
    for (int i = 0; i < children.length; i++) {
      if (up) {
        fromChildren[i] = treeEdge(false, children[i], slices, call, where);
      }
      if (down) {
        toChildren[i] = treeEdge(true, children[i], slices, call, where);
      }
    }
    HostTreeKernel.Work work =
        new HostTreeKernel.Work(
            up, down, toParent, fromParent, fromChildren, toChildren,
            ((HostBuffer) src).memory(), ((HostBuffer) dst).memory(),
            bytes, call.dtype(), call.op(), nRanks, config.stepSize(), where);
    CommChannel ch = channels[0];
    runOn(ch, coll, () -> HostTreeKernel.run(work, ch.waiter, guard(0)));
  }

  /** A tree edge over the point-to-point link to or from {@code peer}, with its proxy op. */
  private HostTreeKernel.Edge treeEdge(
      boolean send, int peer, long slices, CollectiveCall call, String where) {
    PeerLinks.Link link = send ? peers.sendTo(peer) : peers.recvFrom(peer);
    if (send) {
      proxy.enqueue(
          new SendProxyOp(
              link.send(), link.fifo, link.nextStep, slices, call, timeoutNanos,
              where + ": sending to rank " + peer));
    } else {
      proxy.enqueue(
          new RecvProxyOp(
              link.recv(), link.fifo, link.nextStep, slices, call, rank, calls::launched,
              timeoutNanos,
              where + ": receiving from rank " + peer));
    }
    HostTreeKernel.Edge edge = new HostTreeKernel.Edge(link.fifo, peer, link.nextStep);
    link.nextStep += slices;
    return edge;
  }

  private void launchRing(
      DeviceBuffer src, DeviceBuffer dst, CollectiveCall call, int used, Planner planner,
      Collective coll) {
    for (int c = 0; c < used; c++) {
      CommChannel ch = channels[c];
      ChannelPlan plan =
          planner.plan(
              c, ChannelSplit.start(call.count(), used, c),
              ChannelSplit.length(call.count(), used, c));
      String where = "rank " + rank + ": " + coll.what;
      if (plan.sendSteps() > 0) {
        proxy.enqueue(
            new SendProxyOp(
                ch.send, ch.sendFifo, ch.sendBase, plan.sendSteps(), call, timeoutNanos,
                where + ": sending to rank " + ch.send.peer() + " (channel " + c + ")"));
      }
      if (plan.recvSteps() > 0) {
        proxy.enqueue(
            new RecvProxyOp(
                ch.recv, ch.recvFifo, ch.recvBase, plan.recvSteps(), call, rank, calls::launched,
                timeoutNanos,
                where + ": receiving from rank " + ch.recv.peer() + " (channel " + c + ")"));
      }
      ch.sendBase += plan.sendSteps();
      ch.recvBase += plan.recvSteps();
      ChannelWork work = new ChannelWork(plan, src, dst, call.dtype(), call.op(), nRanks);
      runOn(ch, coll, () -> ch.kernel.run(work));
    }
  }

  /**
   * Queues {@code work} on the channel's kernel thread as this collective's share, and marks the
   * proxy as having new operations (woken if the kernel parks before helping).
   */
  private void runOn(CommChannel ch, Collective coll, Runnable work) {
    ch.waiter.deferProxyWake();
    ch.kernelThread.submit(new ChannelTask(ch, coll, work));
    coll.submitted++;
  }

  /**
   * One channel's share of a collective on its kernel thread. It does not start once the
   * communicator has failed, and it always reports back to its {@link Collective}: after it ran,
   * after it failed, or (if the kernel thread stopped first) when cancelled.
   */
  private final class ChannelTask implements KernelTask {
    private final CommChannel ch;
    private final Collective coll;
    private final Runnable work;

    ChannelTask(CommChannel ch, Collective coll, Runnable work) {
      this.ch = ch;
      this.coll = coll;
      this.work = work;
    }

    @Override
    public void run() {
      ch.current = coll;
      try {
        CclException f = failure;
        if (f != null) {
          coll.channelDone(aborted(coll.what, f));
          return;
        }
        work.run();
        coll.channelDone(null);
      } catch (RuntimeException | Error e) {
        // Errors too (an OutOfMemoryError in a reduction): the kernel thread must live on and
        // the caller must get an answer, or the collective would never complete.
        CclException err =
            e instanceof CclException c
                ? c
                : new CclException(
                    "rank " + rank + ": " + coll.what + " failed: " + e, e);
        fail(err);
        coll.channelDone(err);
      } finally {
        ch.current = null;
      }
    }

    @Override
    public void cancel() {
      coll.channelDone(
          aborted(coll.what, failure != null ? failure : new CclException("communicator closed")));
    }
  }

  private CclAbortedException aborted(String what, CclException cause) {
    return new CclAbortedException(
        "rank " + rank + ": " + what + " failed: " + cause.getMessage(), cause);
  }

  private void checkUsable() {
    CclException f = failure;
    if (f != null) {
      throw new CclAbortedException(
          "rank " + rank + ": communicator is aborted: " + f.getMessage(), f);
    }
    if (closed) {
      throw new IllegalStateException("rank " + rank + ": communicator is closed");
    }
  }

  /**
   * Makes every pending and future call on this communicator fail at once, and closes its
   * connections so that the other ranks fail too. Safe from any thread; idempotent. Call {@link
   * #close()} afterwards to release resources.
   */
  public void abort() {
    fail(new CclAbortedException("rank " + rank + ": communicator aborted by abort()", null));
  }

  /**
   * The sticky failure: first one wins; everything pending is woken and fails, and the previous
   * rank of every ring is told why, so the cause travels around the ring to every rank.
   */
  private void fail(RuntimeException e) {
    CclException err =
        e instanceof CclException c ? c : new CclException("rank " + rank + ": " + e, e);
    synchronized (failLock) {
      if (failure != null) {
        return;
      }
      failure = err;
    }
    if (e instanceof CclAbortedException && e.getCause() == null) {
      LOG.info("{}", err.getMessage());
    } else {
      LOG.error("rank {}: communicator failed: {}", rank, err.getMessage());
    }
    proxy.dropAll();
    for (CommChannel ch : channels) {
      if (ch != null) {
        ch.abort();
      }
    }
    proxy.runExclusive(
        () -> {
          for (CommChannel ch : channels) {
            if (ch != null) {
              ch.notifyPeers(true, err.getMessage());
            }
          }
          if (peers != null) {
            peers.notifyPeers(true, err.getMessage());
          }
        });
  }

  /** Whether the communicator has failed or was aborted. */
  public boolean isAborted() {
    return failure != null;
  }

  /**
   * Waits for pending collectives (up to the timeout), then stops every thread, closes every
   * socket and frees every FIFO. Idempotent.
   */
  @Override
  public void close() {
    synchronized (launchLock) {
      if (closed) {
        return;
      }
      closed = true;
    }
    if (failure == null) {
      drain();
    }
    release();
  }

  private void drain() {
    long deadline = System.nanoTime() + timeoutNanos;
    for (Collective c : new ArrayList<>(pending)) {
      try {
        c.future.get(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
      } catch (TimeoutException e) {
        fail(new CclTimeoutException("rank " + rank + ": close: collectives still running"));
        return;
      } catch (ExecutionException e) {
        return;
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
    }
    while (!proxy.isIdle() && failure == null) {
      if (System.nanoTime() > deadline) {
        fail(new CclTimeoutException("rank " + rank + ": close: sends still in flight"));
        return;
      }
      try {
        Thread.sleep(1);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
    }
  }

  private void release() {
    if (failure == null) {
      for (CommChannel ch : channels) {
        if (ch != null) {
          ch.notifyPeers(false, "rank " + rank + " closed its communicator");
        }
      }
      if (peers != null) {
        peers.notifyPeers(false, "rank " + rank + " closed its communicator");
      }
    }
    proxy.dropAll();
    proxy.close();
    if (ucx != null) {
      // before any FIFO is freed: see UcxTransport.close
      ucx.close(failure != null);
    }
    boolean stopped = true;
    for (CommChannel ch : channels) {
      if (ch != null) {
        ch.abort();
        stopped &= ch.release(10_000);
      }
    }
    if (peers != null) {
      peers.close(stopped);
    }
    if (transport != null) {
      transport.close();
    }
    if (!pending.isEmpty()) {
      LOG.error(
          "rank {}: {} collective(s) never finished because a kernel thread did not stop; their"
              + " buffers stay marked in use", rank, pending.size());
    }
  }

}
