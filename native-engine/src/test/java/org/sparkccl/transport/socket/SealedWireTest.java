package org.sparkccl.transport.socket;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.sparkccl.auth.ChallengeResponse;

/**
 * The sealed wire's framing under a non-blocking socket with small buffers: writes of one to three
 * buffers at a time, reads into buffers of random sizes; every byte arrives in order, and a write
 * reports bytes moved only once their record is in the socket.
 */
@DisplayName("sealed wire: records across partial writes and reads")
class SealedWireTest {
  @Test
  @Timeout(60)
  void randomGathersAndReadsDeliverEveryByteInOrder() throws Exception {
    byte[] message = new byte[3_000_000];
    new SplittableRandom(21).nextBytes(message);
    SealingKeys keys =
        SealingKeys.derive(
            new ChallengeResponse(ChallengeResponse.newSecret()),
            new byte[20],
            ChallengeResponse.newNonce(),
            ChallengeResponse.newNonce());
    try (ServerSocketChannel server = ServerSocketChannel.open()) {
      server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
      try (SocketChannel a = SocketChannel.open(server.getLocalAddress());
          SocketChannel b = server.accept()) {
        for (SocketChannel c : new SocketChannel[] {a, b}) {
          // a small send buffer forces partial writes; the receive buffer stays above loopback's
          // 64 KiB segment, or the sender waits on TCP's zero-window probes
          c.setOption(StandardSocketOptions.SO_SNDBUF, 16 << 10);
          c.setOption(StandardSocketOptions.SO_RCVBUF, 256 << 10);
          c.configureBlocking(false);
        }
        Wire out = keys.connectorEnd(a);
        Wire in = keys.acceptorEnd(b);
        CompletableFuture<Void> writer = CompletableFuture.runAsync(() -> write(out, message));
        byte[] got = read(in, message.length, writer);
        writer.get(30, TimeUnit.SECONDS);
        assertArrayEquals(message, got);
      }
    }
  }

  private static void write(Wire out, byte[] message) {
    SplittableRandom rnd = new SplittableRandom(5);
    int off = 0;
    try {
      while (off < message.length) {
        int parts = 1 + rnd.nextInt(3);
        ByteBuffer[] gather = new ByteBuffer[parts];
        int total = 0;
        for (int i = 0; i < parts; i++) {
          int n = Math.min(rnd.nextInt(150_000), message.length - off - total);
          gather[i] = ByteBuffer.allocateDirect(n).put(message, off + total, n).flip();
          total += n;
        }
        long moved = 0;
        while (moved < total) {
          long n = parts == 1 ? out.write(gather[0]) : out.write(gather);
          moved += n;
          long left = 0;
          for (ByteBuffer g : gather) {
            left += g.remaining();
          }
          assertEquals(total - moved, left, "moved bytes are exactly those no longer remaining");
          if (n == 0) {
            Thread.onSpinWait();
          }
        }
        off += total;
      }
    } catch (IOException e) {
      throw new AssertionError(e);
    }
  }

  private static byte[] read(Wire in, int length, CompletableFuture<Void> writer) throws Exception {
    SplittableRandom rnd = new SplittableRandom(6);
    byte[] got = new byte[length];
    int off = 0;
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (off < length) {
      ByteBuffer dst = ByteBuffer.allocate(Math.min(1 + rnd.nextInt(100_000), length - off));
      while (dst.hasRemaining()) {
        if (writer.isCompletedExceptionally()) {
          writer.get(); // throws the writer's failure
        }
        if (in.read(dst) < 0 || System.nanoTime() > deadline) {
          throw new AssertionError("stream ended or stalled at " + (off + dst.position()));
        }
      }
      dst.flip().get(got, off, dst.limit());
      off += dst.limit();
    }
    return got;
  }
}
