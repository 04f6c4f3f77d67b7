package org.sparkccl;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.SplittableRandom;
import java.util.concurrent.locks.LockSupport;
import org.sparkccl.bootstrap.TcpBootstrap;
import org.sparkccl.bootstrap.TcpBootstrapRoot;
import org.sparkccl.config.CclConfig;
import org.sparkccl.device.DeviceBuffer;
import org.sparkccl.device.HostDevice;

/**
 * One rank in its own JVM, for {@code ProcessAllReduceTest}. Arguments: {@code root rank nRanks
 * mode}; the configuration comes from {@code -Dsparkccl.*}. A root of {@code serve:HOST} starts the
 * bootstrap root in this process, listening on {@code HOST}, and prints {@code ROOT <address>} (for
 * ranks in network namespaces, which cannot reach the test's own root).
 *
 * <ul>
 *   <li>{@code check}: a few allReduces, each checked against every rank's input (rebuilt from
 *       seeds) with {@link Reference}; prints {@code OK} and exits 0.
 *   <li>{@code collectives}: broadcast, reduce, allGather and reduceScatter through the blocking
 *       API, in place and out of place, each checked on this rank with {@link CollectiveCase};
 *       prints {@code OK} and exits 0.
 *   <li>{@code mismatch}: one allReduce where rank 1 asks for another operator; must fail.
 *   <li>{@code mismatch-roots}: a small broadcast where rank 1 names itself the root and the others
 *       rank 0 (two ranks that only send); must fail.
 *   <li>{@code mismatch-kinds}: a small allReduce on rank 1 against a small broadcast from rank 0
 *       on the others; must fail.
 *   <li>{@code mismatch-reduce}: a small reduce to rank 0 on rank 1 against a small broadcast from
 *       rank 0 on the others; must fail.
 *   <li>{@code mismatch-reduce-roots}: a small reduce to rank 0 on rank 1 against a small reduce to
 *       rank 1 on the others; must fail.
 *   <li>{@code loop}: allReduces of 4M floats until one fails (a peer dies) or 90 s pass; prints
 *       {@code ITER <i>} after each one. Exits 3 when the time runs out. {@code loop-small}: the
 *       same with 16 floats (point-to-point edges), printing every 1000th.
 * </ul>
 *
 * Every mode first prints {@code RING <transport> MAPPED <k>} (shared-memory FIFOs mapped), and a
 * rank that still maps one after close fails. Any failure prints {@code FAILED: <message>} and
 * exits 1.
 */
public final class RankProcessMain {
  private RankProcessMain() {}

  public static void main(String[] args) {
    ChildJvm.exitWith(
        () -> run(args[0], Integer.parseInt(args[1]), Integer.parseInt(args[2]), args[3]));
  }

  private static int run(String root, int rank, int n, String mode) {
    if (root.startsWith("serve:")) {
      try (TcpBootstrapRoot served = TcpBootstrapRoot.start(root.substring(6), n)) {
        System.out.println("ROOT " + served.address());
        System.out.flush();
        return run(served.address(), rank, n, mode);
      }
    }
    CclConfig config = CclConfig.fromEnvironment();
    int code;
    try (TcpBootstrap boot = TcpBootstrap.connect(root, rank, n, Duration.ofSeconds(60));
        Communicator comm = Communicator.create(boot, config)) {
      System.out.println("RING " + comm.ringTransport() + " MAPPED " + sharedMappings());
      // every rank connected before any starts sending (a separate test covers early senders)
      boot.allGather(new byte[0], Duration.ofSeconds(60));
      code =
          switch (mode) {
            case "loop", "loop-small" -> loop(comm, mode.equals("loop-small"));
            case "collectives" -> collectives(comm, rank, n);
            case "mismatch" -> mismatch(comm, rank);
            case "mismatch-roots", "mismatch-kinds", "mismatch-reduce", "mismatch-reduce-roots" ->
                mismatchLast(comm, rank, mode);
            default -> check(comm, rank, n);
          };
    }
    long left = sharedMappings();
    if (code == 0 && left > 0) {
      System.out.println("FAILED: " + left + " shared-memory FIFOs still mapped after close");
      return 1;
    }
    return code;
  }

