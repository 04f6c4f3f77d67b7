package org.sparkccl.comm;

import java.io.IOException;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import org.sparkccl.CclException;
import org.sparkccl.bootstrap.Bootstrap;
import org.sparkccl.memory.SharedFile;
import org.sparkccl.transport.p2p.CallBoard;
import org.sparkccl.transport.p2p.ChannelHandles;
import org.sparkccl.transport.p2p.DirectFifoKernel;
import org.sparkccl.transport.p2p.EdgeKind;
import org.sparkccl.transport.p2p.FifoHandle;
import org.sparkccl.transport.p2p.SameHostInfo;

/**
 * The ring with NCCL's per-peer choice of transport: each edge between two ranks of one host whose
 * kernels can share FIFOs is direct ({@link EdgeKind#PEER} where the sender's GPU reaches the
 * receiver's and {@code p2p=auto}, else {@link EdgeKind#SHM}: shared host memory, for GPU kernels
 * and host-memory kernels alike), every other edge uses the network transport it wraps. The network
 * transport is connected on every edge all the same: failure and close notices and announced calls
 * travel over it, so the proxy's control paths do not change. Where a kernel offers a {@link
 * CallBoard} on its direct edges (host memory), neighbours post their calls there instead of
 * announcing them ({@link NeighbourCalls}).
 *
 * <p>It works below the bootstrap interface: any bootstrap (threads, processes, Spark's barrier
 * tasks) gets the same decision. The ranks agree in three bootstrap rounds: whether each sender's
 * GPU reaches the next rank's, the receivers' FIFO handles, and a barrier after which the shared
 * files lose their names.
 */
final class SameHostRing implements RingTransport {
  private final RingTransport network;
  private final DirectFifoKernel[] kernels;
  private final SameHostInfo local;
  private EdgeKind sendKind = EdgeKind.NET;
  private EdgeKind recvKind = EdgeKind.NET;
  private boolean everyEdgeDirect;
  private boolean started;
  private CommChannel[] channels = new CommChannel[0];
  private CommContext connected;

  /**
   * @param kernels the channels' kernels, in channel order
   */
  SameHostRing(RingTransport network, CommContext ctx, DirectFifoKernel[] kernels) {
    this.network = network;
    this.kernels = kernels.clone();
    boolean shm = Files.isDirectory(SharedFile.DIRECTORY);
    this.local =
        new SameHostInfo(
            HostIdentity.local() + SHM_IDENTITY,
            ProcessHandle.current().pid(),
            shm ? kernels[0].deviceId() : "",
            ctx.config.p2p());
  }

  /**
   * The shared-memory mount, so that containers of one kernel with separate {@code /dev/shm} do not
   * count as one host. Read once per process: it cannot change while the process runs.
   */
  private static final String SHM_IDENTITY = shmIdentity();

  private static String shmIdentity() {
    try {
      return "/shm:" + Files.getAttribute(SharedFile.DIRECTORY, "unix:dev");
    } catch (IOException | UnsupportedOperationException | IllegalArgumentException e) {
      // no /dev/shm, or a file system without the unix view: ranks with the same boot id then
      // count as one host; if they are not, opening the receiver's shared-memory file fails and
      // the connection fails over to the next transport candidate
      return "";
    }
  }

  @Override
  public String name() {
    if (!sendKind.direct() && !recvKind.direct()) {
      return network.name();
    }
    List<String> parts = new ArrayList<>();
    for (EdgeKind k : new EdgeKind[] {sendKind, recvKind}) {
      String n = k == EdgeKind.NET ? network.name() : k == EdgeKind.PEER ? "p2p" : "shm";
      if (!parts.contains(n)) {
        parts.add(n);
      }
    }
    return String.join("+", parts);
  }

  @Override
  public byte[] localInfo() {
    byte[] net = network.localInfo();
    if (net == null) {
      return null;
    }
    byte[] mine = local.encode();
    return ByteBuffer.allocate(4 + net.length + mine.length)
        .putInt(net.length)
        .put(net)
        .put(mine)
        .array();
  }

