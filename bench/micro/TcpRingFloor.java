import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.SplittableRandom;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * The floor of a ring allReduce of float32 over loopback TCP for a Java engine, with one or more
 * threads a rank: N ranks as threads of one process, each rank's buffer cut into LANES parts, and
 * every part its own ring (its own sockets and thread), as an engine's channels would be if each
 * had a thread that moves its bytes. Each step writes a chunk to the next rank while it reads one
 * from the previous; the reduce-scatter half sums what arrived into the output piece by piece (64
 * KiB) as it arrives, through on-heap blocks as the engine's reducer does; the allGather half reads
 * straight into the output. Busy polling, non-blocking sockets, nothing allocated in the loop. It
 * measures what a second thread a rank moving half of every chunk could gain where one thread a
 * rank moves them all (the engine at 8 ranks on 16 cores).
 *
 * <p>Inputs are random small integers, so sums are exact: every round's last call is checked
 * element by element against a sum computed apart; every wait ends after 60 s without progress.
 * Prints one line a round: {@code lanesL BYTES us_per_call round}, the format of {@code
 * bench/settings_summary.py}.
 *
 * <p>Run: java bench/micro/TcpRingFloor.java RANKS LANES BYTES [CALLS] [ROUNDS] [WARMUP], with
 * FLOOR_PIECE and FLOOR_SOCKBUF (bytes) in the environment to change the piece and the socket
 * buffers, and FLOOR_NOISE=THREADS:PERIOD_US:BUSY_US to add threads that each wake every PERIOD_US
 * and stay busy for BUSY_US, as an engine's threads beside its polling ones do (a proxy, a kernel
 * thread waking to check its deadline): what such wake-ups cost a host whose cores the rings fill.
 */
public class TcpRingFloor {
  private static final long WAIT_NANOS = TimeUnit.SECONDS.toNanos(60);
  // elements a block, as the engine's reducer sums float32 (4 KiB)
  private static final int BLOCK = 1024;

