package org.sparkccl.comm;

import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.logging.log4j.Logger;
import org.sparkccl.CclException;
import org.sparkccl.auth.ChallengeResponse;
import org.sparkccl.bootstrap.Bootstrap;
import org.sparkccl.config.IdleMode;
import org.sparkccl.config.Transport;
import org.sparkccl.device.HostDevice;
import org.sparkccl.idle.AutoIdle;
import org.sparkccl.kernel.ChannelKernel;
import org.sparkccl.kernel.HostChannelKernel;
import org.sparkccl.transport.p2p.DirectFifoKernel;
import org.sparkccl.transport.shm.SharedPeerFifos;
import org.sparkccl.transport.shm.SharedRingFifos;
import org.sparkccl.transport.socket.ListenAddress;
import org.sparkccl.transport.socket.SocketTransport;
import org.sparkccl.util.EngineLog;

/**
 * Connects the ranks of a communicator, as NCCL's {@code initTransportsRank} does: opens the socket
 * listener (point-to-point links always use it) and the candidate ring transports, lets every rank
 * publish its addresses through the bootstrap, then connects the ring over the first candidate that
 * every rank has. Every rank reaches the same decision from the same exchange.
 *
 * <p>{@code transport=auto} tries the in-memory ring when every rank runs in this JVM (host
 * kernels), then UCX, then sockets. An explicit transport that some rank lacks fails on every rank
 * with the reason and how to fix it.
 */
final class TransportSelector {
  private static final Logger LOG = EngineLog.logger(TransportSelector.class);

  /** Whether this process has said that encryption moved {@code auto} off UCX. */
  private static final AtomicBoolean SAID_UCX_SKIPPED = new AtomicBoolean();

  private final CommContext ctx;
  private final Bootstrap bootstrap;

  private TransportSelector(CommContext ctx, Bootstrap bootstrap) {
    this.ctx = ctx;
    this.bootstrap = bootstrap;
  }

  /** Connects {@code ctx}'s ranks and returns the links; throws {@link CclException}. */
  static Links connect(CommContext ctx, Bootstrap bootstrap) {
    return new TransportSelector(ctx, bootstrap).connect();
  }

  private Links connect() {
    String host =
        ListenAddress.choose(
            ctx.config.socketHost(), ctx.config.socketIfname(), bootstrap.localHost());
    SocketTransport sockets =
        SocketTransport.listen(
            host, ctx.rank, ctx.config.socketThreads(), ctx.config.socketsPerThread(), ctx.idle);
    List<RingTransport> candidates = new ArrayList<>();
    try {
      candidates.addAll(candidates(sockets));
      Exchange ex = exchange(sockets, candidates);
      byte[] shared = bootstrap.sharedSecret();
      byte[] secret = shared == null ? ex.secret : ChallengeResponse.bind(shared, ex.secret);
      sockets.useSecret(secret, ctx.config.encrypt());
      candidates.forEach(c -> c.useSecret(secret));
      ctx.settleIdle(ex.ranksOnHost);
      RingTransport ring = chooseAndConnect(candidates, ex);
      PeerLinks peers = peerLinks(sockets, ex);
      long proxyMin =
          CollectiveLauncher.proxyMinBytes(
              ctx.config.ringProxyMinBytes(),
              ex.spin.everyRank() && ex.spin.coresToSpare(),
              ring.overSockets());
      return new Links(sockets, ring, peers, ex.spin.everyRank(), proxyMin);
    } catch (RuntimeException e) {
      candidates.forEach(c -> c.close(false));
      sockets.close();
      throw e;
    }
  }

  /**
   * The ring transports to try, in order of preference. Only sockets encrypt, so with {@code
   * encrypt=true} {@code auto} leaves UCX out (saying so once per process) and {@code ucx} is
   * refused.
   */
  private List<RingTransport> candidates(SocketTransport sockets) {
    boolean encrypt = ctx.config.encrypt();
    return switch (ctx.config.transport()) {
      case SOCKET -> List.of(new SocketRing(sockets));
      case UCX -> {
        if (encrypt) {
          throw new CclException(
              "rank "
                  + ctx.rank
                  + ": transport=ucx with encrypt=true: the UCX transport does not encrypt;"
                  + " use transport=socket or transport=auto (which encrypt), or encrypt=false");
        }
        yield List.of(new UcxRing(ctx));
      }
      case LOCAL -> List.of(new LocalRing());
      case AUTO -> {
        if (ringInMemory()) {
          yield List.of(new LocalRing());
        }
        if (encrypt) {
          if (SAID_UCX_SKIPPED.compareAndSet(false, true)) {
            LOG.info(
                "encrypt=true: transport=auto uses the socket transport, which encrypts;"
                    + " UCX does not and is skipped");
          }
          yield sameHost(List.of(new SocketRing(sockets)));
        }
        yield sameHost(List.of(new UcxRing(ctx), new SocketRing(sockets)));
      }
    };
  }

