package org.sparkccl.bootstrap;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.concurrent.Semaphore;
import org.apache.logging.log4j.Logger;
import org.sparkccl.CclException;
import org.sparkccl.auth.ChallengeResponse;
import org.sparkccl.util.EngineLog;
import org.sparkccl.util.WireLimits;

/**
 * The rendezvous point of {@link TcpBootstrap}, like the root thread behind {@code
 * ncclGetUniqueId}: admits one connection per rank, then serves allGather rounds until the ranks
 * disconnect. Its {@link #address()}, {@code host:port#secret}, is the string every rank is given;
 * like the random part of an {@code ncclUniqueId}, the secret is what admits a rank, and it never
 * crosses the wire (each side proves it holds it, see {@code ChallengeResponse}).
 *
 * <pre>{@code
 * try (TcpBootstrapRoot root = TcpBootstrapRoot.start("127.0.0.1", 4)) {
 *   String id = root.address(); // hand to every rank, over a channel you trust
 * }
 * }</pre>
 *
 * <p>Connections are admitted concurrently, each within its own deadline, so a connection that
 * sends nothing delays no one; at most {@value #MAX_PENDING} may be mid-handshake at once.
 */
public final class TcpBootstrapRoot implements AutoCloseable {
  /** The default deadline of one connection's handshake. */
  public static final Duration DEFAULT_HANDSHAKE_TIMEOUT = Duration.ofSeconds(10);

  static final int MAX_PENDING = 64;
  private static final Logger LOG = EngineLog.logger(TcpBootstrapRoot.class);

  private final ServerSocket server;
  private final int nRanks;
  private final byte[] secret = ChallengeResponse.newSecret();
  private final ChallengeResponse auth = new ChallengeResponse(secret);
  private final long handshakeNanos;
  private final Semaphore pending = new Semaphore(MAX_PENDING);
  private final Socket[] ranks;
  private int joined;
  private volatile boolean closed;

  private TcpBootstrapRoot(ServerSocket server, int nRanks, Duration handshakeTimeout) {
    this.server = server;
    this.nRanks = nRanks;
    this.ranks = new Socket[nRanks];
    this.handshakeNanos = handshakeTimeout.toNanos();
  }

  /** Starts a root for {@code nRanks} ranks, listening on {@code host}. */
  public static TcpBootstrapRoot start(String host, int nRanks) {
    return start(host, nRanks, DEFAULT_HANDSHAKE_TIMEOUT);
  }

  /**
   * Starts a root for {@code nRanks} ranks, listening on {@code host}; a connection that has not
   * proved the secret within {@code handshakeTimeout} of being accepted is closed.
   */
  public static TcpBootstrapRoot start(String host, int nRanks, Duration handshakeTimeout) {
    if (nRanks < 1) {
      throw new IllegalArgumentException("nRanks=" + nRanks + " must be at least 1");
    }
    if (handshakeTimeout.isNegative() || handshakeTimeout.isZero()) {
      throw new IllegalArgumentException(
          "handshakeTimeout=" + handshakeTimeout + " must be positive");
    }
    try {
      ServerSocket s = new ServerSocket();
      s.bind(new InetSocketAddress(host, 0), Math.max(nRanks, MAX_PENDING));
      TcpBootstrapRoot root = new TcpBootstrapRoot(s, nRanks, handshakeTimeout);
      daemon(root::acceptLoop, "sparkccl-bootstrap-root").start();
      return root;
    } catch (IOException e) {
      throw new CclException("cannot start a bootstrap root on " + host + ": " + e.getMessage(), e);
    }
  }

  /**
   * {@code host:port#secret}: what {@link TcpBootstrap#connect} takes. Whoever has this string can
   * join, so hand it to the ranks the way you would hand them a password.
   */
  public String address() {
    return server.getInetAddress().getHostAddress()
        + ":"
        + server.getLocalPort()
        + "#"
        + ChallengeResponse.hex(secret);
  }

