package org.sparkccl.transport.socket;

import java.io.IOException;
import java.net.StandardSocketOptions;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.apache.logging.log4j.Logger;
import org.sparkccl.CclException;
import org.sparkccl.auth.ChallengeResponse;
import org.sparkccl.idle.IdleStrategies;
import org.sparkccl.proxy.ReadyHandler;
import org.sparkccl.transport.RecvConnection;
import org.sparkccl.transport.SendConnection;
import org.sparkccl.util.EngineLog;

/**
 * Accepts point-to-point connections after start-up, whenever a peer first sends to this rank: the
 * listener and each new socket's handshake are handled on the proxy thread, without blocking. A
 * connection is ready once its control socket and all its data sockets arrived.
 */
public final class PeerAcceptor implements ReadyHandler {
  private static final Logger LOG = EngineLog.logger(PeerAcceptor.class);

  private final ServerSocketChannel listener;
  private final ChallengeResponse auth;
  private final boolean seal;
  private final long handshakeNanos;
  private final int rank;
  private final int nRanks;
  private final int nThreads;
  private final IdleStrategies idle;
  private final int nSocks;
  private final Selector selector;
  private final Runnable wakeProxy;
  private final Map<Integer, Wire[]> partial = new HashMap<>();
  private final Map<Integer, RecvConnection> ready = new ConcurrentHashMap<>();
  private final Set<AcceptorHandshake> pending = new HashSet<>();

  PeerAcceptor(
      ServerSocketChannel listener,
      ChallengeResponse auth,
      boolean seal,
      long handshakeNanos,
      int rank,
      int nRanks,
      int nThreads,
      IdleStrategies idle,
      int nSocks,
      Selector selector,
      Runnable wakeProxy)
      throws IOException {
    this.listener = listener;
    this.auth = auth;
    this.seal = seal;
    this.handshakeNanos = handshakeNanos;
    this.rank = rank;
    this.nRanks = nRanks;
    this.nThreads = nThreads;
    this.idle = idle;
    this.nSocks = nSocks;
    this.selector = selector;
    this.wakeProxy = wakeProxy;
    listener.register(selector, SelectionKey.OP_ACCEPT, this);
  }

  /** The receiving end from {@code peer}, once it has connected; otherwise {@code null}. */
  public RecvConnection connectionFrom(int peer) {
    return ready.get(peer);
  }

  /**
   * Whether point-to-point links go in pairs: one socket per pair of ranks, connected by the lower
   * rank, carrying data both ways. Over loopback TCP a socket that carries one direction makes
   * every small message cost a second packet, its acknowledgement, which on a socket carrying both
   * rides on the reply (docs/benchmarks.md, 2026-12-04). Only without data sockets: their chunks
   * are moved by helper threads per direction.
   */
  public boolean pairs() {
    return nSocks == 0;
  }

  /**
   * The sending end to lower rank {@code peer} over the socket that rank connects (see {@link
   * #pairs}); usable once it has connected ({@link SendConnection#isReady}).
   */
  public SendConnection sendBack(int peer) {
    return new PairSendPending(peer, this::sendOver);
  }

  /** The sending half over the socket {@code peer} connected, or null before it has. */
  private SocketSendConnection sendOver(int peer) {
    SocketRecvConnection recv = (SocketRecvConnection) ready.get(peer);
    if (recv == null) {
      return null;
    }
    try {
      return new SocketSendConnection(
          "rank " + rank + " -> rank " + peer + " (point-to-point, paired)",
          peer,
          recv.wire(),
          idle,
          selector,
          wakeProxy,
          recv);
    } catch (IOException e) {
      throw new CclException("rank " + rank + ": pairing with rank " + peer + " failed: " + e, e);
    }
  }

  /**
   * The receiving end from higher rank {@code send.peer()} over the socket this rank connected as
   * {@code send} (see {@link #pairs}).
   */
  public RecvConnection receiveOver(SendConnection send) {
    SocketSendConnection s = (SocketSendConnection) send;
    try {
      return new SocketRecvConnection(
          "rank " + rank + " <- rank " + s.peer() + " (point-to-point, paired)",
          s.peer(),
          s.wire(),
          idle,
          selector,
          wakeProxy,
          s);
    } catch (IOException e) {
      throw new CclException(
          "rank " + rank + ": pairing with rank " + s.peer() + " failed: " + e, e);
    }
  }

