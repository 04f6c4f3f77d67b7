package org.sparkccl.bootstrap;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import org.apache.logging.log4j.Logger;
import org.sparkccl.CclException;
import org.sparkccl.util.EngineLog;

/**
 * The rendezvous point of {@link TcpBootstrap}, like the root thread behind {@code
 * ncclGetUniqueId}: accepts one connection per rank, then serves allGather rounds until the ranks
 * disconnect. Its {@link #address()} is the string every rank is given.
 *
 * <pre>{@code
 * try (TcpBootstrapRoot root = TcpBootstrapRoot.start("127.0.0.1", 4)) {
 *   String id = root.address(); // hand to every rank
 * }
 * }</pre>
 */
public final class TcpBootstrapRoot implements AutoCloseable {
  static final int MAGIC = 0x53434252;
  private static final Logger LOG = EngineLog.logger(TcpBootstrapRoot.class);

  private final ServerSocket server;
  private final int nRanks;
  private final Socket[] ranks;
  private final Thread thread;

  private TcpBootstrapRoot(ServerSocket server, int nRanks) {
    this.server = server;
    this.nRanks = nRanks;
    this.ranks = new Socket[nRanks];
    this.thread = new Thread(this::serve, "sparkccl-bootstrap-root");
    this.thread.setDaemon(true);
  }

  /** Starts a root for {@code nRanks} ranks, listening on {@code host}. */
  public static TcpBootstrapRoot start(String host, int nRanks) {
    if (nRanks < 1) {
      throw new IllegalArgumentException("nRanks=" + nRanks + " must be at least 1");
    }
    try {
      ServerSocket s = new ServerSocket();
      s.bind(new InetSocketAddress(host, 0), nRanks);
      TcpBootstrapRoot root = new TcpBootstrapRoot(s, nRanks);
      root.thread.start();
      return root;
    } catch (IOException e) {
      throw new CclException("cannot start a bootstrap root on " + host + ": " + e.getMessage(), e);
    }
  }

  /** {@code host:port}: what {@link TcpBootstrap#connect} takes. */
  public String address() {
    return server.getInetAddress().getHostAddress() + ":" + server.getLocalPort();
  }

  private void serve() {
    try {
      for (int i = 0; i < nRanks; i++) {
        Socket s = server.accept();
        s.setTcpNoDelay(true);
        DataInputStream in = new DataInputStream(s.getInputStream());
        int magic = in.readInt();
        int rank = in.readInt();
        int n = in.readInt();
        if (magic != MAGIC || n != nRanks || rank < 0 || rank >= nRanks || ranks[rank] != null) {
          LOG.warn("bootstrap root: refused rank {} of {} (magic {})", rank, n, magic);
          s.close();
          i--;
          continue;
        }
        ranks[rank] = s;
      }
      while (true) {
        byte[][] round = new byte[nRanks][];
        for (int r = 0; r < nRanks; r++) {
          DataInputStream in = new DataInputStream(ranks[r].getInputStream());
          byte[] b = new byte[in.readInt()];
          in.readFully(b);
          round[r] = b;
        }
        for (int r = 0; r < nRanks; r++) {
          DataOutputStream out = new DataOutputStream(ranks[r].getOutputStream());
          for (byte[] b : round) {
            out.writeInt(b.length);
            out.write(b);
          }
          out.flush();
        }
      }
    } catch (IOException e) {
      LOG.debug("bootstrap root stops: {}", e.toString());
    } finally {
      close();
    }
  }

  @Override
  public void close() {
    try {
      server.close();
    } catch (IOException e) {
      LOG.debug("closing the root listener", e);
    }
    for (Socket s : ranks) {
      if (s != null) {
        try {
          s.close();
        } catch (IOException e) {
          LOG.debug("closing a root connection", e);
        }
      }
    }
  }
}