  /**
   * Whether every rank runs in this JVM (threads, or the barrier tasks of one Spark executor) with
   * host kernels: their slots then pass through memory ({@link LocalRing}) instead of a loopback
   * network stack, and no UCX context is opened; GPU kernels keep the direct edges of {@link
   * #sameHost}. Every rank takes part in the one small exchange (this JVM's identity and whether
   * its kernels are host kernels) and reaches the same answer from it, whatever its own kernels.
   */
  private boolean ringInMemory() {
    byte[] mine = Arrays.copyOf(LocalRing.thisJvm(), Long.BYTES + 1);
    mine[Long.BYTES] = (byte) (ctx.channels[0].kernel.readsSenderSlots() ? 0 : 1);
    byte[][] all = bootstrap.allGather(mine, ctx.config.timeout());
    for (byte[] theirs : all) {
      if (!Arrays.equals(theirs, all[0])) {
        return false;
      }
    }
    return all[0].length == mine.length && all[0][Long.BYTES] == 1;
  }

  /**
   * With GPU kernels that can share FIFOs, each network candidate also takes the edges between
   * ranks of one host directly ({@link SameHostRing}), like NCCL's P2P and SHM transports.
   */
  private List<RingTransport> sameHost(List<RingTransport> network) {
    DirectFifoKernel[] kernels = new DirectFifoKernel[ctx.channels.length];
    boolean hostMemory = false;
    for (int c = 0; c < kernels.length; c++) {
      ChannelKernel kernel = ctx.channels[c].kernel;
      if (kernel instanceof HostChannelKernel h && allowsShm()) {
        kernels[c] = sharedRing(h);
        hostMemory = true;
      } else if (kernel instanceof DirectFifoKernel k) {
        kernels[c] = k;
      } else {
        return network;
      }
    }
    List<RingTransport> out = new ArrayList<>();
    for (RingTransport t : network) {
      out.add(new SameHostRing(t, ctx, kernels));
    }
    if (hostMemory) {
      // a full /dev/shm fails the shared candidates on every rank alike: the plain network
      // transports follow, so the communicator still forms
      out.addAll(network);
    }
    return out;
  }

  /** A host-memory channel's direct ring edges through shared memory ({@code shm=auto}). */
  private SharedRingFifos sharedRing(HostChannelKernel kernel) {
    return new SharedRingFifos(
        kernel,
        ctx.config.stepSize(),
        ctx.rank,
        ctx.nRanks,
        ctx.calls.checks(),
        ctx.calls::launched);
  }

  /**
   * What every rank published: rank 0's token (names the communicator inside a JVM) and secret
   * (which every data connection proves), socket addresses, each candidate's info; and how many
   * ranks named the same host as this one (for {@code idle=auto}); each rank's host and whether it
   * allows shared-memory edges ({@link #sharedFifos}).
   */
  private record Exchange(
      long token,
      byte[] secret,
      String[] addresses,
      byte[][][] infos,
      int ranksOnHost,
      String[] hosts,
      boolean[] allowsShm,
      Spin spin) {}

  /**
   * Whether every rank's waits spin while work is in flight, and whether every rank's host has
   * twice the cores its ranks' polling threads take ({@link AutoIdle#sparesCores}): the same answer
   * on every rank.
   */
  private record Spin(boolean everyRank, boolean coresToSpare) {}

