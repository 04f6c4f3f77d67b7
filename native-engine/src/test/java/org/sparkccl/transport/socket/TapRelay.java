package org.sparkccl.transport.socket;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;

/**
 * A relay between a connector and a listener that records every byte each way, as a tap on the wire
 * would: the connector is given {@link #address()} instead of the listener's. It can flip one byte
 * going to the listener on its first connection, to show what an altered stream does.
 */
final class TapRelay implements AutoCloseable {
  private final ServerSocket server;
  private final InetSocketAddress target;
  private final long flipUpstreamAt;
  private final List<Socket> sockets = new ArrayList<>();
  private final List<Thread> pumps = new ArrayList<>();
  private final ByteArrayOutputStream upstream = new ByteArrayOutputStream();
  private final ByteArrayOutputStream downstream = new ByteArrayOutputStream();
  private final Thread acceptor;
  private int connections;

  /**
   * Relays to {@code targetAddress} ({@code host:port}); {@code flipUpstreamAt} is the offset of
   * the byte to flip on the first connection's way to the listener, or -1 for none.
   */
  TapRelay(String targetAddress, long flipUpstreamAt) throws IOException {
    int colon = targetAddress.lastIndexOf(':');
    this.target =
        new InetSocketAddress(
            targetAddress.substring(0, colon),
            Integer.parseInt(targetAddress.substring(colon + 1)));
    this.flipUpstreamAt = flipUpstreamAt;
    this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    this.acceptor = new Thread(this::acceptLoop, "tap-relay-accept");
    acceptor.setDaemon(true);
    acceptor.start();
  }

  /** {@code host:port} to connect to instead of the listener. */
  String address() {
    return "127.0.0.1:" + server.getLocalPort();
  }

  /** Every byte that went towards the listener, on all connections. */
  byte[] upstream() {
    synchronized (upstream) {
      return upstream.toByteArray();
    }
  }

  /** Every byte that came back from the listener, on all connections. */
  byte[] downstream() {
    synchronized (downstream) {
      return downstream.toByteArray();
    }
  }

  private void acceptLoop() {
    try {
      while (!server.isClosed()) {
        Socket from = server.accept();
        Socket to = new Socket(target.getAddress(), target.getPort());
        from.setTcpNoDelay(true);
        to.setTcpNoDelay(true);
        long flip = connections++ == 0 ? flipUpstreamAt : -1;
        synchronized (sockets) {
          sockets.add(from);
          sockets.add(to);
          pumps.add(pump(from, to, upstream, flip));
          pumps.add(pump(to, from, downstream, -1));
        }
      }
    } catch (IOException e) {
      // closed
    }
  }

  private static Thread pump(Socket from, Socket to, ByteArrayOutputStream tap, long flipAt) {
    Thread t =
        new Thread(
            () -> {
              byte[] buf = new byte[64 << 10];
              long offset = 0;
              try (InputStream in = from.getInputStream();
                  OutputStream out = to.getOutputStream()) {
                int n;
                while ((n = in.read(buf)) > 0) {
                  if (flipAt >= offset && flipAt < offset + n) {
                    buf[(int) (flipAt - offset)] ^= 0x01;
                  }
                  offset += n;
                  synchronized (tap) {
                    tap.write(buf, 0, n);
                  }
                  out.write(buf, 0, n);
                }
              } catch (IOException e) {
                // a side closed
              }
              closeQuietly(from);
              closeQuietly(to);
            },
            "tap-relay-pump");
    t.setDaemon(true);
    t.start();
    return t;
  }

  private static void closeQuietly(Socket s) {
    try {
      s.close();
    } catch (IOException e) {
      // closing anyway
    }
  }

  @Override
  public void close() throws InterruptedException {
    closeQuietly(server);
    synchronized (sockets) {
      sockets.forEach(TapRelay::closeQuietly);
    }
    acceptor.join(5_000);
    synchronized (sockets) {
      for (Thread t : pumps) {
        t.join(5_000);
      }
    }
  }

  private static void closeQuietly(ServerSocket s) {
    try {
      s.close();
    } catch (IOException e) {
      // closing anyway
    }
  }
}
