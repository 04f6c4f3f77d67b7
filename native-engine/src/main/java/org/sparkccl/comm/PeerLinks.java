package org.sparkccl.comm;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.sparkccl.fifo.Fifo;
import org.sparkccl.kernel.KernelWaiter;
import org.sparkccl.kernel.PeerLiveness;
import org.sparkccl.proxy.OpSite;
import org.sparkccl.proxy.RecvProxyOp;
import org.sparkccl.proxy.SendProxyOp;
import org.sparkccl.transport.NetRequest;
import org.sparkccl.transport.RecvConnection;
import org.sparkccl.transport.SendConnection;
import org.sparkccl.transport.shm.SharedPeerFifos;
import org.sparkccl.transport.socket.PeerAcceptor;

/**
 * Point-to-point links of a communicator, made on first use: per peer and direction a connection, a
 * FIFO and the step and operation counters. Over sockets the two directions with one peer share one
 * socket, which the lower rank connects ({@link PeerAcceptor#pairs}). Only used under the
 * communicator's launch lock (and the FIFOs by the kernel thread and the proxy).
 */
final class PeerLinks {
  /** One direction to or from one peer. */
  static final class Link {
    final int peer;
    final Fifo fifo;
    final Object connection;
    long nextStep;
    long nextSeq;

    /** Describes this link's proxy operations when asked: no launch builds the text. */
    final OpSite site;

    /**
     * The FIFO a sending edge may publish large slices from the collective's buffers to ({@code
     * PeerEdge#sendFromSources}): {@link #fifo} where the connection sends from any memory, decided
     * once here instead of asked on every launch; else null.
     */
    final Fifo sourceFifo;

    /** Finished operations of this link to restart (one of the two, by direction). */
    final OpRing<SendProxyOp> sendOps = new OpRing<>();

    final OpRing<RecvProxyOp> recvOps = new OpRing<>();

    Link(int rank, int peer, Fifo fifo, Object connection) {
      this.peer = peer;
      this.fifo = fifo;
      this.connection = connection;
      String way =
          connection instanceof SendConnection ? "sending to rank " : "receiving from rank ";
      this.site = new OpSite(rank, way + peer + " (point-to-point)");
      this.sourceFifo =
          connection instanceof SendConnection c && c.sendsFromAnyMemory() ? fifo : null;
    }

    SendConnection send() {
      return (SendConnection) connection;
    }

    RecvConnection recv() {
      return (RecvConnection) connection;
    }
  }

  /**
   * One direction of a shared-memory edge under one protocol ({@link SharedPeerFifos.Lane}): no
   * connection and no proxy, only the step its next message takes.
   */
  static final class SharedLink {
    final int peer;
    final SharedPeerFifos.Lane lane;

    /** The peer's process, where this rank can see it; else null. */
    final PeerLiveness liveness;

    long nextStep;

    SharedLink(int peer, SharedPeerFifos.Lane lane, PeerLiveness liveness) {
      this.peer = peer;
      this.lane = lane;
      this.liveness = liveness;
    }
  }

  /** Connects the sending end to a peer (the peer accepts on its proxy thread). */
  interface Connector {
    SendConnection connect(int peer);
  }

  private final Map<Integer, Link> sends = new HashMap<>();

  /** Shared links to and from each peer, both protocols ({@link #sharedIndex}). */
  private final SharedLink[] sharedSends;

  private final SharedLink[] sharedRecvs;
  private final SharedPeerFifos shared;

  /** Fixed once the links exist; read by every launch. */
  private final long allSharedUpTo;

  private final Map<Integer, Link> recvs = new HashMap<>();
  private final int rank;
  private final int stepSize;
  private final KernelWaiter waiter;
  private final Connector connector;
  private final PeerAcceptor acceptor;
  private final java.util.function.BiConsumer<Integer, CollectiveCall> announcements;

  PeerLinks(
      int rank,
      int stepSize,
      KernelWaiter waiter,
      Connector connector,
      PeerAcceptor acceptor,
      java.util.function.BiConsumer<Integer, CollectiveCall> announcements,
      SharedPeerFifos shared,
      int nRanks) {
    this.announcements = announcements;
    this.shared = shared;
    this.allSharedUpTo = shared.complete() ? shared.carriesUpTo() : 0;
    this.sharedSends = new SharedLink[2 * nRanks];
    this.sharedRecvs = new SharedLink[2 * nRanks];
    for (int p = 0; p < nRanks; p++) {
      for (int ll = 0; ll < 2; ll++) {
        SharedPeerFifos.Lane send = shared.laneOf(true, p, ll == 1);
        SharedPeerFifos.Lane recv = shared.laneOf(false, p, ll == 1);
        int at = sharedIndex(p, ll == 1);
        sharedSends[at] = send == null ? null : new SharedLink(p, send, shared.process(p));
        sharedRecvs[at] = recv == null ? null : new SharedLink(p, recv, shared.process(p));
      }
    }
    this.rank = rank;
    this.stepSize = stepSize;
    this.waiter = waiter;
    this.connector = connector;
    this.acceptor = acceptor;
  }

