package org.sparkccl.bootstrap;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.time.Duration;
import org.sparkccl.CclException;
import org.sparkccl.CclTimeoutException;
import org.sparkccl.auth.ChallengeResponse;
import org.sparkccl.util.WireLimits;

/**
 * Separate processes forming a communicator over TCP, like {@code ncclCommInitRank}: every rank
 * gets the root's address string ({@code host:port#secret}), its rank and the rank count.
 *
 * <pre>{@code
 * try (TcpBootstrap b = TcpBootstrap.connect(rootAddress, rank, nRanks, Duration.ofSeconds(60));
 *     Communicator comm = Communicator.create(b, CclConfig.fromEnvironment())) {
 *   comm.allReduce(buf, buf, count, DataType.FLOAT32, ReduceOp.SUM);
 * }
 * }</pre>
 */
public final class TcpBootstrap implements Bootstrap, AutoCloseable {
  /** The most bytes one rank may contribute to one allGather, and a rank accepts from the root. */
  public static final int MAX_CONTRIBUTION_BYTES = 16 << 20;

  private final Socket socket;
  private final DataInputStream in;
  final DataOutputStream out;
  private final int rank;
  private final int nRanks;

  private TcpBootstrap(Socket socket, int rank, int nRanks) throws IOException {
    this.socket = socket;
    this.in = new DataInputStream(socket.getInputStream());
    this.out = new DataOutputStream(socket.getOutputStream());
    this.rank = rank;
    this.nRanks = nRanks;
  }

  /**
   * Connects to the root at {@code rootAddress} (what {@link TcpBootstrapRoot#address()} returned:
   * {@code host:port#secret}), retrying until the timeout while the root cannot be reached.
   *
   * @throws CclException at once when the root does not hold the address's secret, speaks another
   *     protocol version or refuses this rank; {@link CclTimeoutException} when it cannot be
   *     reached
   */
  public static TcpBootstrap connect(String rootAddress, int rank, int nRanks, Duration timeout) {
    return connect(rootAddress, rank, nRanks, timeout, BootstrapHandshake.VERSION);
  }

  static TcpBootstrap connect(
      String rootAddress, int rank, int nRanks, Duration timeout, int version) {
    if (nRanks < 1 || rank < 0 || rank >= nRanks) {
      throw new IllegalArgumentException(
          "rank=" + rank + " nRanks=" + nRanks + " is invalid; expected 0 <= rank < nRanks");
    }
    RootAddress root = RootAddress.parse(rootAddress);
    ChallengeResponse auth = new ChallengeResponse(root.secret());
    BootstrapHandshake.Opening opening =
        new BootstrapHandshake.Opening(BootstrapHandshake.MAGIC, version, rank, nRanks);
    long deadline = System.nanoTime() + timeout.toNanos();
    IOException last = null;
    while (System.nanoTime() < deadline) {
      Socket s = new Socket();
      try {
        s.connect(root.socketAddress(), (int) Math.max(1, Math.min(5_000, timeout.toMillis())));
        s.setTcpNoDelay(true);
        BootstrapHandshake.connect(s, auth, opening, root.hostPort(), deadline);
        s.setSoTimeout(0);
        return new TcpBootstrap(s, rank, nRanks);
      } catch (IOException e) {
        last = e;
        try {
          s.close();
          Thread.sleep(50);
        } catch (IOException | InterruptedException ignored) {
          Thread.currentThread().interrupt();
          break;
        }
      } catch (RuntimeException e) {
        closeQuietly(s);
        throw e;
      }
    }
    throw new CclTimeoutException(
        "rank "
            + rank
            + ": cannot reach the bootstrap root at "
            + root.hostPort()
            + " within "
            + timeout
            + (last == null ? "" : ": " + last.getMessage()));
  }

  @Override
  public int rank() {
    return rank;
  }

  @Override
  public int nRanks() {
    return nRanks;
  }

  @Override
  public synchronized byte[][] allGather(byte[] mine, Duration timeout) {
    if (mine.length > MAX_CONTRIBUTION_BYTES) {
      throw new IllegalArgumentException(
          "rank "
              + rank
              + ": an allGather of "
              + mine.length
              + " bytes; the bootstrap carries at"
              + " most "
              + MAX_CONTRIBUTION_BYTES);
    }
    try {
      socket.setSoTimeout((int) Math.min(Integer.MAX_VALUE, timeout.toMillis()));
      out.writeInt(mine.length);
      out.write(mine);
      out.flush();
      byte[][] all = new byte[nRanks][];
      for (int r = 0; r < nRanks; r++) {
        all[r] =
            new byte
                [WireLimits.checkLength(
                    in.readInt(), MAX_CONTRIBUTION_BYTES, "the bootstrap root, for rank " + r)];
        in.readFully(all[r]);
      }
      return all;
    } catch (SocketTimeoutException e) {
      throw new CclTimeoutException(
          "rank " + rank + ": bootstrap allGather: not every rank arrived within " + timeout);
    } catch (WireLimits.LengthRefused e) {
      close();
      throw new CclException("rank " + rank + ": bootstrap allGather: " + e.getMessage(), e);
    } catch (IOException e) {
      throw new CclException(
          "rank " + rank + ": bootstrap allGather failed (did the root or a rank die?): " + e, e);
    }
  }

  @Override
  public String localHost() {
    return socket.getLocalAddress().getHostAddress();
  }

  @Override
  public void close() {
    closeQuietly(socket);
  }

  private static void closeQuietly(Socket s) {
    try {
      s.close();
    } catch (IOException ignored) {
      // nothing to release beyond the socket
    }
  }

  /** The parts of a root's address string. */
  record RootAddress(String host, int port, byte[] secret) {
    static RootAddress parse(String address) {
      int hash = address == null ? -1 : address.lastIndexOf('#');
      if (hash < 0) {
        throw new IllegalArgumentException(
            "root="
                + address
                + " has no secret; expected host:port#secret, the string"
                + " TcpBootstrapRoot.address() returns");
      }
      String hostPort = address.substring(0, hash);
      int colon = hostPort.lastIndexOf(':');
      if (colon <= 0) {
        throw new IllegalArgumentException(
            "root=" + hostPort + "#... is not an address; expected host:port#secret");
      }
      int port;
      try {
        port = Integer.parseInt(hostPort.substring(colon + 1));
      } catch (NumberFormatException e) {
        port = -1;
      }
      if (port < 1 || port > 65535) {
        throw new IllegalArgumentException(
            "root=" + hostPort + "#... has no valid port; expected host:port#secret");
      }
      byte[] secret;
      try {
        secret = ChallengeResponse.unhex(address.substring(hash + 1));
      } catch (IllegalArgumentException e) {
        secret = null;
      }
      if (secret == null || secret.length != ChallengeResponse.SECRET_BYTES) {
        throw new IllegalArgumentException(
            "root="
                + hostPort
                + "#... has a malformed secret; expected "
                + 2 * ChallengeResponse.SECRET_BYTES
                + " hex digits after '#'");
      }
      return new RootAddress(hostPort.substring(0, colon), port, secret);
    }

    InetSocketAddress socketAddress() {
      return new InetSocketAddress(host, port);
    }

    String hostPort() {
      return host + ":" + port;
    }
  }
}
