import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.Arrays;
import java.util.SplittableRandom;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;

/**
 * The floor of a one-hop small allReduce over loopback TCP for a Java engine, beside {@code
 * TcpDoublingFloor}: N threads, one per rank, a full mesh of non-blocking sockets, busy polling;
 * each call writes a 16-byte header and the payload to every other rank, reads every other rank's
 * frame and sums them in rank order (64-bit integers). It measures whether one hop of n-1 writes
 * beats log2(N) hops of one write on this host (on an H200 host, 16 cores, it did not:
 * docs/benchmarks.md). Every call's first element, and every element of each round's last call, is
 * checked against a sum computed apart; every wait ends after 60 s without progress.
 *
 * <p>Run: java bench/micro/TcpDirectFloor.java RANKS [CALLS] [ROUNDS] [BYTES] (BYTES a multiple of
 * 8, default 8)
 */
public class TcpDirectFloor {
  private static final int HEADER = 16;
  private static final long WAIT_SECONDS = 60;

  public static void main(String[] args) throws Exception {
    int n = Integer.parseInt(args[0]);
    int calls = args.length > 1 ? Integer.parseInt(args[1]) : 20_000;
    int rounds = args.length > 2 ? Integer.parseInt(args[2]) : 5;
    int bytes = args.length > 3 ? Integer.parseInt(args[3]) : 8;
    if (bytes < 8 || bytes % 8 != 0 || n < 2) {
      throw new IllegalArgumentException(
          "RANKS must be >= 2 and BYTES a positive multiple of 8, got " + n + " and " + bytes);
    }
    SocketChannel[][] links = new SocketChannel[n][n];
    try (ServerSocketChannel ss = ServerSocketChannel.open()) {
      ss.bind(new InetSocketAddress("127.0.0.1", 0));
      for (int r = 0; r < n; r++) {
        for (int p = r + 1; p < n; p++) {
          links[r][p] = SocketChannel.open(ss.getLocalAddress());
          links[p][r] = ss.accept();
        }
      }
    }
    for (SocketChannel[] row : links) for (SocketChannel ch : row) if (ch != null) {
      ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
      ch.configureBlocking(false);
    }
    double[][] perCall = new double[n][rounds];
    long[] wrong = new long[n];
    CyclicBarrier barrier = new CyclicBarrier(n);
    Thread[] threads = new Thread[n];
    for (int r = 0; r < n; r++) {
      int rank = r;
      threads[r] = new Thread(() -> {
        try { rank(rank, n, links[rank], calls, rounds, bytes, barrier, perCall[rank], wrong); }
        catch (Exception e) { throw new RuntimeException(e); }
      });
      threads[r].start();
    }
    for (Thread t : threads) t.join();
    double[] slowest = new double[rounds];
    for (int k = 0; k < rounds; k++) for (int r = 0; r < n; r++) slowest[k] = Math.max(slowest[k], perCall[r][k]);
    double[] sorted = slowest.clone();
    Arrays.sort(sorted);
    System.out.printf("direct exchange over loopback TCP, %d ranks, %d B: %.1f us per call (%s), wrong %d%n",
        n, bytes, sorted[rounds / 2],
        Arrays.toString(Arrays.stream(slowest).map(v -> Math.round(v * 10) / 10.0).toArray()),
        Arrays.stream(wrong).sum());
  }

  private static void rank(int rank, int n, SocketChannel[] peers, int calls, int rounds, int bytes,
      CyclicBarrier barrier, double[] perCall, long[] wrong) throws Exception {
    int count = bytes / 8;
    ByteBuffer[] out = new ByteBuffer[n];
    ByteBuffer[] in = new ByteBuffer[n];
    for (int p = 0; p < n; p++) {
      out[p] = ByteBuffer.allocateDirect(HEADER + bytes).order(ByteOrder.nativeOrder());
      in[p] = ByteBuffer.allocateDirect(HEADER + bytes).order(ByteOrder.nativeOrder());
    }
    long[] acc = new long[count];
    SplittableRandom random = new SplittableRandom(42);
    for (int k = -1; k < rounds; k++) {
      barrier.await(WAIT_SECONDS, TimeUnit.SECONDS);
      long t0 = System.nanoTime();
      for (int c = 0; c < calls; c++) {
        long expected = 0, base = 0;
        for (int r = 0; r < n; r++) { long v = random.nextInt(1 << 20); expected += v; if (r == rank) base = v; }
        for (int j = 1; j < n; j++) {
          int p = (rank + j) % n;
          ByteBuffer o = out[p];
          o.clear();
          o.putLong(0, c).putLong(8, rank);
          for (int i = 0; i < count; i++) o.putLong(HEADER + 8 * i, base + i);
          in[p].clear();
        }
        int pendingOut = n - 1, pendingIn = n - 1;
        long deadline = 0;
        while (pendingOut > 0 || pendingIn > 0) {
          int moved = 0;
          for (int j = 1; j < n; j++) {
            int p = (rank + j) % n;
            if (out[p].hasRemaining()) { moved += peers[p].write(out[p]); if (!out[p].hasRemaining()) pendingOut--; }
          }
          for (int j = 1; j < n; j++) {
            int p = (rank - j + n) % n;
            if (in[p].hasRemaining()) { moved += peers[p].read(in[p]); if (!in[p].hasRemaining()) pendingIn--; }
          }
          if (moved == 0) {
            long now = System.nanoTime();
            if (deadline == 0) deadline = now + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
            else if (now > deadline) throw new IllegalStateException("rank " + rank + ": no data");
          }
        }
        for (int i = 0; i < count; i++) {
          long s = 0;
          for (int r = 0; r < n; r++) s += r == rank ? base + i : in[r].getLong(HEADER + 8 * i);
          acc[i] = s;
        }
        int last = c == calls - 1 ? count : 1;
        for (int i = 0; i < last; i++) if (acc[i] != expected + (long) n * i) { wrong[rank]++; break; }
      }
      if (k >= 0) perCall[k] = (System.nanoTime() - t0) / 1e3 / calls;
    }
  }
}
