package org.sparkccl.transport.socket;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.security.SecureRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.sparkccl.idle.IdleStrategies;
import org.sparkccl.transport.RecvConnection;
import org.sparkccl.transport.SendConnection;

/**
 * A rank of an earlier attempt (a Spark barrier stage that was retried) still connecting with its
 * old token must be refused, and must not take the place of the real peer.
 */
@DisplayName("connections with another attempt's token are refused")
class StaleTokenTest {
  @Test
  @Timeout(60)
  void aStaleAttemptsConnectionIsClosedAndTheRealPeerIsAccepted() throws Exception {
    long token = new SecureRandom().nextLong();
    long staleToken = token ^ 0x5A5A5A5AL;
    try (SocketTransport receiver =
            SocketTransport.listen("127.0.0.1", 1, 0, 1, IdleStrategies.defaults());
        SocketTransport sender =
            SocketTransport.listen("127.0.0.1", 0, 0, 1, IdleStrategies.defaults());
        Selector recvSel = Selector.open();
        Selector sendSel = Selector.open();
        SocketChannel stale = SocketChannel.open()) {
      String[] hostPort = receiver.address().split(":");
      stale.connect(new InetSocketAddress(hostPort[0], Integer.parseInt(hostPort[1])));
      // rank 0, channel 0, control socket: everything right but the token
      ByteBuffer hello = new Handshake(staleToken, 0, 0, Handshake.CONTROL).encode();
      while (hello.hasRemaining()) {
        stale.write(hello);
      }
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      SendConnection out =
          sender.connect(receiver.address(), 1, 0, token, sendSel, () -> {}, deadline);
      RecvConnection[] in = receiver.accept(0, 1, token, recvSel, () -> {}, deadline);
      assertEquals(1, in.length);
      assertEquals(0, in[0].peer(), "the real rank 0 is the accepted peer");
      // the listener closed the stale socket: reading it ends
      stale.socket().setSoTimeout(10_000);
      int read = stale.socket().getInputStream().read();
      assertTrue(read == -1, "the stale connection should be closed, read " + read);
      out.close();
      in[0].close();
    }
  }
}