  public static void main(String[] args) throws Exception {
    int n = Integer.parseInt(args[0]);
    int lanes = Integer.parseInt(args[1]);
    int bytes = Integer.parseInt(args[2]);
    int calls = args.length > 3 ? Integer.parseInt(args[3]) : 200;
    int rounds = args.length > 4 ? Integer.parseInt(args[4]) : 1;
    int warmup = args.length > 5 ? Integer.parseInt(args[5]) : 200;
    // bytes summed at a time as they arrive (a chunk's size or more sums a step only once it has
    // arrived whole, as an engine that reduces whole slots does)
    int piece = envBytes("FLOOR_PIECE", 64 << 10, 4);
    // kernel socket buffers (0: the kernel's autotuning); the engine asks for 4 MiB
    int sockbuf = envBytes("FLOOR_SOCKBUF", 0, 0);
    if (n < 2 || lanes < 1 || bytes % (4 * n * lanes) != 0) {
      throw new IllegalArgumentException(
          "RANKS >= 2, LANES >= 1 and BYTES a multiple of 4 x RANKS x LANES, got "
              + n + ", " + lanes + ", " + bytes);
    }
    // ring[l][r]: rank r's connection to rank r+1 in lane l (sending side) and its peer
    SocketChannel[][] toNext = new SocketChannel[lanes][n];
    SocketChannel[][] fromPrev = new SocketChannel[lanes][n];
    try (ServerSocketChannel ss = ServerSocketChannel.open()) {
      if (sockbuf > 0) {
        // before the connections, as the engine does: a receive window above 64 KiB is agreed
        // in the handshake
        ss.setOption(StandardSocketOptions.SO_RCVBUF, sockbuf);
      }
      ss.bind(new InetSocketAddress("127.0.0.1", 0));
      for (int l = 0; l < lanes; l++) {
        for (int r = 0; r < n; r++) {
          toNext[l][r] = SocketChannel.open();
          if (sockbuf > 0) {
            toNext[l][r].setOption(StandardSocketOptions.SO_SNDBUF, sockbuf);
            toNext[l][r].setOption(StandardSocketOptions.SO_RCVBUF, sockbuf);
          }
          toNext[l][r].connect(ss.getLocalAddress());
          fromPrev[l][(r + 1) % n] = ss.accept();
          if (sockbuf > 0) {
            fromPrev[l][(r + 1) % n].setOption(StandardSocketOptions.SO_SNDBUF, sockbuf);
          }
        }
      }
    }
    for (SocketChannel[][] side : new SocketChannel[][][] {toNext, fromPrev}) {
      for (SocketChannel[] lane : side) {
        for (SocketChannel ch : lane) {
          ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
          ch.configureBlocking(false);
        }
      }
    }
    int count = bytes / 4;
    ByteBuffer[] input = new ByteBuffer[n];
    ByteBuffer[] output = new ByteBuffer[n];
    SplittableRandom random = new SplittableRandom(7);
    float[] expected = new float[count];
    for (int r = 0; r < n; r++) {
      input[r] = ByteBuffer.allocateDirect(bytes).order(ByteOrder.nativeOrder());
      output[r] = ByteBuffer.allocateDirect(bytes).order(ByteOrder.nativeOrder());
      for (int i = 0; i < count; i++) {
        float v = random.nextInt(1, 1 << 12);
        input[r].putFloat(4 * i, v);
        expected[i] += v;
      }
    }
    double[][] seconds = new double[rounds][n * lanes];
    long[] wrong = new long[1];
    CyclicBarrier barrier = new CyclicBarrier(n * lanes);
    Thread[] threads = new Thread[n * lanes];
    Throwable[] failure = new Throwable[1];
    for (int l = 0; l < lanes; l++) {
      for (int r = 0; r < n; r++) {
        Lane lane =
            new Lane(
                r, n, l, lanes, bytes, piece, toNext[l][r], fromPrev[l][r], input[r], output[r]);
        int index = l * n + r;
        threads[index] =
            new Thread(
                () -> {
                  try {
                    for (int k = -1; k < rounds; k++) {
                      int m = k < 0 ? warmup : calls;
                      barrier.await(60, TimeUnit.SECONDS);
                      long t0 = System.nanoTime();
                      for (int c = 0; c < m; c++) {
                        lane.call();
                      }
                      if (k >= 0) {
                        seconds[k][index] = (System.nanoTime() - t0) / 1e9;
                      }
                      barrier.await(60, TimeUnit.SECONDS);
                      if (index == 0) {
                        for (int q = 0; q < n; q++) {
                          for (int i = 0; i < count; i++) {
                            if (output[q].getFloat(4 * i) != expected[i]) {
                              wrong[0]++;
                              break;
                            }
                          }
                        }
                      }
                    }
                  } catch (Throwable e) {
                    synchronized (failure) {
                      if (failure[0] == null) {
                        failure[0] = e;
                      }
                    }
                    barrier.reset();
                  }
                },
                "rank" + r + "-lane" + l);
        threads[index].start();
      }
    }
    Thread[] noise = startNoise(System.getenv("FLOOR_NOISE"));
    for (Thread t : threads) {
      t.join();
    }
    for (Thread t : noise) {
      t.interrupt();
    }
    if (failure[0] != null) {
      throw new IllegalStateException("a lane failed", failure[0]);
    }
    if (wrong[0] != 0) {
      throw new IllegalStateException(wrong[0] + " outputs (a rank, a round) differ from the reference sum");
    }
    for (int k = 0; k < rounds; k++) {
      double slowest = 0;
      for (double s : seconds[k]) {
        slowest = Math.max(slowest, s);
      }
      System.out.printf("lanes%d %d %.1f %d%n", lanes, bytes, slowest * 1e6 / calls, k + 1);
    }
  }

  /**
   * Daemon threads from {@code THREADS:PERIOD_US:BUSY_US} (none where unset): each sleeps PERIOD_US,
   * spins BUSY_US, and again, until interrupted.
   */
  private static Thread[] startNoise(String spec) {
    if (spec == null || spec.isEmpty()) {
      return new Thread[0];
    }
    String[] f = spec.split(":");
    if (f.length != 3) {
      throw new IllegalArgumentException(
          "FLOOR_NOISE=" + spec + ": expected THREADS:PERIOD_US:BUSY_US, for example 8:2000:20");
    }
    int count = Integer.parseInt(f[0]);
    long periodNanos = TimeUnit.MICROSECONDS.toNanos(Long.parseLong(f[1]));
    long busyNanos = TimeUnit.MICROSECONDS.toNanos(Long.parseLong(f[2]));
    Thread[] noise = new Thread[count];
    for (int i = 0; i < count; i++) {
      noise[i] =
          new Thread(
              () -> {
                while (!Thread.currentThread().isInterrupted()) {
                  LockSupport.parkNanos(periodNanos);
                  long until = System.nanoTime() + busyNanos;
                  while (System.nanoTime() < until) {
                    Thread.onSpinWait();
                  }
                }
              },
              "noise" + i);
      noise[i].setDaemon(true);
      noise[i].start();
    }
    return noise;
  }

