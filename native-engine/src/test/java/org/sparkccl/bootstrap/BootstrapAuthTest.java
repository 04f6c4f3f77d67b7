package org.sparkccl.bootstrap;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.sparkccl.CclException;
import org.sparkccl.CclTimeoutException;
import org.sparkccl.RankHarness;
import org.sparkccl.auth.ChallengeResponse;

/**
 * The bootstrap admits only ranks that hold the root's secret, is not held up by connections that
 * say nothing, refuses lengths it cannot honour before allocating, and names a version mismatch.
 */
@DisplayName("bootstrap: authenticated, concurrent, bounded")
class BootstrapAuthTest {
  private static final Duration FORM = Duration.ofSeconds(20);
  private static final InetAddress LOOPBACK = loopback();

  @Test
  @Timeout(60)
  void aWrongSecretIsRefusedAndTheRealRanksStillForm() throws Exception {
    try (TcpBootstrapRoot root = TcpBootstrapRoot.start("127.0.0.1", 3)) {
      String right = root.address();
      String wrong =
          right.substring(0, right.indexOf('#') + 1)
              + ChallengeResponse.hex(ChallengeResponse.newSecret());
      long t0 = System.nanoTime();
      CclException e =
          assertThrows(
              CclException.class, () -> TcpBootstrap.connect(wrong, 0, 3, Duration.ofSeconds(20)));
      assertFalse(e instanceof CclTimeoutException, "refused at once, not timed out: " + e);
      assertTrue(e.getMessage().contains("does not hold this address's secret"), e.getMessage());
      assertTrue(System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(5), "refused promptly");

      // a stranger who answers the challenge with a guess is told no, and closed
      try (Socket s = new Socket(LOOPBACK, port(right))) {
        s.setSoTimeout(10_000);
        DataOutputStream out = new DataOutputStream(s.getOutputStream());
        DataInputStream in = new DataInputStream(s.getInputStream());
        out.write(
            new BootstrapHandshake.Opening(
                    BootstrapHandshake.MAGIC, BootstrapHandshake.VERSION, 1, 3)
                .encode());
        out.write(ChallengeResponse.newNonce());
        out.flush();
        in.readFully(new byte[8 + ChallengeResponse.NONCE_BYTES + ChallengeResponse.PROOF_BYTES]);
        out.write(ChallengeResponse.newNonce()); // 32 random bytes as the proof
        out.flush();
        assertEquals(BootstrapHandshake.BAD_PROOF, in.readInt());
        assertEquals(-1, in.read(), "the root closes a refused connection");
      }
      assertFormsAndGathers(right, 3);
    }
  }

  @Test
  @Timeout(60)
  void connectionsThatSayNothingDoNotBlockAndAreClosedAtTheirDeadline() throws Exception {
    try (TcpBootstrapRoot root = TcpBootstrapRoot.start("127.0.0.1", 2, Duration.ofMillis(1500));
        Socket silent = new Socket(LOOPBACK, port(root.address()));
        Socket partial = new Socket(LOOPBACK, port(root.address()))) {
      partial.getOutputStream().write(new byte[] {0x53, 0x43, 0x42});
      long t0 = System.nanoTime();
      assertFormsAndGathers(root.address(), 2);
      long formed = System.nanoTime() - t0;
      assertTrue(
          formed < TimeUnit.MILLISECONDS.toNanos(1500),
          "the ranks formed in " + formed / 1_000_000 + " ms, before the idle ones' deadline");
      for (Socket s : new Socket[] {silent, partial}) {
        s.setSoTimeout(10_000);
        long t1 = System.nanoTime();
        assertEquals(-1, s.getInputStream().read(), "an idle connection is closed by the root");
        assertTrue(System.nanoTime() - t1 < TimeUnit.SECONDS.toNanos(5), "within its deadline");
      }
    }
  }

  @ParameterizedTest
  @ValueSource(
      ints = {-1, Integer.MIN_VALUE, TcpBootstrap.MAX_CONTRIBUTION_BYTES + 1, Integer.MAX_VALUE})
  @Timeout(60)
  void theRootRefusesALengthOutsideItsLimitAndTheRanksFailAtOnce(int length) throws Exception {
    try (TcpBootstrapRoot root = TcpBootstrapRoot.start("127.0.0.1", 2)) {
      Throwable[] errors =
          RankHarness.runCollect(
              2,
              FORM,
              rank -> {
                try (TcpBootstrap b =
                    TcpBootstrap.connect(root.address(), rank, 2, Duration.ofSeconds(20))) {
                  if (rank == 1) {
                    b.out.writeInt(length);
                    b.out.flush();
                  }
                  b.allGather(new byte[] {(byte) rank}, Duration.ofSeconds(20));
                }
              });
      for (Throwable t : errors) {
        assertTrue(t instanceof CclException && !(t instanceof CclTimeoutException), "got " + t);
      }
    }
  }