  private Exchange exchange(SocketTransport sockets, List<RingTransport> candidates) {
    byte[] address = sockets.address().getBytes(StandardCharsets.UTF_8);
    byte[] secret = ctx.rank == 0 ? ChallengeResponse.newSecret() : new byte[0];
    byte[] host = HostIdentity.local().getBytes(StandardCharsets.UTF_8);
    int size = 8 + 4 + secret.length + 4 + address.length + 4 + 4 + host.length + 2 + IDLE_BYTES;
    byte[][] mine = new byte[candidates.size()][];
    for (int i = 0; i < mine.length; i++) {
      mine[i] = candidates.get(i).localInfo();
      size += 4 + (mine[i] == null ? 0 : mine[i].length);
    }
    ByteBuffer out = ByteBuffer.allocate(size);
    out.putLong(new SecureRandom().nextLong()).putInt(secret.length).put(secret);
    out.putInt(address.length).put(address);
    out.putInt(mine.length);
    for (byte[] info : mine) {
      out.putInt(info == null ? -1 : info.length);
      if (info != null) {
        out.put(info);
      }
    }
    out.putInt(host.length).put(host);
    out.put((byte) (ctx.config.encrypt() ? 1 : 0));
    out.put((byte) (allowsShm() ? 1 : 0));
    out.put((byte) ctx.config.idle().ordinal());
    out.putInt(ctx.pollingThreadsPerRank());
    out.putInt(CommContext.availableCores()).putInt(ctx.config.idleCpusPerRank());
    byte[][] all = bootstrap.allGather(out.array(), ctx.config.timeout());
    String[] addresses = new String[ctx.nRanks];
    byte[][][] infos = new byte[candidates.size()][ctx.nRanks][];
    long[] tokens = new long[ctx.nRanks];
    byte[][] secrets = new byte[ctx.nRanks][];
    int ranksOnHost = 0;
    String[] hosts = new String[ctx.nRanks];
    boolean[] allowsShm = new boolean[ctx.nRanks];
    int[][] idleInputs = new int[ctx.nRanks][];
    for (int r = 0; r < ctx.nRanks; r++) {
      ByteBuffer in = ByteBuffer.wrap(all[r]);
      try {
        tokens[r] = in.getLong();
        secrets[r] = new byte[checkedLength(in, r)];
        in.get(secrets[r]);
        parse(in, r, candidates.size(), addresses, infos);
        byte[] h = new byte[checkedLength(in, r)];
        in.get(h);
        hosts[r] = new String(h, StandardCharsets.UTF_8);
        if (Arrays.equals(h, host)) {
          ranksOnHost++;
        }
        boolean theirs = in.get() != 0;
        if (theirs != ctx.config.encrypt()) {
          // one side would seal and the other read the records as plain bytes: refuse by name
          throw new CclException(
              "rank "
                  + ctx.rank
                  + " has encrypt="
                  + ctx.config.encrypt()
                  + " but rank "
                  + r
                  + " has encrypt="
                  + theirs
                  + "; expected every rank to have the same encrypt setting");
        }
        allowsShm[r] = in.get() != 0;
        idleInputs[r] = new int[] {in.get(), in.getInt(), in.getInt(), in.getInt()};
      } catch (BufferUnderflowException e) {
        throw new CclException(
            "rank "
                + ctx.rank
                + ": rank "
                + r
                + " sent a truncated address exchange of "
                + all[r].length
                + " bytes");
      }
    }
    if (secrets[0].length != ChallengeResponse.SECRET_BYTES) {
      throw new CclException(
          "rank "
              + ctx.rank
              + ": rank 0 sent a secret of "
              + secrets[0].length
              + " bytes; expected "
              + ChallengeResponse.SECRET_BYTES);
    }
    return new Exchange(
        tokens[0],
        secrets[0],
        addresses,
        infos,
        ranksOnHost,
        hosts,
        allowsShm,
        spin(hosts, idleInputs));
  }

  /** What a rank sends for {@link #spin}: idle mode, polling threads, cores, cap. */
  private static final int IDLE_BYTES = 1 + 4 + 4 + 4;

  /**
   * Whether every rank's waits spin while work is in flight, and every rank has cores to spare,
   * from each rank's idle mode, polling threads, cores and cap, and the ranks on its host.
   */
  private Spin spin(String[] hosts, int[][] idleInputs) {
    IdleMode[] modes = IdleMode.values();
    Map<String, Integer> ranksOn = HostIdentity.ranksPerHost(hosts);
    boolean everyRank = true;
    boolean coresToSpare = true;
    for (int r = 0; r < hosts.length; r++) {
      int[] in = idleInputs[r];
      if (in[0] < 0 || in[0] >= modes.length) {
        throw new CclException(
            "rank "
                + ctx.rank
                + ": rank "
                + r
                + " sent idle mode "
                + in[0]
                + "; expected 0.."
                + (modes.length - 1));
      }
      int onHost = ranksOn.get(hosts[r]);
      everyRank &= AutoIdle.spinsWhenBusy(modes[in[0]], onHost, in[1], in[2], in[3]);
      coresToSpare &= AutoIdle.sparesCores(onHost, in[1], in[2], in[3]);
    }
    return new Spin(everyRank, coresToSpare);
  }

