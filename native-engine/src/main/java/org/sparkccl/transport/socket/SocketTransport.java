package org.sparkccl.transport.socket;

import java.io.IOException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import org.apache.logging.log4j.Logger;
import org.sparkccl.CclException;
import org.sparkccl.CclTimeoutException;
import org.sparkccl.auth.ChallengeResponse;
import org.sparkccl.idle.IdleStrategies;
import org.sparkccl.transport.RecvConnection;
import org.sparkccl.transport.SendConnection;
import org.sparkccl.util.EngineLog;

/**
 * The socket transport on Java NIO: a listener per rank, and per channel a connection to the next
 * rank made of one control socket and {@code nThreads x nSocksPerThread} data sockets.
 *
 * <pre>{@code
 * SocketTransport t = SocketTransport.listen("127.0.0.1", rank, 0, 1, IdleStrategies.defaults());
 * // exchange t.address() and rank 0's secret with the peers, then:
 * t.useSecret(secret);
 * SendConnection out = t.connect(nextAddress, next, channel, sel, proxy::wake, deadline);
 * RecvConnection in = t.accept(prev, nChannels, sel, proxy::wake, deadline)[channel];
 * }</pre>
 */
public final class SocketTransport implements AutoCloseable {
  private static final Logger LOG = EngineLog.logger(SocketTransport.class);

  /**
   * Kernel socket buffers: at least one FIFO slot (512 KiB by default) so a slot goes in one write
   * and comes out in one read, instead of in pieces that each cost the proxy a wake-up.
   */
  static final int SOCKET_BUFFER_BYTES = 4 << 20;

  /** The handshake's channel number of point-to-point connections. */
  public static final int P2P_CHANNEL = 1 << 16;

  /** How long an accepted socket may take to prove the secret. */
  static final long HANDSHAKE_NANOS = TimeUnit.SECONDS.toNanos(10);

  /** The most sockets that may be mid-handshake at once; more are closed on arrival. */
  static final int MAX_PENDING_HANDSHAKES = 64;

  private final ServerSocketChannel listener;
  private final Map<Wire, Handshake> earlyPeers = new HashMap<>();

  /** Sockets the start-up accept took whose handshake had not finished when it returned. */
  private final List<AcceptorHandshake> halfDone = new ArrayList<>();

  private final int rank;
  private final int nThreads;
  private final int nSocks;
  private final IdleStrategies idle;
  private volatile ChallengeResponse auth;
  private volatile boolean seal;
  private volatile Selector accepting;
  private volatile Executor proxyTasks;
  long handshakeNanos = HANDSHAKE_NANOS;

  private SocketTransport(
      ServerSocketChannel listener, int rank, int nThreads, int nSocks, IdleStrategies idle) {
    this.listener = listener;
    this.rank = rank;
    this.nThreads = nThreads;
    this.nSocks = nSocks;
    this.idle = idle;
  }

  /**
   * Opens a listener on {@code host}, on a port the system picks; its connections' helper threads
   * idle as {@code idle} says.
   */
  public static SocketTransport listen(
      String host, int rank, int nThreads, int nSocksPerThread, IdleStrategies idle) {
    try {
      ServerSocketChannel l = ServerSocketChannel.open();
      l.setOption(StandardSocketOptions.SO_RCVBUF, SOCKET_BUFFER_BYTES);
      l.bind(new InetSocketAddress(host, 0), 256);
      l.configureBlocking(false);
      return new SocketTransport(l, rank, nThreads, nThreads * nSocksPerThread, idle);
    } catch (IOException e) {
      throw new CclException(
          "rank " + rank + ": cannot listen on " + host + ": " + e.getMessage(), e);
    }
  }

  /**
   * The communicator's secret, which every connection proves in both directions; call once the
   * ranks share it, before {@link #connect}, {@link #accept} or {@link #acceptPeers}.
   */
  public void useSecret(byte[] secret) {
    useSecret(secret, false);
  }

  /**
   * As {@link #useSecret(byte[])}; with {@code seal}, every connection also encrypts what it
   * carries (see {@link SealedWire}), with keys derived from the secret and its handshake.
   */
  public void useSecret(byte[] secret, boolean seal) {
    this.seal = seal;
    auth = new ChallengeResponse(secret);
  }

