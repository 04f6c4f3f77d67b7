package org.sparkccl;

import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.sparkccl.bootstrap.Bootstrap;
import org.sparkccl.bootstrap.LocalBootstrap;
import org.sparkccl.config.CclConfig;
import org.sparkccl.config.Transport;
import org.sparkccl.device.DeviceBuffer;
import org.sparkccl.device.HostDevice;

/**
 * A link that stops carrying bytes: every connection to rank 1 goes through a relay in this test
 * (the ranks' bootstrap hands out the relay's address in place of rank 1's), and in the middle of a
 * run of allReduces the relay keeps its connections open but drops every byte. No TCP error ever
 * comes, so only the engine's timeout can tell; every rank must fail within it plus 5 s.
 */
@DisplayName("a link that stops carrying bytes")
class BlackholeRelayTest {
  private static final int N = 3;
  private static final Duration TIMEOUT = Duration.ofSeconds(3);
  private static final Pattern LOOPBACK_ADDRESS = Pattern.compile("127\\.0\\.0\\.1:\\d{1,5}");

  @Test
  @DisplayName(
      "blackholing the connections to one rank mid-allReduce fails every rank within the timeout"
          + " + 5 s, with no hang")
  void everyRankFailsInTimeWhenALinkGoesSilent() throws Exception {
    try (Relay relay = new Relay()) {
      LocalBootstrap.Group group = LocalBootstrap.group(N);
      CclConfig config =
          CclConfig.builder()
              .transport(Transport.SOCKET)
              .buffSize(256 << 10)
              .timeout(TIMEOUT)
              .build();
      CyclicBarrier running = new CyclicBarrier(N + 1);
      long[] failedAt = new long[N];
      String[] errors = new String[N];
      Thread driver =
          new Thread(
              () -> {
                try {
                  running.await(60, TimeUnit.SECONDS);
                  Thread.sleep(30); // somewhere inside a collective
                  relay.blackhole();
                } catch (Exception e) {
                  throw new IllegalStateException(e);
                }
              });
      driver.start();
      Throwable[] thrown =
          RankHarness.runCollect(
              N,
              Duration.ofSeconds(90),
              rank -> {
                Bootstrap boot = new RelayedBootstrap(group.rank(rank), relay, 1);
                try (DeviceBuffer buf = HostDevice.INSTANCE.allocate(4L << 20);
                    Communicator comm = Communicator.create(boot, config)) {
                  buf.copyFromHost(new float[1 << 20], 0);
                  long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(40);
                  for (int i = 0; System.nanoTime() < end; i++) {
                    if (i == 3) {
                      running.await(60, TimeUnit.SECONDS);
                    }
                    try {
                      comm.allReduce(buf, buf, 1 << 20, DataType.FLOAT32, ReduceOp.MAX);
                    } catch (CclException e) {
                      failedAt[rank] = System.nanoTime();
                      errors[rank] = e.getMessage();
                      comm.close(); // stop the kernels before the buffer is freed
                      return;
                    }
                  }
                  errors[rank] =
                      "NO FAILURE: allReduces went on for 40 s; relay connections "
                          + relay.connections()
                          + ", blackholed "
                          + (relay.blackholedAt() > 0);
                }
              });
      driver.join(10_000);
      RankHarness.assertNoErrors(thrown, "ranks");
      assertTrue(relay.blackholedAt() > 0, "the relay never went silent");
      assertTrue(relay.connections() > 0, "no connection went through the relay");
      for (int r = 0; r < N; r++) {
        assertNotNull(errors[r], "rank " + r + " did not fail");
        assertTrue(!errors[r].startsWith("NO FAILURE"), "rank " + r + ": " + errors[r]);
        long ms = (failedAt[r] - relay.blackholedAt()) / 1_000_000;
        System.out.println(
            "BlackholeRelayTest: rank "
                + r
                + " failed "
                + ms
                + " ms after the"
                + " link went silent: "
                + errors[r]);
        assertTrue(
            ms <= TIMEOUT.toMillis() + 5000,
            "rank " + r + " failed " + ms + " ms after: " + errors[r]);
        assertTrue(errors[r].contains("rank "), "the error should name a rank: " + errors[r]);
      }
    }
  }