  Link sendTo(int peer) {
    return sends.computeIfAbsent(
        peer,
        p -> {
          Fifo fifo = kernelFifo(true);
          try {
            // a pair's socket is connected by its lower rank (see PeerAcceptor.pairs)
            SendConnection c =
                acceptor.pairs() && rank > p ? acceptor.sendBack(p) : connector.connect(p);
            c.onAnnounce(call -> announcements.accept(p, call));
            return new Link(rank, p, fifo, c);
          } catch (RuntimeException e) {
            fifo.close();
            throw e;
          }
        });
  }

  /**
   * The shared-memory link to ({@code send}) or from {@code peer} for an edge of {@code bytes}, or
   * null when that edge goes over a socket. Both ends of an edge decide alike.
   */
  SharedLink shared(boolean send, int peer, long bytes) {
    SharedPeerFifos.Lane lane = shared.lane(send, peer, bytes);
    if (lane == null) {
      return null;
    }
    return (send ? sharedSends : sharedRecvs)[sharedIndex(peer, lane.lowLatency())];
  }

  /** Where the shared link with {@code peer} under one protocol sits in its direction's array. */
  private static int sharedIndex(int peer, boolean lowLatency) {
    return 2 * peer + (lowLatency ? 1 : 0);
  }

  /**
   * The other protocol's link beside {@code link} (same peer, same direction), or null where the
   * edge has only one.
   */
  SharedLink otherProtocol(boolean send, SharedLink link) {
    return (send ? sharedSends : sharedRecvs)[sharedIndex(link.peer, !link.lane.lowLatency())];
  }

  /**
   * Up to which size every point-to-point edge between any two ranks goes through shared memory (0
   * where some do not): the same on every rank.
   */
  long allSharedUpTo() {
    return allSharedUpTo;
  }

  Link recvFrom(int peer) {
    Link l = recvs.get(peer);
    if (l != null) {
      return l;
    }
    if (acceptor.pairs() && rank < peer) {
      // the pair's socket is this rank's to connect: receiving from a higher rank connects it too
      l = new Link(rank, peer, kernelFifo(false), acceptor.receiveOver(sendTo(peer).send()));
    } else {
      l = new Link(rank, peer, kernelFifo(false), new Pending(peer));
    }
    recvs.put(peer, l);
    return l;
  }

  private Fifo kernelFifo(boolean send) {
    Fifo fifo = new Fifo(stepSize);
    if (send) {
      fifo.onRelease(waiter);
      fifo.onPublish(waiter::deferProxyWake);
    } else {
      fifo.onPublish(waiter);
      fifo.onRelease(waiter::deferProxyWake);
    }
    return fifo;
  }

  List<Link> all() {
    List<Link> l = new ArrayList<>(sends.values());
    l.addAll(recvs.values());
    return l;
  }

  /** Tells connected peers about a failure or close (best effort; in a proxy pass). */
  void notifyPeers(boolean failed, String message) {
    for (Link l : recvs.values()) {
      l.recv().notifyPeer(failed, message);
    }
    for (Link l : sends.values()) {
      l.send().notifyPeer(failed, message);
    }
  }

  /** Closes connections; frees FIFOs only when {@code freeFifos} (no kernel touches them). */
  void close(boolean freeFifos) {
    for (Link l : all()) {
      if (l.connection instanceof SendConnection s) {
        s.close();
      } else {
        l.recv().close();
      }
      if (freeFifos) {
        l.fifo.close();
      }
    }
    acceptor.close();
    if (freeFifos) {
      shared.close();
    }
  }

  /** The receiving end from a peer, which exists once the peer has connected. */
  private final class Pending implements RecvConnection {
    private final int peer;
    private RecvConnection real;

    Pending(int peer) {
      this.peer = peer;
    }

    private RecvConnection real() {
      if (real == null) {
        real = acceptor.connectionFrom(peer);
      }
      return real;
    }

    @Override
    public boolean isReady() {
      return real() != null;
    }

    @Override
    public NetRequest postRecv(ByteBuffer data, long step) {
      return real().postRecv(data, step);
    }

    @Override
    public int peer() {
      return peer;
    }

    @Override
    public void notifyPeer(boolean failed, String message) {
      if (real() != null) {
        real.notifyPeer(failed, message);
      }
    }

    @Override
    public void close() {
      // the acceptor owns and closes the real connection
    }
  }
}