  /**
   * Where the ring's receiving connections write their announcements (see {@link
   * SocketRecvConnection#announce}): the proxy thread, between its progress passes (the frames keep
   * their own lock), a moment after the first call of a batch ({@code
   * ProxyThread.executeOutsidePassesLater}). Call before {@link #accept}.
   */
  public void onProxy(Executor proxyTasks) {
    this.proxyTasks = proxyTasks;
  }

  private ChallengeResponse auth() {
    ChallengeResponse a = auth;
    if (a == null) {
      throw new IllegalStateException("rank " + rank + ": useSecret was not called");
    }
    return a;
  }

  /**
   * From now on, accepts point-to-point connections on the proxy thread (see {@link PeerAcceptor}).
   * Call after the ring connections are accepted.
   */
  public PeerAcceptor acceptPeers(int nRanks, Selector proxySelector, Runnable wakeProxy) {
    try {
      PeerAcceptor acceptor =
          new PeerAcceptor(
              listener,
              auth(),
              seal,
              handshakeNanos,
              rank,
              nRanks,
              nThreads,
              idle,
              nSocks,
              proxySelector,
              wakeProxy);
      for (Map.Entry<Wire, Handshake> e : earlyPeers.entrySet()) {
        acceptor.adopt(e.getKey(), e.getValue());
      }
      earlyPeers.clear();
      for (AcceptorHandshake h : halfDone) {
        acceptor.continueHandshake(h);
      }
      halfDone.clear();
      return acceptor;
    } catch (IOException e) {
      throw new CclException("rank " + rank + ": cannot watch the listener: " + e.getMessage(), e);
    }
  }

  /** Whether the listener is still open (not yet closed). */
  public boolean isOpen() {
    return listener.isOpen();
  }

  /** {@code host:port} that peers connect to. */
  public String address() {
    try {
      InetSocketAddress a = (InetSocketAddress) listener.getLocalAddress();
      return a.getHostString() + ":" + a.getPort();
    } catch (IOException e) {
      throw new CclException("rank " + rank + ": listener has no address: " + e.getMessage(), e);
    }
  }

  /**
   * Connects channel {@code channel}'s sending end to rank {@code peer} at {@code address}; each
   * socket proves the secret and checks the peer's proof before it is used.
   */
  public SendConnection connect(
      String address,
      int peer,
      int channel,
      Selector proxySelector,
      Runnable wakeProxy,
      long deadlineNanos) {
    return connect(
        address, peer, channel, proxySelector, wakeProxy, deadlineNanos, Handshake.VERSION);
  }

  SendConnection connect(
      String address,
      int peer,
      int channel,
      Selector proxySelector,
      Runnable wakeProxy,
      long deadlineNanos,
      int version) {
    ChallengeResponse a = auth();
    String what =
        "rank "
            + rank
            + " -> rank "
            + peer
            + (channel == P2P_CHANNEL ? " (point-to-point)" : " (channel " + channel + ")");
    SocketChannel control = null;
    SocketChannel[] data = new SocketChannel[nSocks];
    try {
      control = open(address, deadlineNanos, what);
      Wire controlWire =
          ConnectorHandshake.run(
              control,
              new Handshake(rank, channel, Handshake.CONTROL),
              version,
              a,
              seal,
              deadlineNanos,
              what);
      Wire[] dataWires = new Wire[nSocks];
      for (int i = 0; i < nSocks; i++) {
        data[i] = open(address, deadlineNanos, what);
        dataWires[i] =
            ConnectorHandshake.run(
                data[i], new Handshake(rank, channel, i), version, a, seal, deadlineNanos, what);
      }
      // a ring's connection: the peer sends it nothing but notices, and announcements come in
      // batches of up to 64 frames a write, which a staged read takes in one system call, not one
      // each (a 4-rank 8 B reduce's interior rank read a leaf's every call that way)
      boolean noticesOnly = channel != P2P_CHANNEL;
      return new SocketSendConnection(
          what,
          peer,
          noticesOnly ? new StagedReadWire(controlWire) : controlWire,
          dataWires,
          nThreads,
          idle,
          proxySelector,
          wakeProxy,
          noticesOnly);
    } catch (IOException e) {
      closeAll(control, data);
      // every rank listens from its creation to its close, so a refusal means the peer is gone;
      // a connection it closes or resets mid-handshake usually means it refused this rank's proof
      // (the refused rank would otherwise read only "Connection reset")
      String hint =
          e instanceof ConnectException
              ? "; rank "
                  + peer
                  + " refused it: it has failed or closed its communicator (its own error names"
                  + " why), or a firewall rejects the port"
              : control != null
                  ? "; the handshake failed: rank "
                      + peer
                      + " closes a connection that does not prove the communicator's secret, and"
                      + " every socket when it fails (its own error names why)"
                  : "";
      throw new CclException(
          what + ": cannot connect to " + address + ": " + e.getMessage() + hint, e);
    } catch (RuntimeException e) {
      closeAll(control, data);
      throw e;
    }
  }

