package org.sparkccl;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.IntSupplier;
import java.util.function.IntUnaryOperator;
import org.sparkccl.bootstrap.TcpBootstrap;
import org.sparkccl.bootstrap.TcpBootstrapRoot;
import org.sparkccl.config.CclConfig;
import org.sparkccl.config.Transport;
import org.sparkccl.memory.DirectMemory;

/**
 * Sends malformed and random frames to every TCP endpoint this process listens on, for {@code
 * EndpointFuzzTest}, which runs it in a JVM of small heap and direct memory. Argument: the number
 * of frames (each on a connection of its own). Half go to two bootstrap roots, one of which a real
 * 2-rank communicator joins meanwhile; the other half, once that communicator exists, to every
 * listening socket of the process (its data-plane listeners, found through {@code /proc}), while
 * the communicator runs allReduces checked against the reference. Idle connections are held open to
 * each endpoint all along.
 *
 * <p>Prints {@code CONNECTED n} (fuzz and idle connections the endpoints accepted), the off-heap
 * peak and {@code OK}; exits 1 with {@code FAILED: ...} otherwise.
 */
public final class FuzzMain {
  private static final InetAddress LOOPBACK = InetAddress.getLoopbackAddress();
  private static final int BOOTSTRAP_MAGIC = 0x53434252;
  private static final int DATA_MAGIC = 0x5343434c;
  private static final int IDLE_PER_ENDPOINT = 8;
  private static final int THREADS = 4;

  private final AtomicInteger connected = new AtomicInteger();
  private final AtomicInteger refusedAtConnect = new AtomicInteger();
  private final AtomicInteger closedByServer = new AtomicInteger();
  private final AtomicLong offHeapPeak = new AtomicLong();
  private final List<Socket> idle = new ArrayList<>();

  private FuzzMain() {}

  public static void main(String[] args) {
    ChildJvm.exitWith(() -> new FuzzMain().run(Integer.parseInt(args[0])));
  }

