package org.sparkccl.spark.worker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sparkccl.auth.ChallengeResponse;

/**
 * Random and malformed input on the executor's channel for Python workers, over a real Unix domain
 * socket: openings and proofs of random bytes, connections that never speak, and random request
 * frames after a good handshake. The server answers or hangs up on each, within its deadlines, and
 * keeps serving a real client throughout; every session ends.
 */
class WorkerChannelFuzzTest {
  @TempDir Path tmp;

  private static final long SEED = 0x5eed_c0deL;
  private static final Duration HANDSHAKE = Duration.ofMillis(300);

  /** A source that, as outside a barrier task, has no communicator to give. */
  private static final CommunicatorSource NO_TASK =
      (attempt, timeout, end) -> {
        throw new IllegalArgumentException("not a running barrier task of this executor");
      };

  @Test
  void refusesRandomOpeningsIdleConnectionsAndRandomFramesAndKeepsServing() throws Exception {
    SplittableRandom rnd = new SplittableRandom(SEED);
    try (WorkerChannelServer s =
        WorkerChannelServer.start(tmp.resolve("base"), tmp, NO_TASK, HANDSHAKE)) {
      byte[] secret =
          ChallengeResponse.unhex(Files.readString(s.secretPath(), StandardCharsets.US_ASCII));
      // connections that say nothing, open while everything else happens
      List<SocketChannel> idle = new ArrayList<>();
      for (int i = 0; i < 8; i++) {
        idle.add(connect(s));
      }
      for (int i = 0; i < 40; i++) {
        try (SocketChannel c = connect(s)) {
          byte[] junk = new byte[1 + rnd.nextInt(200)];
          rnd.nextBytes(junk);
          if (i % 2 == 1) { // the right magic, then random bytes: a proof that fails
            System.arraycopy(ChannelProtocol.MAGIC, 0, junk, 0, Math.min(8, junk.length));
          }
          write(c, junk);
          assertRefused(c);
        }
      }
      for (int i = 0; i < 40; i++) {
        try (SocketChannel c = connect(s)) {
          assertEquals(ChannelProtocol.ACCEPTED, handshake(c, secret));
          assertAnswersOrHangsUp(c, randomFrame(rnd));
        }
        if (i % 10 == 0) {
          assertServes(s, secret);
        }
      }
      for (SocketChannel c : idle) {
        assertRefused(c); // dropped at the handshake deadline
        c.close();
      }
      assertServes(s, secret);
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (s.sessionCount() > 0 && System.nanoTime() < deadline) {
        Thread.sleep(10);
      }
      assertEquals(0, s.sessionCount());
    }
  }

  /** A frame of random bytes; its length field is random too, now and then out of bounds. */
  private static byte[] randomFrame(SplittableRandom rnd) {
    byte[] body = new byte[rnd.nextInt(96)];
    rnd.nextBytes(body);
    if (body.length > 0) {
      body[0] = (byte) rnd.nextInt(8); // mostly known request types, with random fields
    }
    if (body.length > 2) {
      body[1] = 0; // few released segment ids, so that the fields are reached
      body[2] = (byte) rnd.nextInt(3);
    }
    int length =
        switch (rnd.nextInt(8)) {
          case 0 -> -1 - rnd.nextInt(1 << 20);
          case 1 -> ChannelWire.MAX_FRAME + 1 + rnd.nextInt(1 << 20);
          default -> body.length;
        };
    return ByteBuffer.allocate(4 + body.length).putInt(length).put(body).array();
  }

  private static SocketChannel connect(WorkerChannelServer s) throws IOException {
    SocketChannel c = SocketChannel.open(StandardProtocolFamily.UNIX);
    c.connect(UnixDomainSocketAddress.of(s.socketPath()));
    return c;
  }

  private static int handshake(SocketChannel c, byte[] secret) throws IOException {
    byte[] open = ByteBuffer.allocate(16).put(ChannelProtocol.MAGIC).putLong(4242).array();
    byte[] nonce = ChallengeResponse.newNonce();
    write(c, open);
    write(c, nonce);
    byte[] theirs = read(c, 32);
    read(c, 32); // the executor's proof
    write(c, new ChallengeResponse(secret).connectorProof(open, nonce, theirs));
    return read(c, 1)[0];
  }

  /** A real worker's request still gets its answer. */
  private static void assertServes(WorkerChannelServer s, byte[] secret) throws Exception {
    try (SocketChannel c = connect(s)) {
      assertEquals(ChannelProtocol.ACCEPTED, handshake(c, secret));
      write(c, ByteBuffer.allocate(7).putInt(3).put((byte) ChannelProtocol.PING).array());
      byte[] reply = within(() -> read(c, ByteBuffer.wrap(read(c, 4)).getInt()));
      assertEquals(ChannelProtocol.OK, reply[0]);
    }
  }

  /** The server sends at most a refusal byte or a few handshake bytes, then hangs up in time. */
  private static void assertRefused(SocketChannel c) throws Exception {
    long bytes = within(() -> drain(c));
    assertTrue(bytes <= 65, "the server sent " + bytes + " bytes to a client it refuses");
  }

  /** A frame is answered by one reply frame, or the server hangs up; never a hang. */
  private static void assertAnswersOrHangsUp(SocketChannel c, byte[] frame) throws Exception {
    write(c, frame);
    within(
        () -> {
          ByteBuffer header = ByteBuffer.allocate(4);
          if (fill(c, header)) {
            int length = header.getInt(0);
            assertTrue(length > 0 && length <= ChannelWire.MAX_FRAME, "reply length " + length);
            byte kind = read(c, length)[0];
            assertTrue(kind == ChannelProtocol.OK || kind == ChannelProtocol.ERROR, "kind " + kind);
          }
          return null;
        });
  }

  private interface Io<T> {
    T call() throws IOException;
  }

  private static <T> T within(Io<T> io) throws Exception {
    return CompletableFuture.supplyAsync(
            () -> {
              try {
                return io.call();
              } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
              }
            })
        .get(5, TimeUnit.SECONDS);
  }

  private static long drain(SocketChannel c) throws IOException {
    ByteBuffer b = ByteBuffer.allocate(256);
    long total = 0;
    try {
      for (int n; (n = c.read(b.clear())) >= 0; ) {
        total += n;
      }
    } catch (IOException e) {
      // a reset is a hang-up too
    }
    return total;
  }

  private static void write(SocketChannel c, byte[] bytes) throws IOException {
    ByteBuffer b = ByteBuffer.wrap(bytes);
    try {
      while (b.hasRemaining()) {
        c.write(b);
      }
    } catch (IOException e) {
      // the server may hang up before reading everything; what follows checks that it did
    }
  }

  private static byte[] read(SocketChannel c, int n) throws IOException {
    ByteBuffer b = ByteBuffer.allocate(n);
    if (!fill(c, b) || b.hasRemaining()) {
      throw new IOException("closed after " + b.position() + " of " + n + " bytes");
    }
    return b.array();
  }

  /** Fills {@code b}; false when the stream ended before its first byte. */
  private static boolean fill(SocketChannel c, ByteBuffer b) throws IOException {
    while (b.hasRemaining()) {
      int n;
      try {
        n = c.read(b);
      } catch (IOException e) {
        n = -1; // reset by the server
      }
      if (n < 0) {
        if (b.position() == 0) {
          return false;
        }
        throw new IOException("closed inside a frame after " + b.position() + " bytes");
      }
    }
    return true;
  }
}