  @Override
  public void onReady() {
    try {
      SocketChannel c;
      while ((c = listener.accept()) != null) {
        dropExpired();
        if (pending.size() >= SocketTransport.MAX_PENDING_HANDSHAKES) {
          LOG.warn(
              "rank {}: refused a peer connection from {}: {} are already mid-handshake",
              rank,
              c.getRemoteAddress(),
              pending.size());
          c.close();
          continue;
        }
        c.configureBlocking(false);
        c.setOption(StandardSocketOptions.TCP_NODELAY, true);
        c.setOption(StandardSocketOptions.SO_SNDBUF, SocketTransport.SOCKET_BUFFER_BYTES);
        continueHandshake(new AcceptorHandshake(c, auth, seal, System.nanoTime() + handshakeNanos));
      }
    } catch (IOException e) {
      LOG.warn("rank {}: accepting a peer connection failed: {}", rank, e.toString());
    }
  }

  /**
   * Drives a socket's handshake from where it stands (the start-up accept may hand over a socket
   * whose handshake it had only begun).
   */
  void continueHandshake(AcceptorHandshake h) throws IOException {
    SelectionKey key = h.channel().register(selector, SelectionKey.OP_READ);
    pending.add(h);
    key.attach((ReadyHandler) () -> readHandshake(h, key));
  }

  /**
   * Closes the handshakes whose deadline passed. There is no timer on the proxy thread: this runs
   * whenever a socket arrives or moves, which with the cap on pending handshakes bounds what idle
   * sockets can hold.
   */
  private void dropExpired() {
    long now = System.nanoTime();
    for (Iterator<AcceptorHandshake> it = pending.iterator(); it.hasNext(); ) {
      AcceptorHandshake h = it.next();
      if (now - h.deadlineNanos() > 0) {
        it.remove();
        LOG.warn(
            "rank {}: refused a peer connection: no complete handshake within {} ms",
            rank,
            TimeUnit.NANOSECONDS.toMillis(handshakeNanos));
        SelectionKey k = h.channel().keyFor(selector);
        if (k != null) {
          k.cancel();
        }
        closeQuietly(h.channel());
      }
    }
  }

  private void readHandshake(AcceptorHandshake h, SelectionKey key) {
    SocketChannel c = h.channel();
    try {
      Handshake opening = h.advance();
      if (opening != null) {
        pending.remove(h);
        key.interestOps(0);
        key.attach(null);
        adopt(h.wire(), opening);
      }
    } catch (IOException | CclException e) {
      LOG.warn("rank {}: a peer connection failed during its handshake: {}", rank, e.getMessage());
      pending.remove(h);
      key.cancel();
      closeQuietly(c);
    }
    dropExpired();
  }

  /**
   * Takes a socket whose handshake has been read (here, or by the start-up accept, which may meet a
   * peer that already started point-to-point traffic).
   */
  void adopt(Wire wire, Handshake h) throws IOException {
    SocketChannel c = wire.channel();
    {
      if (h.fromRank() < 0
          || h.fromRank() >= nRanks
          || h.channel() != SocketTransport.P2P_CHANNEL
          || h.socketIndex() < Handshake.CONTROL
          || h.socketIndex() >= nSocks) {
        LOG.warn("rank {}: refused a peer connection {}", rank, h);
        c.close();
        return;
      }
      if (c.keyFor(selector) == null) {
        c.register(selector, 0);
      }
      Wire[] sockets = partial.computeIfAbsent(h.fromRank(), p -> new Wire[1 + nSocks]);
      sockets[h.socketIndex() + 1] = wire;
      for (Wire s : sockets) {
        if (s == null) {
          return;
        }
      }
      partial.remove(h.fromRank());
      Wire[] data = new Wire[nSocks];
      for (int i = 0; i < nSocks; i++) {
        data[i] = sockets[i + 1];
        data[i].channel().keyFor(selector).cancel();
      }
      String what = "rank " + rank + " <- rank " + h.fromRank() + " (point-to-point)";
      ready.put(
          h.fromRank(),
          new SocketRecvConnection(
              what, h.fromRank(), sockets[0], data, nThreads, idle, selector, wakeProxy));
    }
  }

  /** Closes connections accepted but never used. */
  public void close() {
    ready.values().forEach(RecvConnection::close);
    for (Wire[] sockets : partial.values()) {
      for (Wire s : sockets) {
        closeQuietly(s == null ? null : s.channel());
      }
    }
    // one line each, as every other refusal: an idle socket must not vanish without a trace
    for (AcceptorHandshake h : pending) {
      LOG.warn(
          "rank {}: refused a peer connection: no complete handshake before the listener closed",
          rank);
      closeQuietly(h.channel());
    }
    pending.clear();
  }

  private static void closeQuietly(SocketChannel c) {
    if (c != null) {
      try {
        c.close();
      } catch (IOException ignored) {
        // closing anyway
      }
    }
  }
}