  private int run(int frames) throws Exception {
    AtomicBoolean sampling = new AtomicBoolean(true);
    Thread sampler =
        new Thread(
            () -> {
              while (sampling.get()) {
                offHeapPeak.accumulateAndGet(DirectMemory.outstandingBytes(), Math::max);
                Thread.onSpinWait();
              }
            },
            "offheap-sampler");
    sampler.setDaemon(true);
    sampler.start();
    CclConfig config =
        CclConfig.builder()
            .transport(Transport.SOCKET)
            .buffSize(256 << 10)
            .timeout(Duration.ofSeconds(30))
            .build();
    long commBytes;
    int allReduces;
    try (TcpBootstrapRoot decoy = TcpBootstrapRoot.start("127.0.0.1", 3, Duration.ofMillis(1500));
        TcpBootstrapRoot root = TcpBootstrapRoot.start("127.0.0.1", 2, Duration.ofMillis(1500))) {
      int[] roots = {port(decoy.address()), port(root.address())};
      holdIdle(roots);
      // phase 1: both roots; the real ranks join once an eighth of the frames are out
      Communicator[] comms = new Communicator[2];
      List<CompletableFuture<Void>> joins = new ArrayList<>();
      AtomicInteger sent = new AtomicInteger();
      CompletableFuture<Void> ranksStarted = new CompletableFuture<>();
      CompletableFuture.runAsync(
          () -> {
            while (sent.get() < frames / 8) {
              Thread.onSpinWait();
            }
            for (int r = 0; r < 2; r++) {
              int rank = r;
              joins.add(
                  CompletableFuture.runAsync(
                      () -> {
                        TcpBootstrap boot =
                            TcpBootstrap.connect(root.address(), rank, 2, Duration.ofSeconds(60));
                        comms[rank] = Communicator.create(boot, config);
                        boot.close();
                      }));
            }
            ranksStarted.complete(null);
          });
      fuzz(frames / 2, sent, i -> roots[i % 2]);
      ranksStarted.get();
      CompletableFuture.allOf(joins.toArray(new CompletableFuture<?>[0])).get();
      commBytes = DirectMemory.outstandingBytes();
      try {
        // phase 2: every listening socket of this process, while the communicator works
        List<Integer> ports = new ArrayList<>(listeningPorts());
        ports.remove(Integer.valueOf(roots[1])); // closed once both ranks joined
        if (ports.size() < 3) {
          throw new IllegalStateException("expected the decoy root and 2 data listeners: " + ports);
        }
        holdIdle(ports.stream().filter(p -> p != roots[0]).mapToInt(Integer::intValue).toArray());
        AtomicBoolean fuzzing = new AtomicBoolean(true);
        CompletableFuture<Integer> work =
            CompletableFuture.supplyAsync(
                () -> {
                  int n = 0;
                  while (fuzzing.get() || n < 3) {
                    String m =
                        RankHarness.allReduceAndCheck(
                            comms,
                            1000 + n * 97 % 50_000,
                            DataType.INT64,
                            ReduceOp.SUM,
                            n % 2 == 0,
                            n,
                            Duration.ofSeconds(60));
                    if (m != null) {
                      throw new IllegalStateException("allReduce " + n + ": " + m);
                    }
                    n++;
                  }
                  return n;
                });
        try {
          fuzz(frames - frames / 2, new AtomicInteger(), i -> ports.get(i % ports.size()));
        } finally {
          fuzzing.set(false);
        }
        allReduces = work.get();
      } finally {
        RankHarness.closeAll(comms, Duration.ofSeconds(60));
      }
    }
    int idleClosed = 0;
    for (Socket s : idle) {
      idleClosed += closedByPeer(s, 100) ? 1 : 0;
      s.close();
    }
    sampling.set(false);
    sampler.join();
    Thread.sleep(500);
    System.out.println("CONNECTED " + connected.get());
    System.out.println(
        "FUZZ frames="
            + frames
            + " refusedAtConnect="
            + refusedAtConnect.get()
            + " closedByServer="
            + closedByServer.get()
            + " idle="
            + idle.size()
            + " idleClosedByServer="
            + idleClosed
            + " allReduces="
            + allReduces);
    System.out.println(
        "OFFHEAP communicatorBytes="
            + commBytes
            + " peak="
            + offHeapPeak.get()
            + " after="
            + DirectMemory.outstandingBytes());
    if (DirectMemory.outstandingBytes() != 0) {
      System.out.println("FAILED: off-heap bytes left: " + DirectMemory.outstandingBytes());
      return 1;
    }
    System.out.println("OK");
    return 0;
  }

  /**
   * Sends {@code frames} frames from {@link #THREADS} threads, frame i to port {@code target(i)}.
   */
  private void fuzz(int frames, AtomicInteger sent, IntUnaryOperator target) throws Exception {
    AtomicInteger next = new AtomicInteger();
    List<CompletableFuture<Void>> workers = new ArrayList<>();
    for (int t = 0; t < THREADS; t++) {
      workers.add(
          CompletableFuture.runAsync(
              () -> {
                IntSupplier claim = () -> next.getAndIncrement();
                for (int i = claim.getAsInt(); i < frames; i = claim.getAsInt()) {
                  sendOne(target.applyAsInt(i), new SplittableRandom(7919L * i + frames));
                  sent.incrementAndGet();
                }
              }));
    }
    CompletableFuture.allOf(workers.toArray(new CompletableFuture<?>[0])).get();
  }

  /** One connection: a frame, then half-close (mostly) and wait for the server to close it. */
  private void sendOne(int port, SplittableRandom rnd) {
    Socket s;
    try {
      s = new Socket(LOOPBACK, port);
    } catch (IOException e) {
      refusedAtConnect.incrementAndGet();
      return;
    }
    connected.incrementAndGet();
    try (s) {
      s.setSoLinger(true, 0);
      byte[] frame = frame(rnd);
      s.getOutputStream().write(frame);
      s.getOutputStream().flush();
      boolean stall = rnd.nextInt(20) == 0; // some never finish: the deadline must drop them
      if (!stall) {
        s.shutdownOutput();
      }
      if (closedByPeer(s, stall ? 200 : 3000)) {
        closedByServer.incrementAndGet();
      }
    } catch (IOException e) {
      closedByServer.incrementAndGet(); // reset while writing: refused
    }
  }