  /** Whether this rank may share point-to-point FIFOs with ranks of its host at all. */
  private boolean allowsShm() {
    return ctx.config.shm() && ctx.device == HostDevice.INSTANCE && ctx.nRanks > 1;
  }

  /** Reads rank {@code r}'s addresses and transport infos. */
  private void parse(ByteBuffer in, int r, int nCandidates, String[] addresses, byte[][][] infos) {
    {
      byte[] a = new byte[checkedLength(in, r)];
      in.get(a);
      addresses[r] = new String(a, StandardCharsets.UTF_8);
      int n = in.getInt();
      if (n != nCandidates) {
        throw new CclException(
            "rank "
                + ctx.rank
                + ": rank "
                + r
                + " offers "
                + n
                + " ring transports, this rank "
                + nCandidates
                + "; expected every rank to have the same transport setting");
      }
      for (int i = 0; i < n; i++) {
        if (in.getInt(in.position()) < 0) {
          in.getInt(); // this rank lacks candidate i
        } else {
          infos[i][r] = new byte[checkedLength(in, r)];
          in.get(infos[i][r]);
        }
      }
    }
  }

  private int checkedLength(ByteBuffer in, int fromRank) {
    int len = in.getInt();
    if (len < 0 || len > in.remaining()) {
      throw new CclException(
          "rank "
              + ctx.rank
              + ": rank "
              + fromRank
              + " sent a field of "
              + len
              + " bytes with "
              + in.remaining()
              + " left; expected a well-formed address exchange");
    }
    return len;
  }

  /**
   * Connects over the first candidate every rank has. With several candidates ({@code auto}) a
   * candidate that a rank lacks, or that fails to connect on any rank, is skipped on every rank.
   */
  private RingTransport chooseAndConnect(List<RingTransport> candidates, Exchange ex) {
    boolean explicit = ctx.config.transport() != Transport.AUTO;
    int next = (ctx.rank + 1) % ctx.nRanks;
    int prev = (ctx.rank - 1 + ctx.nRanks) % ctx.nRanks;
    String skipped = "";
    for (int i = 0; i < candidates.size(); i++) {
      RingTransport c = candidates.get(i);
      String why = missingOn(c, ex.infos[i]);
      String hint = why != null && !c.installHint().isEmpty() ? "; " + c.installHint() : "";
      if (why == null) {
        why = c.refusedBy(ex.infos[i]);
      }
      if (why == null) {
        why = tryConnect(c, ex, i, next, prev);
      }
      if (why == null) {
        LOG.info(
            "rank {}: ring transport {} (transport={}{}){}",
            ctx.rank,
            c.name(),
            ctx.config.transport(),
            skipped,
            detail(c.describe(ctx)));
        boolean host = ctx.device == HostDevice.INSTANCE;
        for (CommChannel ch : ctx.channels) {
          ch.kernel.sendFromSources(ch.send != null && ch.send.sendsFromAnyMemory());
          ch.receivesInPlace = host && ch.recv != null && ch.recv.readsIntoAnyMemory();
        }
        c.start(ctx);
        return c;
      }
      if (explicit) {
        throw new CclException(
            "rank " + ctx.rank + ": transport=" + c.name() + " but " + why + hint);
      }
      c.close(false);
      skipped += " and " + why;
    }
    throw new CclException("rank " + ctx.rank + ": no ring transport works:" + skipped);
  }

  /** Why some rank cannot use {@code c}, or null when every rank can. */
  private String missingOn(RingTransport c, byte[][] infos) {
    List<Integer> without = new ArrayList<>();
    for (int r = 0; r < infos.length; r++) {
      if (infos[r] == null) {
        without.add(r);
      }
    }
    if (without.isEmpty()) {
      return null;
    }
    String here = c.unavailableReason();
    return c.name().toUpperCase(java.util.Locale.ROOT)
        + " did not load on rank(s) "
        + without
        + (here != null ? " (here: " + here + ")" : "");
  }

