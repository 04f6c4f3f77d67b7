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
 * The floor of an 8-byte allReduce by recursive doubling over loopback TCP for a Java engine: N
 * threads, one per rank, each with a non-blocking socket to each of its log2(N) partners, busy
 * polling; a round writes a 16-byte header and the 8 bytes in one write and reads the partner's 24
 * bytes. No FIFO, no proxy, no hand-off: what the socket and NIO cost alone. Every call's sum is
 * checked against one computed apart. Prints the median over rounds of the time per call. Every
 * thread spins: with fewer cores than ranks they wait for each other's time slices, and the figure
 * means nothing.
 *
 * <p>Run: java bench/micro/TcpDoublingFloor.java RANKS [CALLS] [ROUNDS]
 */
public class TcpDoublingFloor {
  private static final int FRAME = 24;

  /** Every wait ends: a rank whose partner died fails instead of spinning on. */
  private static final long WAIT_SECONDS = 60;

  public static void main(String[] args) throws Exception {
    int n = Integer.parseInt(args[0]);
    int calls = args.length > 1 ? Integer.parseInt(args[1]) : 20_000;
    int rounds = args.length > 2 ? Integer.parseInt(args[2]) : 5;
    if (Integer.bitCount(n) != 1 || n < 2) {
      throw new IllegalArgumentException("RANKS must be a power of two >= 2, got " + n);
    }
    int steps = Integer.numberOfTrailingZeros(n);
    SocketChannel[][] links = new SocketChannel[n][steps];
    try (ServerSocketChannel ss = ServerSocketChannel.open()) {
      ss.bind(new InetSocketAddress("127.0.0.1", 0));
      for (int s = 0; s < steps; s++) {
        for (int r = 0; r < n; r++) {
          int p = r ^ (1 << s);
          if (r < p) {
            links[r][s] = SocketChannel.open(ss.getLocalAddress());
            links[p][s] = ss.accept();
          }
        }
      }
    }
    for (SocketChannel[] row : links) {
      for (SocketChannel ch : row) {
        ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
        ch.configureBlocking(false);
      }
    }
    double[][] perCall = new double[n][rounds];
    long[] wrong = new long[n];
    CyclicBarrier barrier = new CyclicBarrier(n);
    Thread[] threads = new Thread[n];
    for (int r = 0; r < n; r++) {
      int rank = r;
      threads[r] =
          new Thread(
              () -> {
                try {
                  rank(rank, n, links[rank], calls, rounds, barrier, perCall[rank], wrong);
                } catch (Exception e) {
                  throw new RuntimeException(e);
                }
              });
      threads[r].start();
    }
    for (Thread t : threads) {
      t.join();
    }
    double[] slowest = new double[rounds];
    for (int k = 0; k < rounds; k++) {
      for (int r = 0; r < n; r++) {
        slowest[k] = Math.max(slowest[k], perCall[r][k]);
      }
    }
    double[] sorted = slowest.clone();
    Arrays.sort(sorted);
    System.out.printf(
        "recursive doubling over loopback TCP, busy-polled, %d ranks, 8 B: %.1f us per call"
            + " (median of %d rounds of %d calls: %s), wrong %d%n",
        n,
        sorted[rounds / 2],
        rounds,
        calls,
        Arrays.toString(Arrays.stream(slowest).map(v -> Math.round(v * 10) / 10.0).toArray()),
        Arrays.stream(wrong).sum());
    for (SocketChannel[] row : links) {
      for (SocketChannel ch : row) {
        ch.close();
      }
    }
  }

  private static void rank(
      int rank,
      int n,
      SocketChannel[] partners,
      int calls,
      int rounds,
      CyclicBarrier barrier,
      double[] perCall,
      long[] wrong)
      throws Exception {
    ByteBuffer out = ByteBuffer.allocateDirect(FRAME).order(ByteOrder.nativeOrder());
    ByteBuffer in = ByteBuffer.allocateDirect(FRAME).order(ByteOrder.nativeOrder());
    SplittableRandom random = new SplittableRandom(42);
    for (int k = -1; k < rounds; k++) { // round -1 warms the JIT up
      barrier.await(WAIT_SECONDS, TimeUnit.SECONDS);
      long t0 = System.nanoTime();
      for (int c = 0; c < calls; c++) {
        // every rank draws the same sequence: rank r's value is the (r+1)-th draw of the call
        long expected = 0;
        long value = 0;
        for (int r = 0; r < n; r++) {
          long v = random.nextInt(1 << 20);
          expected += v;
          if (r == rank) {
            value = v;
          }
        }
        for (int s = 0; s < partners.length; s++) {
          out.clear();
          out.putLong(0, c).putLong(8, s).putLong(16, value);
          while (out.hasRemaining()) {
            partners[s].write(out);
          }
          in.clear();
          long deadline = 0;
          while (in.hasRemaining()) {
            if (partners[s].read(in) == 0) {
              long now = System.nanoTime();
              if (deadline == 0) {
                deadline = now + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
              } else if (now > deadline) {
                throw new IllegalStateException("rank " + rank + ": no data from its partner");
              }
            }
          }
          value += in.getLong(16);
        }
        if (value != expected) {
          wrong[rank]++;
        }
      }
      if (k >= 0) {
        perCall[k] = (System.nanoTime() - t0) / 1e3 / calls;
      }
    }
  }
}
