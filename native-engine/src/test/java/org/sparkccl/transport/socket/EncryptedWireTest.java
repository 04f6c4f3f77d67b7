package org.sparkccl.transport.socket;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.channels.Selector;
import java.util.HashSet;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.sparkccl.CclException;
import org.sparkccl.DataType;
import org.sparkccl.ReduceOp;
import org.sparkccl.auth.ChallengeResponse;
import org.sparkccl.comm.CollectiveCall;
import org.sparkccl.idle.IdleStrategies;
import org.sparkccl.transport.NetRequest;
import org.sparkccl.transport.RecvConnection;
import org.sparkccl.transport.SendConnection;

/**
 * Reads the wire between two ranks through a recording relay: with encryption on, no 8-byte run of
 * the random payload appears in what crossed, either way; with it off, the payload is there in
 * clear (so the check can fail). An altered byte is caught, never delivered.
 */
@DisplayName("socket transport: encryption, checked on the wire")
class EncryptedWireTest {
  /** Inline on the control socket. */
  private static final int SMALL = 3_000;

  /** Cut into chunks over the two data sockets, several records each. */
  private static final int LARGE = 700_000;

  private static final CollectiveCall CALL =
      new CollectiveCall(CollectiveCall.Kind.ALL_REDUCE, 1, 1, DataType.INT32, ReduceOp.SUM, 0);

  @Test
  @Timeout(60)
  void withEncryptionNoPayloadBytesCrossInClear() throws Exception {
    Captured c = exchange(true);
    assertEquals(0, c.windowsSeen, "8-byte runs of the payload seen on the wire, encrypted");
    assertTrue(c.wireBytes > SMALL + LARGE, "the payload crossed: " + c.wireBytes + " bytes");
  }

  @Test
  @Timeout(60)
  void withoutEncryptionThePayloadCrossesInClear() throws Exception {
    Captured c = exchange(false);
    // nearly every run is there; a run split between two relay reads can be missed
    assertTrue(
        c.windowsSeen > c.windows * 9 / 10,
        "without encryption the tap must see the payload: " + c.windowsSeen + " of " + c.windows);
  }

  @Test
  @Timeout(60)
  void anAlteredByteFailsTheConnectionInsteadOfArriving() throws Exception {
    byte[] secret = ChallengeResponse.newSecret();
    try (SocketTransport receiver = transport(1, secret, true);
        SocketTransport sender = transport(0, secret, true);
        // after the handshake's 84 bytes (opening, nonce, proof): inside the first record
        TapRelay relay = new TapRelay(receiver.address(), 84 + 40);
        Selector recvSel = Selector.open();
        Selector sendSel = Selector.open()) {
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      CompletableFuture<RecvConnection[]> accepted =
          CompletableFuture.supplyAsync(() -> receiver.accept(0, 1, recvSel, () -> {}, deadline));
      SendConnection out = sender.connect(relay.address(), 1, 0, sendSel, () -> {}, deadline);
      RecvConnection in = accepted.get(30, TimeUnit.SECONDS)[0];
      ByteBuffer sent = random(SMALL, 7);
      ByteBuffer got = ByteBuffer.allocateDirect(SMALL);
      NetRequest s = out.postSend(sent, SMALL, 0, CALL);
      CclException e =
          assertThrows(CclException.class, () -> drive(s, in.postRecv(got, 0), deadline));
      assertTrue(e.getMessage().contains("integrity check"), e.toString());
      out.close();
      in.close();
    }
  }

  private record Captured(long windows, long windowsSeen, long wireBytes) {}

  /** Sends a small and a large random message through the tap; returns what the tap saw. */
  private static Captured exchange(boolean seal) throws Exception {
    byte[] secret = ChallengeResponse.newSecret();
    try (SocketTransport receiver = transport(1, secret, seal);
        SocketTransport sender = transport(0, secret, seal);
        TapRelay relay = new TapRelay(receiver.address(), -1);
        Selector recvSel = Selector.open();
        Selector sendSel = Selector.open()) {
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      CompletableFuture<RecvConnection[]> accepted =
          CompletableFuture.supplyAsync(() -> receiver.accept(0, 1, recvSel, () -> {}, deadline));
      SendConnection out = sender.connect(relay.address(), 1, 0, sendSel, () -> {}, deadline);
      RecvConnection in = accepted.get(30, TimeUnit.SECONDS)[0];
      ByteBuffer small = random(SMALL, 1);
      ByteBuffer large = random(LARGE, 2);
      long step = 0;
      for (ByteBuffer msg : new ByteBuffer[] {small, large}) {
        ByteBuffer got = ByteBuffer.allocateDirect(msg.capacity());
        drive(out.postSend(msg, msg.capacity(), step, CALL), in.postRecv(got, step), deadline);
        assertEquals(msg.clear(), got.clear(), "message of " + msg.capacity() + " bytes arrives");
        step++;
      }
      byte[] up = relay.upstream();
      byte[] down = relay.downstream();
      out.close();
      in.close();
      Set<Long> onWire = runs(up);
      onWire.addAll(runs(down));
      long windows = 0;
      long seen = 0;
      for (ByteBuffer msg : new ByteBuffer[] {small, large}) {
        for (int i = 0; i + 8 <= msg.capacity(); i += 8) {
          windows++;
          if (onWire.contains(msg.getLong(i))) {
            seen++;
          }
        }
      }
      return new Captured(windows, seen, up.length + (long) down.length);
    }
  }

  /** Every 8-byte run of {@code b}, at every offset. */
  private static Set<Long> runs(byte[] b) {
    ByteBuffer w = ByteBuffer.wrap(b);
    Set<Long> s = new HashSet<>();
    for (int i = 0; i + 8 <= b.length; i++) {
      s.add(w.getLong(i));
    }
    return s;
  }

  private static void drive(NetRequest send, NetRequest recv, long deadlineNanos) {
    boolean sent = false;
    boolean received = false;
    while (!(sent && received)) {
      if (System.nanoTime() > deadlineNanos) {
        throw new AssertionError("the transfer did not finish in time");
      }
      sent = sent || send.test();
      received = received || recv.test();
      Thread.onSpinWait();
    }
  }

  private static ByteBuffer random(int bytes, long seed) {
    SplittableRandom rnd = new SplittableRandom(seed);
    ByteBuffer b = ByteBuffer.allocateDirect(bytes);
    for (int i = 0; i < bytes; i++) {
      b.put(i, (byte) rnd.nextInt(256));
    }
    return b;
  }

  /** One helper thread with two data sockets, so large messages take the data sockets. */
  private static SocketTransport transport(int rank, byte[] secret, boolean seal) {
    SocketTransport t = SocketTransport.listen("127.0.0.1", rank, 1, 2, IdleStrategies.defaults());
    t.useSecret(secret, seal);
    return t;
  }
}