  /** Mappings of the engine's shared-memory files in this process (0 where there is no /proc). */
  private static long sharedMappings() {
    try (var lines = Files.lines(Path.of("/proc/self/maps"))) {
      return lines.filter(l -> l.contains("/dev/shm/sparkccl-")).count();
    } catch (IOException | UncheckedIOException e) {
      return 0;
    }
  }

  /**
   * Rank 1 asks for a max where the others ask for a sum, over 300,001 floats (the ring): prints
   * {@code FAILED} with the error, which must come within the timeout on every rank.
   */
  private static int mismatch(Communicator comm, int rank) {
    int count = 300_001;
    try (DeviceBuffer buf = HostDevice.INSTANCE.allocate(4L * count)) {
      ByteBuffer in = Reference.heap(4 * count);
      Reference.fill(in, count, DataType.FLOAT32, new SplittableRandom(rank), false);
      buf.copyFromHost(in.order(ByteOrder.nativeOrder()), 0);
      comm.allReduce(buf, buf, count, DataType.FLOAT32, rank == 1 ? ReduceOp.MAX : ReduceOp.SUM);
    }
    System.out.println("FAILED: the mismatched allReduce returned without an error");
    return 3;
  }

  /**
   * A broadcast of 16 random floats from rank 0 (a reduce to rank 1 in {@code
   * mismatch-reduce-roots}), where rank 1 broadcasts from itself ({@code mismatch-roots}),
   * all-reduces ({@code mismatch-kinds}) or reduces to rank 0 (the two {@code mismatch-reduce}
   * modes), as the last call: small calls run on point-to-point edges, where ranks that only send
   * finish without waiting, and no later call's data can reveal the mismatch. On 3 ranks every rank
   * of the reduce modes' trees completes its part, so only an announcement reveals those. Prints
   * {@code FAILED} with the error when the call fails, or {@code ABORTED} when the communicator
   * fails within 10 s after the call returned.
   */
  private static int mismatchLast(Communicator comm, int rank, String mode) {
    int count = 16;
    try (DeviceBuffer buf = HostDevice.INSTANCE.allocate(4L * count)) {
      ByteBuffer in = Reference.heap(4 * count);
      Reference.fill(in, count, DataType.FLOAT32, new SplittableRandom(rank), false);
      buf.copyFromHost(in.order(ByteOrder.nativeOrder()), 0);
      if (rank != 1 && mode.equals("mismatch-reduce-roots")) {
        comm.reduce(buf, buf, count, DataType.FLOAT32, ReduceOp.SUM, 1);
      } else if (rank != 1) {
        comm.broadcast(buf, buf, count, DataType.FLOAT32, 0);
      } else if (mode.equals("mismatch-roots")) {
        comm.broadcast(buf, buf, count, DataType.FLOAT32, 1);
      } else if (mode.equals("mismatch-kinds")) {
        comm.allReduce(buf, buf, count, DataType.FLOAT32, ReduceOp.SUM);
      } else {
        comm.reduce(buf, buf, count, DataType.FLOAT32, ReduceOp.SUM, 0);
      }
    }
    long deadline = System.nanoTime() + 10_000_000_000L;
    while (!comm.isAborted() && System.nanoTime() < deadline) {
      LockSupport.parkNanos(1_000_000);
    }
    if (comm.isAborted()) {
      System.out.println("ABORTED after the call returned");
      return 1;
    }
    System.out.println("FAILED: the mismatched call returned and nothing failed in 10 s");
    return 3;
  }