  private static boolean closedByPeer(Socket s, int millis) {
    try {
      s.setSoTimeout(millis);
      InputStream in = s.getInputStream();
      byte[] sink = new byte[512];
      while (in.read(sink) >= 0) {
        // the server's answer (challenge) is not ours to check
      }
      return true;
    } catch (SocketTimeoutException e) {
      return false;
    } catch (IOException e) {
      return true; // reset
    }
  }

  /** A malformed or random frame of one of eight kinds. */
  static byte[] frame(SplittableRandom rnd) {
    int magic = rnd.nextBoolean() ? BOOTSTRAP_MAGIC : DATA_MAGIC;
    int[] extremes = {
      -1, Integer.MIN_VALUE, Integer.MAX_VALUE, 1 << 30, (16 << 20) + 1, 0, 1, 2, 3
    };
    ByteBuffer b = ByteBuffer.allocate(8192);
    switch (rnd.nextInt(8)) {
      case 0 -> b.put(bytes(rnd, rnd.nextInt(65)));
      case 1 -> b.put(bytes(rnd, rnd.nextInt(4097)));
      case 2 -> b.putInt(magic).putInt(2).put(bytes(rnd, rnd.nextInt(65)));
      case 3 -> b.putInt(magic).putInt(rnd.nextInt()).put(bytes(rnd, 8 + rnd.nextInt(33)));
      case 4 -> {
        b.putInt(magic).putInt(2);
        for (int k = 0; k < 3; k++) {
          b.putInt(extremes[rnd.nextInt(extremes.length)]);
        }
        b.put(bytes(rnd, 64)); // a nonce and a made-up proof
      }
      case 5 -> {} // connect and close
      case 6 -> {
        for (int k = 1 + rnd.nextInt(16); k > 0; k--) {
          b.putInt(extremes[rnd.nextInt(5)]);
        }
      }
      default -> {
        byte[] whole =
            ByteBuffer.allocate(88)
                .putInt(magic)
                .putInt(2)
                .putInt(rnd.nextInt(4))
                .putInt(rnd.nextInt(4))
                .putInt(-1)
                .put(bytes(rnd, 68))
                .array();
        b.put(whole, 0, rnd.nextInt(whole.length));
      }
    }
    byte[] out = new byte[b.position()];
    b.flip().get(out);
    return out;
  }

  private static byte[] bytes(SplittableRandom rnd, int n) {
    byte[] b = new byte[n];
    rnd.nextBytes(b);
    return b;
  }

  private void holdIdle(int[] ports) {
    for (int p : ports) {
      for (int k = 0; k < IDLE_PER_ENDPOINT; k++) {
        try {
          idle.add(new Socket(LOOPBACK, p));
          connected.incrementAndGet();
        } catch (IOException e) {
          refusedAtConnect.incrementAndGet();
        }
      }
    }
  }

  private static int port(String rootAddress) {
    return Integer.parseInt(rootAddress.substring(rootAddress.lastIndexOf(':') + 1).split("#")[0]);
  }

  /**
   * The ports of this process's listening TCP sockets: {@code /proc/net/tcp*} rows whose inode is
   * one of this process's file descriptors.
   */
  static Set<Integer> listeningPorts() throws IOException {
    Set<String> inodes = new HashSet<>();
    try (var fds = Files.list(Path.of("/proc/self/fd"))) {
      for (Path fd : (Iterable<Path>) fds::iterator) {
        try {
          String link = Files.readSymbolicLink(fd).toString();
          if (link.startsWith("socket:[")) {
            inodes.add(link.substring(8, link.length() - 1));
          }
        } catch (IOException e) {
          // closed meanwhile
        }
      }
    }
    Set<Integer> ports = new HashSet<>();
    for (String file : new String[] {"/proc/self/net/tcp", "/proc/self/net/tcp6"}) {
      for (String line : Files.readAllLines(Path.of(file))) {
        String[] f = line.trim().split("\\s+");
        if (f.length > 9 && f[3].equals("0A") && inodes.contains(f[9])) {
          String local = f[1];
          ports.add(Integer.parseInt(local.substring(local.indexOf(':') + 1), 16));
        }
      }
    }
    return ports;
  }
}