  /**
   * Accepts every channel's sockets from rank {@code peer} and returns the receiving ends, indexed
   * by channel. Sockets that do not prove the secret in time, or come from another rank, are
   * refused. Runs while this rank connects its own sockets (the peer's proofs need answers).
   */
  public RecvConnection[] accept(
      int peer, int nChannels, Selector proxySelector, Runnable wakeProxy, long deadlineNanos) {
    ChallengeResponse a = auth();
    int expected = nChannels * (1 + nSocks);
    Map<Integer, Wire> got = new HashMap<>();
    Map<SocketChannel, AcceptorHandshake> pending = new HashMap<>();
    try (Selector sel = Selector.open()) {
      accepting = sel;
      listener.register(sel, SelectionKey.OP_ACCEPT);
      while (got.size() < expected) {
        long left = deadlineNanos - System.nanoTime();
        if (!listener.isOpen()) {
          throw new CclException("rank " + rank + ": the listener closed while accepting");
        }
        if (left <= 0) {
          throw new CclTimeoutException(
              "rank "
                  + rank
                  + ": only "
                  + got.size()
                  + " of "
                  + expected
                  + " sockets from rank "
                  + peer
                  + " arrived before the timeout");
        }
        sel.select(Math.max(1, Math.min(1_000, TimeUnit.NANOSECONDS.toMillis(left))));
        for (Iterator<SelectionKey> it = sel.selectedKeys().iterator(); it.hasNext(); ) {
          SelectionKey k = it.next();
          it.remove();
          if (!k.isValid()) {
            continue;
          }
          if (k.isAcceptable()) {
            SocketChannel c = listener.accept();
            if (c != null) {
              if (pending.size() >= MAX_PENDING_HANDSHAKES) {
                LOG.warn(
                    "rank {}: refused a connection from {}: {} are already mid-handshake",
                    rank,
                    c.getRemoteAddress(),
                    pending.size());
                closeQuietly(c);
                continue;
              }
              c.configureBlocking(false);
              c.setOption(StandardSocketOptions.TCP_NODELAY, true);
              c.setOption(StandardSocketOptions.SO_SNDBUF, SOCKET_BUFFER_BYTES);
              c.register(sel, SelectionKey.OP_READ);
              pending.put(c, new AcceptorHandshake(c, a, seal, System.nanoTime() + handshakeNanos));
            }
          } else if (k.isReadable()) {
            readHandshake((SocketChannel) k.channel(), pending, got, peer, nChannels, k);
          }
        }
        dropExpired(pending.values(), sel);
      }
      RecvConnection[] result = new RecvConnection[nChannels];
      for (int c = 0; c < nChannels; c++) {
        Wire[] data = new Wire[nSocks];
        for (int i = 0; i < nSocks; i++) {
          data[i] = got.get(key(c, i));
          data[i].channel().keyFor(sel).cancel();
        }
        Wire control = got.get(key(c, Handshake.CONTROL));
        control.channel().keyFor(sel).cancel();
        sel.selectNow();
        String what = "rank " + rank + " <- rank " + peer + " (channel " + c + ")";
        SocketRecvConnection r =
            new SocketRecvConnection(
                what, peer, control, data, nThreads, idle, proxySelector, wakeProxy);
        if (proxyTasks != null) {
          r.announceThrough(proxyTasks);
        }
        result[c] = r;
      }
      listener.keyFor(sel).cancel();
      for (AcceptorHandshake h : pending.values()) {
        h.channel().keyFor(sel).cancel();
        halfDone.add(h);
      }
      sel.selectNow();
      return result;
    } catch (IOException e) {
      got.values().forEach(w -> closeQuietly(w.channel()));
      pending.keySet().forEach(SocketTransport::closeQuietly);
      throw new CclException("rank " + rank + ": accepting from rank " + peer + " failed: " + e, e);
    } catch (RuntimeException e) {
      got.values().forEach(w -> closeQuietly(w.channel()));
      pending.keySet().forEach(SocketTransport::closeQuietly);
      throw e;
    } finally {
      accepting = null;
    }
  }

