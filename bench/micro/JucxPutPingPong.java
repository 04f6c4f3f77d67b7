import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.Locale;
import org.openucx.jucx.ucp.UcpContext;
import org.openucx.jucx.ucp.UcpEndpoint;
import org.openucx.jucx.ucp.UcpEndpointParams;
import org.openucx.jucx.ucp.UcpMemory;
import org.openucx.jucx.ucp.UcpParams;
import org.openucx.jucx.ucp.UcpRemoteKey;
import org.openucx.jucx.ucp.UcpWorker;
import org.openucx.jucx.ucp.UcpWorkerParams;

/**
 * The floor under the ucx transport: two processes, each with a busy-polled UCX worker, bounce an
 * 8-byte counter with one-sided puts (rank 0 puts i into rank 1's registered memory, rank 1 sees it
 * and puts i back). Prints the median round trip of ROUNDS rounds of ITERS round trips. The two
 * processes meet over loopback TCP to swap worker addresses and remote keys.
 *
 * <pre>
 * java -cp 'perf/target/lib/*' bench/micro/JucxPutPingPong.java 1 PORT &   # rank 1 first
 * java -cp 'perf/target/lib/*' bench/micro/JucxPutPingPong.java 0 PORT     # prints the result
 * </pre>
 */
public class JucxPutPingPong {
  private static final int ROUNDS = 7;
  private static final int ITERS = 20_000;

  public static void main(String[] args) throws Exception {
    int rank = Integer.parseInt(args[0]);
    int port = Integer.parseInt(args[1]);
    UcpContext context = new UcpContext(new UcpParams().requestRmaFeature());
    UcpWorker worker = context.newWorker(new UcpWorkerParams());
    ByteBuffer inbox = ByteBuffer.allocateDirect(64).order(ByteOrder.nativeOrder());
    ByteBuffer outbox = ByteBuffer.allocateDirect(64).order(ByteOrder.nativeOrder());
    UcpMemory inMem = context.registerMemory(inbox);
    UcpMemory outMem = context.registerMemory(outbox);
    byte[] peerAddress;
    byte[] peerKey;
    long peerInbox;
    try (Socket s = meet(rank, port)) {
      DataOutputStream out = new DataOutputStream(s.getOutputStream());
      DataInputStream in = new DataInputStream(s.getInputStream());
      send(out, worker.getAddress());
      send(out, inMem.getRemoteKeyBuffer());
      out.writeLong(inMem.getAddress());
      out.flush();
      peerAddress = receive(in);
      peerKey = receive(in);
      peerInbox = in.readLong();
      UcpEndpoint ep =
          worker.newEndpoint(new UcpEndpointParams().setUcpAddress(direct(peerAddress)));
      UcpRemoteKey key = ep.unpackRemoteKey(direct(peerKey));
      double[] medians = new double[ROUNDS];
      long value = 0;
      // the first round warms up the JIT and UCX's lanes; it is not counted
      for (int round = -1; round < ROUNDS; round++) {
        long t0 = System.nanoTime();
        for (int i = 0; i < ITERS; i++) {
          value++;
          if (rank == 0) {
            put(ep, outMem, outbox, value, peerInbox, key, worker);
            await(inbox, value, worker);
          } else {
            await(inbox, value, worker);
            put(ep, outMem, outbox, value, peerInbox, key, worker);
          }
        }
        if (round >= 0) {
          medians[round] = (System.nanoTime() - t0) / 1e3 / ITERS;
        }
      }
      // both sides finish before either tears down
      out.writeInt(1);
      out.flush();
      in.readInt();
      if (rank == 0) {
        Arrays.sort(medians);
        System.out.printf(
            Locale.ROOT,
            "jucx put ping-pong: round trip median %.2f us (min %.2f, max %.2f over %d rounds of"
                + " %d), one way %.2f us%n",
            medians[ROUNDS / 2],
            medians[0],
            medians[ROUNDS - 1],
            ROUNDS,
            ITERS,
            medians[ROUNDS / 2] / 2);
      }
      key.close();
      try {
        org.openucx.jucx.ucp.UcpRequest closing = ep.closeNonBlockingFlush();
        long deadline = System.nanoTime() + 5_000_000_000L;
        while (!closing.isCompleted() && System.nanoTime() < deadline) {
          worker.progress();
        }
      } catch (RuntimeException e) {
        // the peer may have gone first: nothing is left to flush
      }
    }
    inMem.deregister();
    outMem.deregister();
    worker.close();
    context.close();
  }

  private static void put(
      UcpEndpoint ep,
      UcpMemory outMem,
      ByteBuffer outbox,
      long value,
      long remote,
      UcpRemoteKey key,
      UcpWorker worker)
      throws Exception {
    outbox.putLong(0, value);
    ep.putNonBlockingImplicit(outMem.getAddress(), 8, remote, key);
    worker.progress();
  }

  private static void await(ByteBuffer inbox, long value, UcpWorker worker) throws Exception {
    long deadline = System.nanoTime() + 10_000_000_000L;
    while (inbox.getLong(0) != value) {
      worker.progress();
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("no put arrived for 10 s (waiting for " + value + ")");
      }
    }
  }

  private static Socket meet(int rank, int port) throws Exception {
    InetAddress lo = InetAddress.getLoopbackAddress();
    if (rank == 1) {
      try (ServerSocket ss = new ServerSocket(port, 1, lo)) {
        ss.setSoTimeout(60_000);
        return ss.accept();
      }
    }
    long deadline = System.nanoTime() + 60_000_000_000L;
    while (true) {
      try {
        return new Socket(lo, port);
      } catch (java.net.ConnectException e) {
        if (System.nanoTime() > deadline) {
          throw e;
        }
        Thread.sleep(50);
      }
    }
  }

  private static void send(DataOutputStream out, ByteBuffer b) throws Exception {
    byte[] a = new byte[b.remaining()];
    b.duplicate().get(a);
    out.writeInt(a.length);
    out.write(a);
  }

  private static byte[] receive(DataInputStream in) throws Exception {
    byte[] a = new byte[in.readInt()];
    in.readFully(a);
    return a;
  }

  private static ByteBuffer direct(byte[] a) {
    ByteBuffer b = ByteBuffer.allocateDirect(a.length).put(a);
    b.flip();
    return b;
  }
}