  @Override
  public String unavailableReason() {
    return network.unavailableReason();
  }

  @Override
  public String installHint() {
    return network.installHint();
  }

  @Override
  public void useSecret(byte[] secret) {
    network.useSecret(secret);
  }

  @Override
  public boolean confirmsConnect() {
    return true; // opening another rank's FIFO can fail on one rank alone
  }

  @Override
  public long tunedUpTo() {
    return network.tunedUpTo();
  }

  @Override
  public void connect(
      CommContext ctx, Bootstrap bootstrap, long token, int next, int prev, byte[][] infos) {
    int n = infos.length;
    channels = ctx.channels;
    connected = ctx;
    byte[][] netInfos = new byte[n][];
    SameHostInfo[] hosts = new SameHostInfo[n];
    for (int r = 0; r < n; r++) {
      split(ctx.rank, r, infos[r], netInfos, hosts);
    }
    String error = null;
    try {
      network.connect(ctx, bootstrap, token, next, prev, netInfos);
    } catch (RuntimeException e) {
      error = String.valueOf(e.getMessage());
    }
    // round 1: can this rank's GPU write into the next rank's?
    boolean candidate = n > 1 && EdgeKind.of(local, hosts[next], true).direct();
    boolean reaches = false;
    try {
      reaches = candidate && error == null && kernels[0].reaches(hosts[next].deviceId());
    } catch (RuntimeException e) {
      error = "asking whether this GPU reaches rank " + next + "'s failed: " + e.getMessage();
    }
    byte[][] reach =
        bootstrap.allGather(new byte[] {(byte) (reaches ? 1 : 0)}, ctx.config.timeout());
    EdgeKind send = n > 1 ? EdgeKind.of(local, hosts[next], reaches) : EdgeKind.NET;
    EdgeKind recv =
        n > 1
            ? EdgeKind.of(hosts[prev], local, reach[prev].length == 1 && reach[prev][0] == 1)
            : EdgeKind.NET;
    // round 2: the receive FIFOs of direct edges
    FifoHandle[] handles = new FifoHandle[kernels.length];
    if (recv.direct() && error == null) {
      try {
        for (int c = 0; c < kernels.length; c++) {
          String name = String.format("sparkccl-%016x-r%d-c%d", token, ctx.rank, c);
          handles[c] = kernels[c].exportRecv(recv, name);
        }
      } catch (RuntimeException e) {
        error = "exporting the receive FIFOs failed: " + e.getMessage();
      }
    }
    byte[][] published =
        bootstrap.allGather(
            error == null ? ChannelHandles.encode(handles) : ChannelHandles.failed(),
            ctx.config.timeout());
    if (send.direct() && error == null) {
      try {
        FifoHandle[] theirs = ChannelHandles.decode(published[next], kernels.length);
        for (int c = 0; c < kernels.length; c++) {
          if (theirs[c] == null) {
            throw new IllegalArgumentException("it exported no receive FIFO for channel " + c);
          }
          kernels[c].importSend(theirs[c]);
        }
      } catch (RuntimeException e) {
        error = "opening rank " + next + "'s receive FIFOs failed: " + e.getMessage();
      }
    }
    // round 3: every sender has mapped its file, so the names can go
    bootstrap.allGather(new byte[0], ctx.config.timeout());
    for (DirectFifoKernel k : kernels) {
      k.unlinkExported();
    }
    if (error != null) {
      for (DirectFifoKernel k : kernels) {
        k.dropDirect();
      }
      throw new CclException("rank " + ctx.rank + ": " + error);
    }
    sendKind = send;
    recvKind = recv;
    everyEdgeDirect = everyEdgeDirect(hosts, reach);
    int onDevice = ranksOnDevice(hosts);
    for (DirectFifoKernel k : kernels) {
      k.fitGrid(onDevice, kernels.length);
      // PEER only: its slots are device memory that both ends opened, which CUDA refuses between
      // MIG instances (one bus id, separate devices); an SHM edge could join two of them
      k.peersOnThisDevice(
          recv == EdgeKind.PEER && hosts[prev].deviceId().equals(local.deviceId()),
          send == EdgeKind.PEER && hosts[next].deviceId().equals(local.deviceId()));
      k.watchPeers(recv.direct() ? hosts[prev].pid() : -1, send.direct() ? hosts[next].pid() : -1);
    }
    for (CommChannel ch : ctx.channels) {
      ch.directSend = send.direct();
      ch.directRecv = recv.direct();
    }
    CallBoard prevBoard = recv.direct() ? kernels[0].recvBoard() : null;
    CallBoard nextBoard = send.direct() ? kernels[0].sendBoard() : null;
    if (ctx.calls.checks() && (prevBoard != null || nextBoard != null)) {
      ctx.neighbours = new NeighbourCalls(ctx.rank, prevBoard, nextBoard);
    }
  }