  /**
   * Connects the ring over {@code c}; where the transport asks for it, the ranks then exchange
   * their outcomes so that a failure on one rank is the same on every rank.
   *
   * @return why it failed, or null
   */
  private String tryConnect(RingTransport c, Exchange ex, int index, int next, int prev) {
    String error = "";
    try {
      c.connect(ctx, bootstrap, ex.token, next, prev, ex.infos[index]);
    } catch (CclException e) {
      if (!c.confirmsConnect()) {
        throw e;
      }
      error = e.getMessage();
    }
    if (!c.confirmsConnect()) {
      return null;
    }
    byte[][] outcomes =
        bootstrap.allGather(error.getBytes(StandardCharsets.UTF_8), ctx.config.timeout());
    for (int r = 0; r < ctx.nRanks; r++) {
      if (outcomes[r].length > 0) {
        for (CommChannel ch : ctx.channels) {
          ch.send = null;
          ch.recv = null;
        }
        return "setting up "
            + c.name().toUpperCase(java.util.Locale.ROOT)
            + " failed on rank "
            + r
            + ": "
            + new String(outcomes[r], StandardCharsets.UTF_8);
      }
    }
    return null;
  }

  private static String detail(String d) {
    return d.isEmpty() ? "" : "; " + d;
  }

  /**
   * The point-to-point FIFOs this rank shares with ranks of its host ({@link SharedPeerFifos}). The
   * rounds run when some host has two ranks that allow it, which every rank sees alike in the
   * exchange. A waiting rank polls shared memory (yielding, then parking briefly): on a 2-core VM
   * that still beat loopback sockets with 8 ranks, so no count of cores limits it.
   */
  private SharedPeerFifos sharedFifos(Exchange ex) {
    Map<String, Integer> allowingOnHost = new HashMap<>();
    boolean anyPair = false;
    for (int r = 0; r < ctx.nRanks; r++) {
      if (ex.allowsShm[r]) {
        anyPair |= allowingOnHost.merge(ex.hosts[r], 1, Integer::sum) > 1;
      }
    }
    if (!anyPair) {
      return SharedPeerFifos.none(ctx.nRanks);
    }
    boolean mine = ex.allowsShm[ctx.rank];
    boolean[] peers = new boolean[ctx.nRanks];
    for (int r = 0; r < ctx.nRanks; r++) {
      peers[r] = mine && r != ctx.rank && ex.allowsShm[r] && ex.hosts[r].equals(ex.hosts[ctx.rank]);
    }
    SharedPeerFifos shared =
        SharedPeerFifos.connect(
            new SharedPeerFifos.Setup(
                bootstrap,
                ctx.config.timeout(),
                ctx.rank,
                ctx.nRanks,
                ex.token,
                ctx.config.stepSize(),
                ctx.config.llMaxBytes(),
                ctx.calls.checks(),
                ctx.calls::launched),
            peers);
    if (shared.edges() > 0) {
      LOG.info("rank {}: {} point-to-point edges through shared memory", ctx.rank, shared.edges());
    }
    return shared;
  }

  private PeerLinks peerLinks(SocketTransport sockets, Exchange ex) {
    SharedPeerFifos shared = sharedFifos(ex);
    try {
      return peerLinks(sockets, ex, shared);
    } catch (RuntimeException e) {
      shared.close();
      throw e;
    }
  }

  private PeerLinks peerLinks(SocketTransport sockets, Exchange ex, SharedPeerFifos shared) {
    PeerLinks peers =
        new PeerLinks(
            ctx.rank,
            ctx.config.stepSize(),
            ctx.channels[0].waiter,
            peer ->
                sockets.connect(
                    ex.addresses[peer],
                    peer,
                    SocketTransport.P2P_CHANNEL,
                    ctx.proxy.selector(),
                    ctx.proxy::wake,
                    System.nanoTime() + ctx.timeoutNanos),
            sockets.acceptPeers(ctx.nRanks, ctx.proxy.selector(), ctx.proxy::wake),
            ctx.calls::onAnnounce,
            shared,
            ctx.nRanks);
    for (CommChannel ch : ctx.channels) {
      ch.send.onAnnounce(call -> ctx.calls.onAnnounce(ch.send.peer(), call));
    }
    return peers;
  }
}