  private void acceptLoop() {
    try {
      while (!closed) {
        Socket s = server.accept();
        if (!pending.tryAcquire()) {
          LOG.warn(
              "bootstrap root: refused {}: {} connections are already mid-handshake",
              s.getRemoteSocketAddress(),
              MAX_PENDING);
          closeQuietly(s);
          continue;
        }
        daemon(() -> admit(s), "sparkccl-bootstrap-handshake").start();
      }
    } catch (IOException e) {
      LOG.debug("bootstrap root stops accepting: {}", e.toString());
    }
  }

  private void admit(Socket s) {
    try {
      s.setTcpNoDelay(true);
      BootstrapHandshake.accept(
          s, auth, System.nanoTime() + handshakeNanos, opening -> take(opening, s));
      s.setSoTimeout(0);
    } catch (SocketTimeoutException e) {
      LOG.warn(
          "bootstrap root: refused {}: no complete handshake within {} ms",
          s.getRemoteSocketAddress(),
          handshakeNanos / 1_000_000);
      release(s);
      closeQuietly(s);
    } catch (IOException | RuntimeException e) {
      LOG.warn("bootstrap root: refused {}: {}", s.getRemoteSocketAddress(), e.getMessage());
      release(s);
      closeQuietly(s);
    } finally {
      pending.release();
    }
  }

  private synchronized int take(BootstrapHandshake.Opening o, Socket s) {
    if (o.nRanks() != nRanks) {
      return BootstrapHandshake.RANK_COUNT_DIFFERS;
    }
    if (o.rank() < 0 || o.rank() >= nRanks) {
      return BootstrapHandshake.RANK_OUT_OF_RANGE;
    }
    if (ranks[o.rank()] != null || closed) {
      return BootstrapHandshake.RANK_TAKEN;
    }
    ranks[o.rank()] = s;
    if (++joined == nRanks) {
      closeQuietly(server);
      daemon(this::serve, "sparkccl-bootstrap-root").start();
    }
    return BootstrapHandshake.ACCEPTED;
  }

  /** Frees the rank of a socket whose status could not be delivered before everyone joined. */
  private synchronized void release(Socket s) {
    for (int r = 0; r < nRanks; r++) {
      if (ranks[r] == s && joined < nRanks) {
        ranks[r] = null;
        joined--;
      }
    }
  }

  private void serve() {
    try {
      DataInputStream[] ins = new DataInputStream[nRanks];
      DataOutputStream[] outs = new DataOutputStream[nRanks];
      for (int r = 0; r < nRanks; r++) {
        ins[r] = new DataInputStream(ranks[r].getInputStream());
        outs[r] = new DataOutputStream(ranks[r].getOutputStream());
      }
      while (true) {
        byte[][] round = new byte[nRanks][];
        for (int r = 0; r < nRanks; r++) {
          int n =
              WireLimits.checkLength(
                  ins[r].readInt(), TcpBootstrap.MAX_CONTRIBUTION_BYTES, "rank " + r);
          round[r] = new byte[n];
          ins[r].readFully(round[r]);
        }
        for (DataOutputStream out : outs) {
          for (byte[] b : round) {
            out.writeInt(b.length);
            out.write(b);
          }
          out.flush();
        }
      }
    } catch (IOException e) {
      if (e instanceof WireLimits.LengthRefused) {
        LOG.warn("bootstrap root stops: {}", e.getMessage());
      } else {
        LOG.debug("bootstrap root stops: {}", e.toString());
      }
    } finally {
      close();
    }
  }

  @Override
  public void close() {
    closed = true;
    closeQuietly(server);
    synchronized (this) {
      for (Socket s : ranks) {
        closeQuietly(s);
      }
    }
  }

  private static Thread daemon(Runnable r, String name) {
    Thread t = new Thread(r, name);
    t.setDaemon(true);
    return t;
  }

  private static void closeQuietly(AutoCloseable c) {
    if (c != null) {
      try {
        c.close();
      } catch (Exception e) {
        LOG.debug("closing a bootstrap socket", e);
      }
    }
  }
}