  /**
   * Whether every rank's send edge is direct, from what round 1 gave every rank alike (a direct
   * edge that then fails to open fails the whole connect).
   */
  private static boolean everyEdgeDirect(SameHostInfo[] hosts, byte[][] reach) {
    int n = hosts.length;
    if (n < 2) {
      return false;
    }
    for (int r = 0; r < n; r++) {
      boolean reaches = reach[r].length == 1 && reach[r][0] == 1;
      if (!EdgeKind.of(hosts[r], hosts[(r + 1) % n], reaches).direct()) {
        return false;
      }
    }
    return true;
  }

  @Override
  public boolean inMemory() {
    return everyEdgeDirect;
  }

  /** Its network edges (to other hosts, or where memory cannot be shared) may be sockets. */
  @Override
  public boolean overSockets() {
    return !everyEdgeDirect && network.overSockets();
  }

  /** Ranks of the communicator, this one included, whose kernels run on this rank's GPU. */
  private int ranksOnDevice(SameHostInfo[] hosts) {
    int n = 0;
    for (SameHostInfo h : hosts) {
      if (h.host().equals(local.host()) && h.deviceId().equals(local.deviceId())) {
        n++;
      }
    }
    return Math.max(1, n);
  }

  /** Splits rank {@code r}'s info into the network's part and the same-host description. */
  private static void split(int rank, int r, byte[] info, byte[][] netInfos, SameHostInfo[] hosts) {
    try {
      ByteBuffer in = ByteBuffer.wrap(info);
      int len = in.getInt();
      if (len < 0 || len > in.remaining()) {
        throw new BufferUnderflowException();
      }
      netInfos[r] = new byte[len];
      in.get(netInfos[r]);
      byte[] rest = new byte[in.remaining()];
      in.get(rest);
      hosts[r] = SameHostInfo.decode(rest);
    } catch (BufferUnderflowException | IllegalArgumentException e) {
      throw new CclException(
          "rank " + rank + ": rank " + r + " sent a malformed same-host ring description: " + e);
    }
  }

  @Override
  public void start(CommContext ctx) {
    started = true;
    network.start(ctx);
  }

  @Override
  public void close(boolean afterFailure) {
    network.close(afterFailure);
    if (!started) {
      // another rank failed to connect: the ring falls back to the next candidate, which makes
      // its own direct FIFOs (the kernels free theirs when the communicator closes otherwise)
      for (DirectFifoKernel k : kernels) {
        k.dropDirect();
      }
      sendKind = EdgeKind.NET;
      recvKind = EdgeKind.NET;
      if (connected != null) {
        connected.neighbours = null;
      }
      for (CommChannel ch : channels) {
        ch.directSend = false;
        ch.directRecv = false;
      }
    }
  }

  @Override
  public String describe(CommContext ctx) {
    String net = network.describe(ctx);
    return "send edge "
        + sendKind.name().toLowerCase(java.util.Locale.ROOT)
        + ", receive edge "
        + recvKind.name().toLowerCase(java.util.Locale.ROOT)
        + (kernels[0].blocks() > 1 ? ", " + kernels[0].blocks() + " CUDA blocks per channel" : "")
        + (net.isEmpty() ? "" : "; " + net);
  }
}
