import java.net.InetSocketAddress;
import jdk.net.ExtendedSocketOptions;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;

/**
 * The floor of a small allReduce by recursive doubling over loopback TCP for a Java engine: N
 * threads, one per rank, each with a non-blocking socket to each of its log2(N) partners, busy
 * polling; a round writes a 16-byte header and the payload from one direct buffer, reads the
 * partner's frame into another and adds it in (64-bit integers). No FIFO, no proxy, no hand-off, no
 * copy beyond filling the buffer once a call: what the socket and NIO cost alone. Writing and
 * reading alternate until both are done, so two partners sending more than a socket buffer holds
 * cannot block each other. Every call's first element, and every element of each round's last
 * call, is checked against a sum computed apart. Prints the median over rounds of the time per
 * call. Every thread spins: with fewer cores than ranks they wait for each other's time slices, and
 * the figure means nothing.
 *
 * <p>LAYOUT says how partners are linked and polled: {@code shared} (default) one socket per pair
 * for both directions; {@code split} one socket each way, as the engine's send and receive
 * connections are; {@code split-all} split, and every pass also reads the sockets of later rounds
 * (as a proxy pass does over all the operations of a collective); {@code split-delack} split, with
 * the receiving sockets asked for delayed acknowledgements ({@code TCP_QUICKACK} off) after every
 * read, so that Linux acknowledges every second small segment instead of each one.
 *
 * <p>Run: java bench/micro/TcpDoublingFloor.java RANKS [CALLS] [ROUNDS] [BYTES] [LAYOUT] (BYTES a
 * multiple of 8, default 8)
 */
public class TcpDoublingFloor {
  private static final int HEADER = 16;

  /** Every wait ends: a rank whose partner died fails instead of spinning on. */
  private static final long WAIT_SECONDS = 60;

  public static void main(String[] args) throws Exception {
    int n = Integer.parseInt(args[0]);
    int calls = args.length > 1 ? Integer.parseInt(args[1]) : 20_000;
    int rounds = args.length > 2 ? Integer.parseInt(args[2]) : 5;
    int bytes = args.length > 3 ? Integer.parseInt(args[3]) : 8;
    String layout = args.length > 4 ? args[4] : "shared";
    if (!List.of("shared", "split", "split-all", "split-delack").contains(layout)) {
      throw new IllegalArgumentException(
          "LAYOUT must be shared, split, split-all or split-delack, got " + layout);
    }
    boolean split = !layout.equals("shared");
    boolean pollAll = layout.equals("split-all");
    boolean delack = layout.equals("split-delack");
    if (bytes < 8 || bytes % 8 != 0) {
      throw new IllegalArgumentException("BYTES must be a positive multiple of 8, got " + bytes);
    }
    if (Integer.bitCount(n) != 1 || n < 2) {
      throw new IllegalArgumentException("RANKS must be a power of two >= 2, got " + n);
    }
    int steps = Integer.numberOfTrailingZeros(n);
    SocketChannel[][] links = new SocketChannel[n][steps];
    SocketChannel[][] from = split ? new SocketChannel[n][steps] : links;
    try (ServerSocketChannel ss = ServerSocketChannel.open()) {
      ss.bind(new InetSocketAddress("127.0.0.1", 0));
      for (int s = 0; s < steps; s++) {
        for (int r = 0; r < n; r++) {
          int p = r ^ (1 << s);
          if (split) {
            links[r][s] = SocketChannel.open(ss.getLocalAddress());
            from[p][s] = ss.accept();
          } else if (r < p) {
            links[r][s] = SocketChannel.open(ss.getLocalAddress());
            links[p][s] = ss.accept();
          }
        }
      }
    }
    List<SocketChannel> all = new ArrayList<>();
    for (int r = 0; r < n; r++) {
      all.addAll(Arrays.asList(links[r]));
      if (split) {
        all.addAll(Arrays.asList(from[r]));
      }
    }
    for (SocketChannel ch : all) {
      ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
      ch.configureBlocking(false);
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
                  rank(
                      rank,
                      n,
                      links[rank],
                      from[rank],
                      pollAll,
                      delack,
                      calls,
                      rounds,
                      bytes,
                      barrier,
                      perCall[rank],
                      wrong);
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
        "recursive doubling over loopback TCP (%s), busy-polled, %d ranks, %d B: %.1f us per call"
            + " (median of %d rounds of %d calls: %s), wrong %d%n",
        layout,
        n,
        bytes,
        sorted[rounds / 2],
        rounds,
        calls,
        Arrays.toString(Arrays.stream(slowest).map(v -> Math.round(v * 10) / 10.0).toArray()),
        Arrays.stream(wrong).sum());
    for (SocketChannel ch : all) {
      ch.close();
    }
  }

