package org.sparkccl.spark.worker;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sparkccl.Communicator;
import org.sparkccl.auth.ChallengeResponse;
import org.sparkccl.bootstrap.LocalBootstrap;
import org.sparkccl.config.CclConfig;
import org.sparkccl.config.Transport;

/**
 * The executor's channel for Python workers, driven by a Java client that speaks the worker's side
 * of the protocol ({@code python-shim/sparkccl/_channel.py}), over a real Unix domain socket and
 * real shared files; collectives run on real communicators of two ranks.
 */
class WorkerChannelServerTest {
  @TempDir Path tmp;

  private static final long PID = 4242;

  /** The worker's side: handshake, then request frames. */
  private static final class Client implements AutoCloseable {
    final SocketChannel ch;

    Client(Path socket) throws IOException {
      ch = SocketChannel.open(StandardProtocolFamily.UNIX);
      ch.connect(UnixDomainSocketAddress.of(socket));
    }

    /** Runs the handshake with {@code secret}; returns the executor's status byte. */
    int handshake(byte[] secret) throws IOException {
      ByteBuffer opening = ByteBuffer.allocate(16);
      opening.put(ChannelProtocol.MAGIC).putLong(PID);
      byte[] open = opening.array();
      byte[] nonce = ChallengeResponse.newNonce();
      write(open);
      write(nonce);
      byte[] theirs = read(32);
      byte[] proof = read(32);
      ChallengeResponse auth = new ChallengeResponse(secret);
      boolean executorHoldsIt = auth.isAcceptorProof(proof, open, nonce, theirs);
      write(auth.connectorProof(open, nonce, theirs));
      int status = read(1)[0];
      assertEquals(status == ChannelProtocol.ACCEPTED, executorHoldsIt);
      return status;
    }

    ByteBuffer request(int type, ByteBuffer fields) throws IOException {
      fields.flip();
      ByteBuffer frame = ByteBuffer.allocate(4 + 3 + fields.remaining());
      frame.putInt(3 + fields.remaining()).put((byte) type).putShort((short) 0).put(fields);
      write(frame.array());
      int length = ByteBuffer.wrap(read(4)).getInt();
      return ByteBuffer.wrap(read(length));
    }

    void write(byte[] b) throws IOException {
      ByteBuffer buf = ByteBuffer.wrap(b);
      while (buf.hasRemaining()) {
        ch.write(buf);
      }
    }

    byte[] read(int n) throws IOException {
      ByteBuffer b = ByteBuffer.allocate(n);
      while (b.hasRemaining()) {
        if (ch.read(b) < 0) {
          throw new IOException("closed after " + b.position() + " of " + n + " bytes");
        }
      }
      return b.array();
    }

    /** True when the executor closed the connection. */
    boolean closedByServer() throws IOException {
      return ch.read(ByteBuffer.allocate(1)) < 0;
    }

    @Override
    public void close() throws IOException {
      ch.close();
    }
  }

  private static byte[] secretOf(WorkerChannelServer s) throws IOException {
    return ChallengeResponse.unhex(Files.readString(s.secretPath(), StandardCharsets.US_ASCII));
  }

  private static ByteBuffer fields() {
    return ByteBuffer.allocate(1024);
  }

  private static void putString(ByteBuffer b, String s) {
    byte[] bytes = s.getBytes(StandardCharsets.UTF_8);
    b.putShort((short) bytes.length).put(bytes);
  }

