package org.sparkccl.transport.socket;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.Arrays;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * A notice or announcement frame goes out whole or not at all: a frame cut short would garble the
 * stream the peer parses, so a peer that stops reading gets a closed socket instead.
 */
@DisplayName("frames written on a control socket")
class FrameWriteTest {
  private static final long TIMEOUT_NANOS = TimeUnit.MILLISECONDS.toNanos(300);

  @Test
  @DisplayName("a frame larger than the socket buffers reaches a slow reader whole and in order")
  void frameReachesASlowReaderWhole() throws Exception {
    byte[] sent = new byte[8 << 20];
    new SplittableRandom(5).nextBytes(sent);
    try (ServerSocketChannel server = listen();
        SocketChannel out = SocketChannel.open(server.getLocalAddress());
        SocketChannel in = server.accept()) {
      out.configureBlocking(false);
      CompletableFuture<byte[]> got =
          CompletableFuture.supplyAsync(
              () -> {
                ByteBuffer b = ByteBuffer.allocate(sent.length);
                try {
                  while (b.hasRemaining()) {
                    // small reads with pauses: slower than the writer, never stopped
                    int n = in.read(b.slice(b.position(), Math.min(b.remaining(), 256 << 10)));
                    if (n < 0) {
                      break;
                    }
                    b.position(b.position() + n);
                    TimeUnit.MILLISECONDS.sleep(1);
                  }
                } catch (IOException | InterruptedException e) {
                  throw new IllegalStateException(e);
                }
                return b.array();
              });
      assertTrue(
          SocketConnection.writeFrame(new PlainWire(out), ByteBuffer.wrap(sent), TIMEOUT_NANOS),
          "the frame went out");
      assertTrue(out.isOpen(), "the socket stays open after a whole frame");
      assertArrayEquals(sent, got.get(30, TimeUnit.SECONDS));
    }
  }

  @Test
  @DisplayName(
      "a peer that reads nothing: the write gives up after the timeout and closes the socket, and"
          + " the peer sees the stream end instead of a frame cut short")
  void stoppedReaderGetsAClosedSocket() throws Exception {
    byte[] frame = new byte[64 << 20]; // more than loopback's socket buffers hold
    new SplittableRandom(6).nextBytes(frame);
    try (ServerSocketChannel server = listen();
        SocketChannel out = SocketChannel.open(server.getLocalAddress());
        SocketChannel in = server.accept()) {
      out.configureBlocking(false);
      long start = System.nanoTime();
      boolean whole =
          SocketConnection.writeFrame(new PlainWire(out), ByteBuffer.wrap(frame), TIMEOUT_NANOS);
      long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
      assertFalse(whole, "a 64 MiB frame cannot fit in the buffers of a peer that reads nothing");
      assertFalse(out.isOpen(), "the writer closed its socket");
      assertTrue(tookMs >= 300, "gave up only after the timeout (" + tookMs + " ms)");
      assertTrue(tookMs < 20_000, "gave up within the timeout's reach (" + tookMs + " ms)");
      // the peer gets the bytes that left, then the end of the stream (the writer closed, so a
      // blocking read cannot wait for ever): never more than was sent
      ByteBuffer b = ByteBuffer.allocate(frame.length);
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      int n;
      while ((n = in.read(b)) >= 0 && b.hasRemaining()) {
        assertTrue(System.nanoTime() < deadline, "the stream ends within 30 s");
      }
      assertTrue(n < 0, "the stream ended");
      assertTrue(b.position() < frame.length, "only part of the frame left");
      byte[] head = new byte[b.position()];
      System.arraycopy(frame, 0, head, 0, head.length);
      assertArrayEquals(head, Arrays.copyOf(b.array(), head.length));
    }
  }

  private static ServerSocketChannel listen() throws IOException {
    ServerSocketChannel server = ServerSocketChannel.open();
    server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
    return server;
  }
}