  private static void rank(
      int rank,
      int n,
      SocketChannel[] partners,
      SocketChannel[] fromPartners,
      boolean pollAll,
      boolean delack,
      int calls,
      int rounds,
      int bytes,
      CyclicBarrier barrier,
      double[] perCall,
      long[] wrong)
      throws Exception {
    int count = bytes / 8;
    ByteBuffer out = ByteBuffer.allocateDirect(HEADER + bytes).order(ByteOrder.nativeOrder());
    ByteBuffer[] ins = new ByteBuffer[partners.length];
    for (int s = 0; s < ins.length; s++) {
      ins[s] = ByteBuffer.allocateDirect(HEADER + bytes).order(ByteOrder.nativeOrder());
    }
    SplittableRandom random = new SplittableRandom(42);
    for (int k = -1; k < rounds; k++) { // round -1 warms the JIT up
      barrier.await(WAIT_SECONDS, TimeUnit.SECONDS);
      long t0 = System.nanoTime();
      for (int c = 0; c < calls; c++) {
        // every rank draws the same sequence: rank r's base is the (r+1)-th draw of the call, and
        // its element i is base + i, so the sum's element i is the sum of the bases + n * i
        long expected = 0;
        long base = 0;
        for (int r = 0; r < n; r++) {
          long v = random.nextInt(1 << 20);
          expected += v;
          if (r == rank) {
            base = v;
          }
        }
        for (int i = 0; i < count; i++) {
          out.putLong(HEADER + 8 * i, base + i);
        }
        for (ByteBuffer b : ins) {
          b.clear();
        }
        for (int s = 0; s < partners.length; s++) {
          out.clear();
          out.putLong(0, c).putLong(8, s);
          ByteBuffer in = ins[s];
          long deadline = 0;
          while (out.hasRemaining() || in.hasRemaining()) {
            int moved = out.hasRemaining() ? partners[s].write(out) : 0;
            if (in.hasRemaining()) {
              int got = fromPartners[s].read(in);
              if (got > 0 && delack) {
                // not permanent: Linux leaves the mode again when a delayed acknowledgement fires
                fromPartners[s].setOption(ExtendedSocketOptions.TCP_QUICKACK, false);
              }
              moved += got;
            }
            for (int later = s + 1; pollAll && later < partners.length; later++) {
              if (ins[later].hasRemaining()) {
                moved += fromPartners[later].read(ins[later]);
              }
            }
            if (moved == 0) {
              long now = System.nanoTime();
              if (deadline == 0) {
                deadline = now + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
              } else if (now > deadline) {
                throw new IllegalStateException("rank " + rank + ": no data from its partner");
              }
            }
          }
          for (int i = 0; i < count; i++) {
            int at = HEADER + 8 * i;
            out.putLong(at, out.getLong(at) + in.getLong(at));
          }
        }
        int last = c == calls - 1 ? count : 1;
        for (int i = 0; i < last; i++) {
          if (out.getLong(HEADER + 8 * i) != expected + (long) n * i) {
            wrong[rank]++;
            break;
          }
        }
      }
      if (k >= 0) {
        perCall[k] = (System.nanoTime() - t0) / 1e3 / calls;
      }
    }
  }
}
