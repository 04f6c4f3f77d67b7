package org.sparkccl.transport.socket;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.channels.Selector;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.sparkccl.CclException;
import org.sparkccl.auth.ChallengeResponse;
import org.sparkccl.idle.IdleStrategies;
import org.sparkccl.transport.RecvConnection;
import org.sparkccl.transport.SendConnection;

/**
 * Data sockets prove the communicator's secret in both directions, never send it, and cannot hold
 * the listener: a half-open handshake has a deadline and the number of them a cap.
 */
@DisplayName("data plane: authenticated sockets, bounded handshakes")
class DataPlaneAuthTest {
  private static final InetAddress LOOPBACK = loopback();

  @Test
  @Timeout(60)
  void anotherSecretIsRefusedBothWaysAndTheRealPeerIsAccepted() throws Exception {
    byte[] secret = ChallengeResponse.newSecret();
    try (SocketTransport receiver = transport(1, secret);
        SocketTransport sender = transport(0, secret);
        SocketTransport stale = transport(0, ChallengeResponse.newSecret());
        Selector recvSel = Selector.open();
        Selector sendSel = Selector.open();
        Socket guesser = new Socket(LOOPBACK, port(receiver))) {
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      CompletableFuture<RecvConnection[]> accepted =
          CompletableFuture.supplyAsync(() -> receiver.accept(0, 1, recvSel, () -> {}, deadline));
      // a rank of another attempt: the receiver's proof does not check out with its secret
      CclException e =
          assertThrows(
              CclException.class,
              () -> stale.connect(receiver.address(), 1, 0, sendSel, () -> {}, deadline));
      assertTrue(e.getMessage().contains("did not prove this communicator's secret"), e.toString());
      // a stranger who answers the challenge with a guess: closed, never adopted
      guesser.setSoTimeout(10_000);
      DataOutputStream out = new DataOutputStream(guesser.getOutputStream());
      out.write(new Handshake(0, 0, Handshake.CONTROL).encode());
      out.write(ChallengeResponse.newNonce());
      out.flush();
      new DataInputStream(guesser.getInputStream())
          .readFully(new byte[ConnectorHandshake.ANSWER_BYTES]);
      out.write(ChallengeResponse.newNonce());
      out.flush();
      assertEquals(-1, guesser.getInputStream().read(), "the guesser is closed");

      SendConnection real = sender.connect(receiver.address(), 1, 0, sendSel, () -> {}, deadline);
      RecvConnection[] in = accepted.get(30, TimeUnit.SECONDS);
      assertEquals(1, in.length);
      assertEquals(0, in[0].peer(), "the real rank 0 is the accepted peer");
      real.close();
      in[0].close();
    }
  }

  @Test
  @Timeout(60)
  void aConnectToARankThatClosedSaysTheRankIsGone() throws Exception {
    byte[] secret = ChallengeResponse.newSecret();
    SocketTransport gone = transport(1, secret);
    String address = gone.address();
    gone.close();
    try (SocketTransport sender = transport(0, secret);
        Selector sendSel = Selector.open()) {
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      CclException e =
          assertThrows(
              CclException.class, () -> sender.connect(address, 1, 0, sendSel, () -> {}, deadline));
      assertTrue(
          e.getMessage().contains("rank 1 refused it: it has failed or closed its communicator"),
          e.getMessage());
    }
  }

