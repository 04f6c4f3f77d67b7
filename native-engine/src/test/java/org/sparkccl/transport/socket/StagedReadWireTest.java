package org.sparkccl.transport.socket;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.SplittableRandom;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** A staged read hands out the stream's bytes in order, whatever sizes the reader asks for. */
@DisplayName("staged reads of a socket")
class StagedReadWireTest {

  @Test
  @DisplayName(
      "random reads of 1 B to 40 KiB, small and past the staging buffer, return the bytes sent, in"
          + " order, then the end of the stream")
  void readsReturnTheStreamInOrderThenItsEnd() throws IOException {
    SplittableRandom random = new SplittableRandom(11);
    byte[] sent = new byte[3 << 20];
    random.nextBytes(sent);
    try (ServerSocketChannel server = ServerSocketChannel.open()) {
      server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
      try (SocketChannel out = SocketChannel.open(server.getLocalAddress());
          SocketChannel in = server.accept()) {
        in.configureBlocking(false);
        SplittableRandom pieces = random.split(); // the writer's own: the generator is not shared
        Thread writer =
            new Thread(
                () -> {
                  try {
                    ByteBuffer b = ByteBuffer.wrap(sent);
                    while (b.hasRemaining()) {
                      // uneven pieces, so that reads meet partial frames
                      int n = Math.min(b.remaining(), 1 + pieces.nextInt(70_000));
                      out.write(b.slice(b.position(), n));
                      b.position(b.position() + n);
                    }
                    out.shutdownOutput();
                  } catch (IOException e) {
                    throw new IllegalStateException(e);
                  }
                },
                "staged-read-writer");
        writer.start();
        StagedReadWire wire = new StagedReadWire(new PlainWire(in));
        ByteBuffer got = ByteBuffer.allocate(sent.length);
        long deadline = System.nanoTime() + 30_000_000_000L;
        int end = 0;
        while (end == 0) {
          assertTrue(System.nanoTime() < deadline, "read " + got.position() + " bytes in 30 s");
          int want = random.nextInt(4) == 0 ? 1 + random.nextInt(40 << 10) : 1 + random.nextInt(64);
          want = Math.min(want, Math.max(1, got.remaining()));
          ByteBuffer dst =
              got.hasRemaining() ? got.slice(got.position(), want) : ByteBuffer.allocate(want);
          int n = wire.read(dst);
          assertEquals(n < 0 ? 0 : n, dst.position(), "a read says how many bytes it moved");
          if (n < 0) {
            end = n;
          } else if (got.hasRemaining()) {
            got.position(got.position() + n);
          } else {
            assertEquals(0, n, "bytes after the last one sent");
          }
        }
        assertEquals(-1, end);
        assertArrayEquals(sent, got.array());
        writer.join(10_000);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }
}