  @ParameterizedTest
  @ValueSource(ints = {-7, TcpBootstrap.MAX_CONTRIBUTION_BYTES + 1, Integer.MAX_VALUE})
  @Timeout(60)
  void aRankRefusesALengthFromTheRootOutsideItsLimit(int length) throws Exception {
    byte[] secret = ChallengeResponse.newSecret();
    try (ServerSocket fakeRoot = new ServerSocket()) {
      fakeRoot.bind(new InetSocketAddress(LOOPBACK, 0));
      String address = "127.0.0.1:" + fakeRoot.getLocalPort() + "#" + ChallengeResponse.hex(secret);
      Thread serving =
          new Thread(
              () -> {
                try (Socket s = fakeRoot.accept()) {
                  BootstrapHandshake.accept(
                      s,
                      new ChallengeResponse(secret),
                      System.nanoTime() + TimeUnit.SECONDS.toNanos(20),
                      o -> BootstrapHandshake.ACCEPTED);
                  s.setSoTimeout(20_000);
                  DataInputStream in = new DataInputStream(s.getInputStream());
                  in.readFully(new byte[in.readInt()]);
                  DataOutputStream out = new DataOutputStream(s.getOutputStream());
                  out.writeInt(length);
                  out.flush();
                  in.read(); // until the rank hangs up
                } catch (IOException ignored) {
                  // the assertion is on the rank's side
                }
              });
      serving.setDaemon(true);
      serving.start();
      try (TcpBootstrap b = TcpBootstrap.connect(address, 0, 1, Duration.ofSeconds(20))) {
        CclException e =
            assertThrows(
                CclException.class, () -> b.allGather(new byte[] {1, 2}, Duration.ofSeconds(20)));
        assertTrue(e.getMessage().contains("announced " + length + " bytes"), e.getMessage());
      }
      serving.join(20_000);
    }
  }

  @Test
  @Timeout(60)
  void aVersionMismatchIsNamedOnTheRankAndTheRootStillAdmitsTheRealRank() throws Exception {
    try (TcpBootstrapRoot root = TcpBootstrapRoot.start("127.0.0.1", 1)) {
      int theirs = BootstrapHandshake.VERSION + 1;
      CclException e =
          assertThrows(
              CclException.class,
              () -> TcpBootstrap.connect(root.address(), 0, 1, Duration.ofSeconds(20), theirs));
      assertTrue(
          e.getMessage()
              .contains(
                  "speaks protocol version "
                      + BootstrapHandshake.VERSION
                      + ", this rank version "
                      + theirs),
          e.getMessage());
      assertFormsAndGathers(root.address(), 1);
    }
  }

  @Test
  void anAddressWithoutAWellFormedSecretIsRefusedBeforeConnecting() {
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> TcpBootstrap.connect("127.0.0.1:1", 0, 1, Duration.ofSeconds(1)));
    assertTrue(e.getMessage().contains("has no secret"), e.getMessage());
    e =
        assertThrows(
            IllegalArgumentException.class,
            () -> TcpBootstrap.connect("127.0.0.1:1#abc", 0, 1, Duration.ofSeconds(1)));
    assertTrue(e.getMessage().contains("malformed secret"), e.getMessage());
  }

  private static InetAddress loopback() {
    try {
      return InetAddress.getByAddress(new byte[] {127, 0, 0, 1});
    } catch (IOException e) {
      throw new AssertionError(e);
    }
  }

  private static int port(String address) {
    return Integer.parseInt(address.substring(address.lastIndexOf(':') + 1, address.indexOf('#')));
  }

  /** Every rank joins and one allGather of random bytes of random lengths comes back whole. */
  private static void assertFormsAndGathers(String address, int n) {
    SplittableRandom random = new SplittableRandom();
    byte[][] mine = new byte[n][];
    for (int r = 0; r < n; r++) {
      mine[r] = new byte[random.nextInt(0, 3000)];
      random.nextBytes(mine[r]);
    }
    byte[][][] got = new byte[n][][];
    RankHarness.run(
        n,
        FORM,
        rank -> {
          try (TcpBootstrap b = TcpBootstrap.connect(address, rank, n, Duration.ofSeconds(20))) {
            got[rank] = b.allGather(mine[rank], Duration.ofSeconds(20));
          }
        });
    for (int r = 0; r < n; r++) {
      for (int from = 0; from < n; from++) {
        assertArrayEquals(mine[from], got[r][from], "rank " + r + " got rank " + from + "'s bytes");
      }
    }
  }
}