  private static int check(Communicator comm, int rank, int n) {
    Object[][] cases = {
      {DataType.FLOAT32, ReduceOp.SUM, 1003},
      {DataType.INT64, ReduceOp.SUM, 50_001},
      {DataType.BFLOAT16, ReduceOp.MAX, 7},
      {DataType.FLOAT64, ReduceOp.AVG, 300_007},
      {DataType.UINT8, ReduceOp.PROD, 200_003},
      {DataType.FLOAT16, ReduceOp.SUM, 1},
    };
    for (int k = 0; k < cases.length; k++) {
      DataType t = (DataType) cases[k][0];
      ReduceOp op = (ReduceOp) cases[k][1];
      int count = (int) cases[k][2];
      ByteBuffer[] inputs = new ByteBuffer[n];
      for (int r = 0; r < n; r++) {
        inputs[r] = Reference.heap(count * t.size());
        Reference.fill(inputs[r], count, t, new SplittableRandom(77L * k + r), op == ReduceOp.PROD);
      }
      boolean inPlace = k % 2 == 0;
      try (DeviceBuffer send = HostDevice.INSTANCE.allocate((long) count * t.size());
          DeviceBuffer recvBuf =
              inPlace ? null : HostDevice.INSTANCE.allocate((long) count * t.size())) {
        DeviceBuffer recv = inPlace ? send : recvBuf;
        send.copyFromHost(inputs[rank].duplicate().order(ByteOrder.nativeOrder()), 0);
        comm.allReduce(send, recv, count, t, op);
        ByteBuffer got = Reference.heap(count * t.size());
        recv.copyToHost(0, got);
        String m = Reference.allReduce(inputs, count, t, op).mismatches(got);
        if (m != null) {
          System.out.println(
              "FAILED: rank " + rank + ": " + t + " " + op + " count=" + count + ": " + m);
          return 1;
        }
      }
    }
    System.out.println("OK");
    return 0;
  }

  private static int collectives(Communicator comm, int rank, int n) {
    CollectiveCase.Kind bcast = CollectiveCase.Kind.BROADCAST;
    CollectiveCase.Kind reduce = CollectiveCase.Kind.REDUCE;
    CollectiveCase.Kind gather = CollectiveCase.Kind.ALL_GATHER;
    CollectiveCase.Kind scatter = CollectiveCase.Kind.REDUCE_SCATTER;
    CollectiveCase.Spec[] specs = {
      new CollectiveCase.Spec(bcast, DataType.FLOAT32, null, 50_001, 1, false),
      new CollectiveCase.Spec(bcast, DataType.INT64, null, 7, n - 1, true),
      new CollectiveCase.Spec(reduce, DataType.FLOAT64, ReduceOp.SUM, 30_007, 0, false),
      new CollectiveCase.Spec(reduce, DataType.INT8, ReduceOp.MAX, 100_003, n - 1, false),
      new CollectiveCase.Spec(reduce, DataType.BFLOAT16, ReduceOp.AVG, 1003, 1, true),
      new CollectiveCase.Spec(gather, DataType.BFLOAT16, null, 20_001, 0, false),
      new CollectiveCase.Spec(gather, DataType.UINT32, null, 70_001, 0, true),
      new CollectiveCase.Spec(scatter, DataType.FLOAT16, ReduceOp.SUM, 10_007, 0, false),
      new CollectiveCase.Spec(scatter, DataType.INT32, ReduceOp.PROD, 70_001, 0, true),
    };
    for (int k = 0; k < specs.length; k++) {
      CollectiveCase.Spec s = specs[k];
      ByteBuffer[] inputs = s.inputs(n, 500 + k);
      CollectiveCase c = CollectiveCase.prepare(s, rank, n, inputs, 500 + k);
      try {
        c.runBlocking(comm);
        String m = c.check(inputs);
        if (m != null) {
          System.out.println("FAILED: " + s + ": " + m);
          return 1;
        }
      } finally {
        if (comm.isAborted()) {
          comm.close(); // stop the kernels before the buffers are freed
        }
        c.close();
      }
    }
    System.out.println("OK");
    return 0;
  }

  /**
   * allReduces of 4M floats ({@code loop}: the ring) or of 16 ({@code loop-small}: point-to-point
   * edges) until one fails or 90 s pass; prints {@code ITER 1}, then every large call's number (or
   * every 1000th small one's).
   */
  private static int loop(Communicator comm, boolean small) {
    int count = small ? 16 : 4 << 20;
    int every = small ? 1000 : 1;
    long end = System.nanoTime() + 90_000_000_000L;
    try (DeviceBuffer buf = HostDevice.INSTANCE.allocate(4L * count)) {
      for (int i = 1; System.nanoTime() < end; i++) {
        comm.allReduce(buf, buf, count, DataType.FLOAT32, ReduceOp.MAX);
        if (i == 1 || i % every == 0) {
          System.out.println("ITER " + i);
          System.out.flush();
        }
      }
    }
    System.out.println("FAILED: the loop ran 90 s without an error");
    return 3;
  }
}
