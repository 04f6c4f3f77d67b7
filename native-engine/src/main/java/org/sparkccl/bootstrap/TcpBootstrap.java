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

/**
 * Separate processes forming a communicator over TCP, like {@code ncclCommInitRank}: every rank
 * gets the root's address string, its rank and the rank count.
 *
 * <pre>{@code
 * try (TcpBootstrap b = TcpBootstrap.connect(rootAddress, rank, nRanks, Duration.ofSeconds(60));
 *     Communicator comm = Communicator.create(b, CclConfig.fromEnvironment())) {
 *   comm.allReduce(buf, buf, count, DataType.FLOAT32, ReduceOp.SUM);
 * }
 * }</pre>
 */
public final class TcpBootstrap implements Bootstrap, AutoCloseable {
  private final Socket socket;
  private final DataInputStream in;
  private final DataOutputStream out;
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
   * Connects to the root at {@code rootAddress} ({@code host:port}), retrying until the timeout.
   */
  public static TcpBootstrap connect(String rootAddress, int rank, int nRanks, Duration timeout) {
    if (nRanks < 1 || rank < 0 || rank >= nRanks) {
      throw new IllegalArgumentException(
          "rank=" + rank + " nRanks=" + nRanks + " is invalid; expected 0 <= rank < nRanks");
    }
    int colon = rootAddress == null ? -1 : rootAddress.lastIndexOf(':');
    if (colon <= 0) {
      throw new IllegalArgumentException(
          "root=" + rootAddress + " is not an address; expected host:port");
    }
    InetSocketAddress to =
        new InetSocketAddress(
            rootAddress.substring(0, colon), Integer.parseInt(rootAddress.substring(colon + 1)));
    long deadline = System.nanoTime() + timeout.toNanos();
    IOException last = null;
    while (System.nanoTime() < deadline) {
      Socket s = new Socket();
      try {
        s.connect(to, (int) Math.max(1, Math.min(5_000, timeout.toMillis())));
        s.setTcpNoDelay(true);
        s.setSoTimeout((int) Math.min(Integer.MAX_VALUE, timeout.toMillis()));
        TcpBootstrap b = new TcpBootstrap(s, rank, nRanks);
        b.out.writeInt(TcpBootstrapRoot.MAGIC);
        b.out.writeInt(rank);
        b.out.writeInt(nRanks);
        b.out.flush();
        return b;
      } catch (IOException e) {
        last = e;
        try {
          s.close();
          Thread.sleep(50);
        } catch (IOException | InterruptedException ignored) {
          Thread.currentThread().interrupt();
          break;
        }
      }
    }
    throw new CclTimeoutException(
        "rank "
            + rank
            + ": cannot reach the bootstrap root at "
            + rootAddress
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
    try {
      socket.setSoTimeout((int) Math.min(Integer.MAX_VALUE, timeout.toMillis()));
      out.writeInt(mine.length);
      out.write(mine);
      out.flush();
      byte[][] all = new byte[nRanks][];
      for (int r = 0; r < nRanks; r++) {
        all[r] = new byte[in.readInt()];
        in.readFully(all[r]);
      }
      return all;
    } catch (SocketTimeoutException e) {
      throw new CclTimeoutException(
          "rank " + rank + ": bootstrap allGather: not every rank arrived within " + timeout);
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
    try {
      socket.close();
    } catch (IOException ignored) {
      // nothing to release beyond the socket
    }
  }
}