  /** Closes, with one line each, the handshakes whose deadline has passed. */
  private void dropExpired(Collection<AcceptorHandshake> pending, Selector sel) {
    long now = System.nanoTime();
    for (Iterator<AcceptorHandshake> it = pending.iterator(); it.hasNext(); ) {
      AcceptorHandshake h = it.next();
      if (now - h.deadlineNanos() > 0) {
        it.remove();
        LOG.warn(
            "rank {}: refused a connection: no complete handshake within {} ms",
            rank,
            TimeUnit.NANOSECONDS.toMillis(handshakeNanos));
        SelectionKey k = h.channel().keyFor(sel);
        if (k != null) {
          k.cancel();
        }
        closeQuietly(h.channel());
      }
    }
  }

  private void readHandshake(
      SocketChannel c,
      Map<SocketChannel, AcceptorHandshake> pending,
      Map<Integer, Wire> got,
      int peer,
      int nChannels,
      SelectionKey k) {
    AcceptorHandshake hs = pending.get(c);
    if (hs == null) {
      return;
    }
    Handshake h;
    try {
      h = hs.advance();
    } catch (IOException | CclException e) {
      LOG.warn("rank {}: {}", rank, e.getMessage());
      pending.remove(c);
      k.cancel();
      closeQuietly(c);
      return;
    }
    if (h == null) {
      return;
    }
    pending.remove(c);
    // The peer may start sending data before every socket is accepted: stop watching this one.
    k.interestOps(0);
    if (h.channel() == P2P_CHANNEL) {
      // A rank that finished start-up first already sends point-to-point (a tree collective).
      k.cancel();
      earlyPeers.put(hs.wire(), h);
      return;
    }
    boolean valid =
        h.fromRank() == peer
            && h.channel() >= 0
            && h.channel() < nChannels
            && h.socketIndex() >= Handshake.CONTROL
            && h.socketIndex() < nSocks
            && !got.containsKey(key(h.channel(), h.socketIndex()));
    if (!valid) {
      LOG.warn("rank {}: refused a connection {} (expected rank {})", rank, h, peer);
      k.cancel();
      closeQuietly(c);
      return;
    }
    got.put(key(h.channel(), h.socketIndex()), hs.wire());
  }

  private static int key(int channel, int socketIndex) {
    return channel * 1000 + socketIndex + 1;
  }

  private static SocketChannel open(String address, long deadlineNanos, String what)
      throws IOException {
    int colon = address.lastIndexOf(':');
    InetSocketAddress to =
        new InetSocketAddress(
            address.substring(0, colon), Integer.parseInt(address.substring(colon + 1)));
    long left = TimeUnit.NANOSECONDS.toMillis(deadlineNanos - System.nanoTime());
    if (left <= 0) {
      throw new CclTimeoutException(what + ": timed out before connecting to " + address);
    }
    SocketChannel c = SocketChannel.open();
    try {
      c.setOption(StandardSocketOptions.TCP_NODELAY, true);
      c.setOption(StandardSocketOptions.SO_SNDBUF, SOCKET_BUFFER_BYTES);
      c.setOption(StandardSocketOptions.SO_RCVBUF, SOCKET_BUFFER_BYTES);
      c.socket().connect(to, (int) Math.min(Integer.MAX_VALUE, left));
      return c;
    } catch (IOException e) {
      closeQuietly(c);
      throw e;
    }
  }

  private static void closeAll(SocketChannel control, SocketChannel[] data) {
    closeQuietly(control);
    for (SocketChannel d : data) {
      closeQuietly(d);
    }
  }

  private static void closeQuietly(SocketChannel c) {
    if (c != null) {
      try {
        c.close();
      } catch (IOException e) {
        LOG.debug("closing a socket", e);
      }
    }
  }

  @Override
  public void close() {
    try {
      listener.close();
      Selector s = accepting;
      if (s != null) {
        s.wakeup();
      }
    } catch (IOException e) {
      LOG.debug("closing the listener", e);
    }
  }
}