  /**
   * Hands out {@code relay}'s address in place of rank {@code relayed}'s own socket address: in
   * every rank's contribution, the length-prefixed {@code 127.0.0.1:port} of that rank is replaced.
   * Nothing else of the exchange is touched.
   */
  private static final class RelayedBootstrap implements Bootstrap {
    private final Bootstrap inner;
    private final Relay relay;
    private final int relayed;

    RelayedBootstrap(Bootstrap inner, Relay relay, int relayed) {
      this.inner = inner;
      this.relay = relay;
      this.relayed = relayed;
    }

    @Override
    public int rank() {
      return inner.rank();
    }

    @Override
    public int nRanks() {
      return inner.nRanks();
    }

    @Override
    public String localHost() {
      return "127.0.0.1";
    }

    @Override
    public byte[][] allGather(byte[] mine, Duration timeout) {
      byte[][] all = inner.allGather(mine, timeout);
      all[relayed] = rewrite(all[relayed]);
      return all;
    }

    private byte[] rewrite(byte[] contribution) {
      String text = new String(contribution, StandardCharsets.ISO_8859_1);
      Matcher m = LOOPBACK_ADDRESS.matcher(text);
      ByteBuffer out = ByteBuffer.allocate(contribution.length + 64);
      int copied = 0;
      while (m.find()) {
        int at = m.start();
        if (at >= 4 && ByteBuffer.wrap(contribution, at - 4, 4).getInt() == m.group().length()) {
          relay.target(m.group());
          byte[] to = relay.address().getBytes(StandardCharsets.ISO_8859_1);
          out.put(contribution, copied, at - 4 - copied).putInt(to.length).put(to);
          copied = m.end();
        }
      }
      out.put(contribution, copied, contribution.length - copied);
      byte[] b = new byte[out.position()];
      out.flip().get(b);
      return b;
    }
  }

  /** A TCP forwarder to one address that can start dropping every byte, connections kept open. */
  private static final class Relay implements AutoCloseable {
    private final ServerSocket server;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private final AtomicLong blackholedAt = new AtomicLong();
    private volatile String target;

    Relay() throws IOException {
      server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
      Thread t = new Thread(this::acceptLoop, "relay-accept");
      t.setDaemon(true);
      t.start();
    }

    String address() {
      return "127.0.0.1:" + server.getLocalPort();
    }

    synchronized void target(String hostPort) {
      if (target != null && !target.equals(hostPort)) {
        throw new IllegalStateException("one relay, one target: " + target + " / " + hostPort);
      }
      target = hostPort;
    }

    void blackhole() {
      blackholedAt.compareAndSet(0, System.nanoTime());
    }

    long blackholedAt() {
      return blackholedAt.get();
    }

    int connections() {
      return sockets.size() / 2;
    }

    private void acceptLoop() {
      try {
        while (true) {
          Socket in = server.accept();
          String t = target;
          int colon = t.lastIndexOf(':');
          Socket out = new Socket(t.substring(0, colon), Integer.parseInt(t.substring(colon + 1)));
          in.setTcpNoDelay(true);
          out.setTcpNoDelay(true);
          sockets.add(in);
          sockets.add(out);
          pump(in, out);
          pump(out, in);
        }
      } catch (IOException e) {
        // closed
      }
    }

    private void pump(Socket from, Socket to) {
      Thread t =
          new Thread(
              () -> {
                byte[] b = new byte[64 << 10];
                try (InputStream in = from.getInputStream();
                    OutputStream out = to.getOutputStream()) {
                  for (int n; (n = in.read(b)) >= 0; ) {
                    if (blackholedAt.get() == 0) {
                      out.write(b, 0, n);
                    }
                  }
                } catch (IOException e) {
                  // one side closed
                }
              },
              "relay-pump");
      t.setDaemon(true);
      t.start();
    }

    @Override
    public void close() throws IOException {
      server.close();
      for (Socket s : sockets) {
        s.close();
      }
    }
  }
}