  @Test
  @Timeout(60)
  void theSecretNeverCrossesTheWireAndAVersionMismatchIsNamed() throws Exception {
    byte[] secret = ChallengeResponse.newSecret();
    ChallengeResponse auth = new ChallengeResponse(secret);
    try (SocketTransport sender = transport(0, secret);
        Selector sendSel = Selector.open();
        ServerSocket fake = new ServerSocket()) {
      fake.bind(new InetSocketAddress(LOOPBACK, 0));
      ByteArrayOutputStream wire = new ByteArrayOutputStream();
      CompletableFuture<Void> served =
          CompletableFuture.runAsync(
              () -> {
                try (Socket s = fake.accept()) {
                  s.setSoTimeout(20_000);
                  DataInputStream in = new DataInputStream(s.getInputStream());
                  byte[] hello = new byte[Handshake.BYTES + ChallengeResponse.NONCE_BYTES];
                  in.readFully(hello);
                  byte[] opening = Arrays.copyOf(hello, Handshake.BYTES);
                  byte[] nonce = Arrays.copyOfRange(hello, Handshake.BYTES, hello.length);
                  byte[] mine = ChallengeResponse.newNonce();
                  DataOutputStream out = new DataOutputStream(s.getOutputStream());
                  out.writeInt(Handshake.MAGIC);
                  out.writeInt(Handshake.VERSION);
                  out.write(mine);
                  out.write(auth.acceptorProof(opening, nonce, mine));
                  out.flush();
                  byte[] proof = new byte[ChallengeResponse.PROOF_BYTES];
                  in.readFully(proof);
                  assertTrue(auth.isConnectorProof(proof, opening, nonce, mine));
                  wire.write(hello);
                  wire.write(proof);
                } catch (IOException ex) {
                  throw new AssertionError(ex);
                }
              });
      String address = "127.0.0.1:" + fake.getLocalPort();
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      SendConnection c = sender.connect(address, 1, 0, sendSel, () -> {}, deadline);
      served.get(30, TimeUnit.SECONDS);
      c.close();
      byte[] sent = wire.toByteArray();
      assertEquals(Handshake.BYTES + ChallengeResponse.NONCE_BYTES + 32, sent.length);
      assertFalse(contains(sent, secret), "the secret is on the wire");

      // a receiver of another release: the connector says which versions met
      try (SocketTransport receiver = transport(1, secret);
          Selector recvSel = Selector.open()) {
        CompletableFuture.runAsync(
            () -> {
              try {
                receiver.accept(0, 1, recvSel, () -> {}, System.nanoTime() + 3_000_000_000L);
              } catch (CclException expected) {
                // it times out without the refused socket
              }
            });
        CclException e =
            assertThrows(
                CclException.class,
                () ->
                    sender.connect(
                        receiver.address(),
                        1,
                        0,
                        sendSel,
                        () -> {},
                        deadline,
                        Handshake.VERSION + 1));
        assertTrue(
            e.getMessage()
                .contains(
                    "the peer speaks data protocol version "
                        + Handshake.VERSION
                        + ", this rank version "
                        + (Handshake.VERSION + 1)),
            e.getMessage());
      }
    }
  }

  @Test
  @Timeout(60)
  void halfOpenHandshakesMeetTheirDeadlineAndTheirCap() throws Exception {
    byte[] secret = ChallengeResponse.newSecret();
    List<Socket> silent = new ArrayList<>();
    try (SocketTransport receiver = transport(1, secret);
        SocketTransport sender = transport(0, secret);
        Selector recvSel = Selector.open();
        Selector sendSel = Selector.open()) {
      receiver.handshakeNanos = TimeUnit.MILLISECONDS.toNanos(1500);
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      CompletableFuture<RecvConnection[]> accepted =
          CompletableFuture.supplyAsync(() -> receiver.accept(0, 1, recvSel, () -> {}, deadline));
      int extra = 6;
      for (int i = 0; i < SocketTransport.MAX_PENDING_HANDSHAKES + extra; i++) {
        Socket s = new Socket(LOOPBACK, port(receiver));
        s.setSoTimeout(10_000);
        silent.add(s);
      }
      long t0 = System.nanoTime();
      int closed = 0;
      for (Socket s : silent) {
        if (s.getInputStream().read() == -1) {
          closed++;
        }
      }
      long took = System.nanoTime() - t0;
      assertEquals(silent.size(), closed, "every silent socket is closed");
      assertTrue(
          took < TimeUnit.SECONDS.toNanos(5), "within the deadline: " + took / 1_000_000 + " ms");
      SendConnection real = sender.connect(receiver.address(), 1, 0, sendSel, () -> {}, deadline);
      RecvConnection[] in = accepted.get(30, TimeUnit.SECONDS);
      assertEquals(0, in[0].peer());
      real.close();
      in[0].close();
    } finally {
      for (Socket s : silent) {
        s.close();
      }
    }
  }

  private static SocketTransport transport(int rank, byte[] secret) {
    SocketTransport t = SocketTransport.listen("127.0.0.1", rank, 0, 1, IdleStrategies.defaults());
    t.useSecret(secret);
    return t;
  }

  private static int port(SocketTransport t) {
    String a = t.address();
    return Integer.parseInt(a.substring(a.lastIndexOf(':') + 1));
  }

  private static boolean contains(byte[] hay, byte[] needle) {
    for (int i = 0; i + needle.length <= hay.length; i++) {
      if (Arrays.equals(hay, i, i + needle.length, needle, 0, needle.length)) {
        return true;
      }
    }
    return false;
  }

  private static InetAddress loopback() {
    try {
      return InetAddress.getByAddress(new byte[] {127, 0, 0, 1});
    } catch (IOException e) {
      throw new AssertionError(e);
    }
  }
}