  /**
   * A byte count of at least {@code min}, a multiple of 4, from the environment variable {@code
   * name}; {@code otherwise} where it is unset.
   */
  private static int envBytes(String name, int otherwise, int min) {
    String v = System.getenv(name);
    if (v == null || v.isEmpty()) {
      return otherwise;
    }
    try {
      int bytes = Integer.parseInt(v);
      if (bytes >= min && bytes % 4 == 0) {
        return bytes;
      }
    } catch (NumberFormatException e) {
      // reported below with what was expected
    }
    throw new IllegalArgumentException(
        name + "=" + v + ": expected a byte count, a multiple of 4, of at least " + min);
  }

  /** One rank's part of one lane: its ring over the lane's slice of the buffers. */
  private static final class Lane {
    private final int rank;
    private final int n;
    private final int chunk;
    private final int base;
    private final int piece;
    private final SocketChannel next;
    private final SocketChannel prev;
    private final ByteBuffer recv;
    private final FloatBuffer recvFloats;
    private final FloatBuffer inFloats;
    private final FloatBuffer outFloats;
    private final ByteBuffer[] inChunks;
    private final ByteBuffer[] outChunks;
    private final float[] x = new float[BLOCK];
    private final float[] y = new float[BLOCK];

    Lane(int rank, int n, int lane, int lanes, int bytes, int piece, SocketChannel next,
        SocketChannel prev, ByteBuffer input, ByteBuffer output) {
      this.rank = rank;
      this.n = n;
      this.chunk = bytes / lanes / n;
      this.base = lane * (bytes / lanes);
      this.piece = piece;
      this.next = next;
      this.prev = prev;
      this.recv = ByteBuffer.allocateDirect(chunk).order(ByteOrder.nativeOrder());
      this.recvFloats = recv.asFloatBuffer();
      this.inFloats = input.asFloatBuffer();
      this.outFloats = output.asFloatBuffer();
      inChunks = new ByteBuffer[n];
      outChunks = new ByteBuffer[n];
      for (int c = 0; c < n; c++) {
        inChunks[c] = input.slice(base + c * chunk, chunk);
        outChunks[c] = output.slice(base + c * chunk, chunk);
      }
    }

    void call() throws Exception {
      for (int s = 0; s < n - 1; s++) {
        int sendChunk = Math.floorMod(rank - s, n);
        int recvChunk = Math.floorMod(rank - s - 1, n);
        step(s == 0 ? inChunks[sendChunk] : outChunks[sendChunk], recv, recvChunk);
      }
      for (int s = 0; s < n - 1; s++) {
        step(outChunks[Math.floorMod(rank + 1 - s, n)], outChunks[Math.floorMod(rank - s, n)], -1);
      }
    }

    /**
     * Writes {@code send} whole while reading {@code into} whole; where {@code reduceChunk} >= 0,
     * sums what arrived with that chunk of the input into the output as it arrives.
     */
    private void step(ByteBuffer send, ByteBuffer into, int reduceChunk) throws Exception {
      send.clear();
      into.clear();
      int reduced = 0;
      long idleSince = 0;
      while (send.hasRemaining() || reduced < chunk) {
        int moved = send.hasRemaining() ? next.write(send) : 0;
        if (into.hasRemaining()) {
          moved += prev.read(into);
        }
        int got = into.position() & ~3;
        if (reduceChunk < 0) {
          reduced = got;
        } else if (got - reduced >= piece || got == chunk && reduced < chunk) {
          reduce(reduceChunk, reduced, got - reduced);
          reduced = got;
        }
        if (moved == 0) {
          long now = System.nanoTime();
          if (idleSince == 0) {
            idleSince = now;
          } else if (now - idleSince > WAIT_NANOS) {
            throw new IllegalStateException("rank " + rank + ": no progress for 60 s");
          }
        } else {
          idleSince = 0;
        }
      }
    }

    /** output[c][at, at + len) = recv[at, at + len) + input[c][at, at + len), through blocks. */
    private void reduce(int c, int at, int len) {
      int first = (base + c * chunk + at) / 4;
      int from = at / 4;
      int elems = len / 4;
      for (int done = 0; done < elems; done += BLOCK) {
        int k = Math.min(BLOCK, elems - done);
        recvFloats.get(from + done, x, 0, k);
        inFloats.get(first + done, y, 0, k);
        for (int i = 0; i < k; i++) {
          x[i] += y[i];
        }
        outFloats.put(first + done, x, 0, k);
      }
    }
  }
}