  private static void waitFor(java.util.function.BooleanSupplier done) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (!done.getAsBoolean() && System.nanoTime() < deadline) {
      Thread.sleep(10);
    }
  }

  @Test
  void publishesAPrivateFolderAndSecretAndRefusesAWrongProof() throws Exception {
    try (WorkerChannelServer s =
        WorkerChannelServer.start(tmp.resolve("base"), tmp, (a, t, end) -> null)) {
      assertEquals(
          "rwx------",
          PosixFilePermissions.toString(Files.getPosixFilePermissions(s.socketPath().getParent())));
      assertEquals(
          "rw-------",
          PosixFilePermissions.toString(Files.getPosixFilePermissions(s.secretPath())));
      try (Client c = new Client(s.socketPath())) {
        assertEquals(ChannelProtocol.REFUSED, c.handshake(ChallengeResponse.newSecret()));
        assertTrue(c.closedByServer());
      }
      try (Client c = new Client(s.socketPath())) {
        assertEquals(ChannelProtocol.ACCEPTED, c.handshake(secretOf(s)));
        assertEquals(ChannelProtocol.OK, c.request(ChannelProtocol.PING, fields()).get());
        // a segment that is not there, or not the worker's, is an error answer, not a hang-up
        for (String name :
            List.of("sparkccl-" + ChannelFiles.uid() + "-" + PID + "-gone", "../x")) {
          ByteBuffer map = fields();
          putString(map, name);
          map.putLong(64);
          ByteBuffer reply = c.request(ChannelProtocol.MAP, map);
          assertEquals(ChannelProtocol.ERROR, reply.get());
          assertEquals(ChannelProtocol.E_ARGUMENT, reply.get());
        }
        assertEquals(ChannelProtocol.OK, c.request(ChannelProtocol.PING, fields()).get());
      }
      waitFor(() -> s.sessionCount() == 0);
      assertEquals(0, s.sessionCount());
    }
    assertFalse(
        Files.exists(tmp.resolve("base").resolve(Long.toString(ProcessHandle.current().pid()))));
  }

  @Test
  void aFrameLongerThanTheLimitEndsTheConnectionUnread() throws Exception {
    try (WorkerChannelServer s =
            WorkerChannelServer.start(tmp.resolve("base"), tmp, (a, t, end) -> null);
        Client c = new Client(s.socketPath())) {
      c.handshake(secretOf(s));
      c.write(ByteBuffer.allocate(4).putInt(Integer.MAX_VALUE).array());
      assertTrue(c.closedByServer());
    }
  }

  @Test
  void aSilentClientIsDroppedAtTheHandshakeDeadline() throws Exception {
    try (WorkerChannelServer s =
            WorkerChannelServer.start(
                tmp.resolve("base"), tmp, (a, t, end) -> null, Duration.ofMillis(300));
        Client c = new Client(s.socketPath())) {
      c.write(new byte[] {'S', 'C'}); // a few bytes of an opening, then nothing
      long t0 = System.nanoTime();
      assertTrue(c.closedByServer());
      assertTrue(System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(5));
    }
  }

  @Test
  void refusesABaseFolderOthersCanEnter() throws Exception {
    Path base = Files.createDirectory(tmp.resolve("open"));
    Files.setPosixFilePermissions(base, PosixFilePermissions.fromString("rwxrwxrwx"));
    IOException e =
        assertThrows(
            IOException.class, () -> WorkerChannelServer.start(base, tmp, (a, t, end) -> null));
    assertTrue(e.getMessage().contains("expected user"), e.getMessage());
  }

  @Test
  void twoWorkersAllReduceTheirSharedFilesInPlace() throws Exception {
    int n = 1000;
    LocalBootstrap.Group group = LocalBootstrap.group(2);
    CclConfig config =
        CclConfig.builder().transport(Transport.SOCKET).timeout(Duration.ofSeconds(20)).build();
    CommunicatorSource source =
        (attempt, t, end) -> Communicator.create(group.rank((int) attempt), config);
    SplittableRandom rnd = new SplittableRandom(17);
    float[][] in = new float[2][n];
    for (float[] a : in) {
      for (int i = 0; i < n; i++) {
        a[i] = 0.5f + (float) rnd.nextDouble();
      }
    }
    try (WorkerChannelServer s = WorkerChannelServer.start(tmp.resolve("base"), tmp, source)) {
      byte[] secret = secretOf(s);
      List<CompletableFuture<float[]>> ranks = new ArrayList<>();
      for (int r = 0; r < 2; r++) {
        int rank = r;
        ranks.add(CompletableFuture.supplyAsync(() -> workerAllReduce(s, secret, rank, in[rank])));
      }
      float[] expected = new float[n];
      for (int i = 0; i < n; i++) {
        expected[i] = in[0][i] + in[1][i];
      }
      for (CompletableFuture<float[]> f : ranks) {
        assertArrayEquals(expected, f.get(60, TimeUnit.SECONDS));
      }
      try (var left = Files.list(tmp)) {
        assertEquals(
            List.of(),
            left.filter(p -> p.getFileName().toString().startsWith("sparkccl-")).toList());
      }
    }
  }

  private float[] workerAllReduce(WorkerChannelServer s, byte[] secret, int rank, float[] data) {
    String name = "sparkccl-" + ChannelFiles.uid() + "-" + PID + "-" + rank + "a";
    Path file = tmp.resolve(name);
    try (Client c = new Client(s.socketPath());
        FileChannel fc =
            FileChannel.open(
                file,
                StandardOpenOption.CREATE_NEW,
                StandardOpenOption.READ,
                StandardOpenOption.WRITE)) {
      long bytes = 4L * data.length;
      MappedByteBuffer mine = fc.map(FileChannel.MapMode.READ_WRITE, 0, bytes);
      mine.order(ByteOrder.nativeOrder()).asFloatBuffer().put(data);
      assertEquals(ChannelProtocol.ACCEPTED, c.handshake(secret));
      ByteBuffer map = fields();
      putString(map, name);
      map.putLong(bytes);
      ByteBuffer mapped = c.request(ChannelProtocol.MAP, map);
      assertEquals(ChannelProtocol.OK, mapped.get());
      int segment = mapped.getInt();
      assertFalse(Files.exists(file), "the executor deletes the file once mapped");
      ByteBuffer open = fields().putLong(rank).putLong(0);
      ByteBuffer opened = c.request(ChannelProtocol.OPEN, open);
      assertEquals(ChannelProtocol.OK, opened.get());
      int comm = opened.getInt();
      assertEquals(rank, opened.getInt());
      assertEquals(2, opened.getInt());
      ByteBuffer call = fields().putInt(comm).put((byte) ChannelProtocol.ALL_REDUCE);
      putString(call, "float32");
      putString(call, "sum");
      call.putInt(0).putLong(data.length);
      call.putInt(segment).putLong(0).putLong(bytes).putInt(segment).putLong(0).putLong(bytes);
      ByteBuffer done = c.request(ChannelProtocol.COLLECTIVE, call);
      assertEquals(ChannelProtocol.OK, done.get(), () -> "error " + done);
      assertEquals(
          ChannelProtocol.OK, c.request(ChannelProtocol.CLOSE, fields().putInt(comm)).get());
      float[] out = new float[data.length];
      mine.order(ByteOrder.nativeOrder()).asFloatBuffer().get(out);
      return out;
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }
}
