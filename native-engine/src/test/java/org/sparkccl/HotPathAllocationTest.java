package org.sparkccl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.management.ManagementFactory;
import java.lang.reflect.Method;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;
import org.sparkccl.bootstrap.LocalBootstrap;
import org.sparkccl.config.Algorithm;
import org.sparkccl.config.CclConfig;
import org.sparkccl.config.Transport;
import org.sparkccl.device.DeviceBuffer;
import org.sparkccl.device.HostDevice;

/**
 * The host ring over sockets, over UCX and over the in-process transport, in steady state,
 * allocates at most {@link #BOUND_PER_CALL} bytes per small allReduce, and trees, recursive
 * doubling and Rabenseifner (and tree broadcasts and reduces, which announce their calls) at most
 * {@link #BOUND_PER_POINT_TO_POINT_CALL}, counted on every engine thread ({@code sparkccl-*}) and
 * on the calling threads (the ranks' own, which call the blocking API), with {@code ThreadMXBean}'s
 * per-thread counters.
 */
@DisplayName("hot path allocation")
class HotPathAllocationTest {
  /** Ranks of the ring's test; the point-to-point algorithms run on 4, where a tree has depth. */
  private static final int RANKS = 2;

  private static final int POINT_TO_POINT_RANKS = 4;
  private static final int WARMUP = 2_000;
  private static final int CALLS = 10_000;
  private static final int COUNT = 16;

  /** 32 KiB of floats: past {@code Reducer.SCALAR_MAX}, so that slices reduce in on-heap blocks. */
  private static final int MID_COUNT = 8192;

  /**
   * Bytes per allReduce over both ranks, engine threads and callers together. Measured on a 2-core
   * machine: about 8,050 before requests, headers, texts and reduction views were reused or built
   * lazily, about 3,450 after; 920 to 1,040 (socket) and about 1,020 (local) once plans, proxy
   * operations, the call history, the collective's counters, the kernel's work holder, the callers'
   * idle strategy and the idle waits' lambdas were reused. What remains is made per launch on each
   * rank (about 350 bytes per rank on the caller's thread): the call, the collective and its future
   * (the API returns one per call), the kernel task, the queue nodes and the planner lambda; the
   * rest on the engine's threads, where it grows with how often they go idle and wake (a
   * selected-key iterator per dispatch, a decoded call per message), hence the margin. Over UCX:
   * about 990 while its connections made a request object per step, about 850 since each keeps one
   * per slot. About 580 (socket), 640 (local) and 670 (UCX) once each host channel reused its ring
   * work and task; 480, 480 and 590 once a received step's call was compared where it lies instead
   * of decoded (sockets, UCX) and the in-process transport kept one request per slot; 385, 384 and
   * 510 once kernels handed the proxy its operations through a stack linked by the operations
   * themselves, not a queue that made a node per submission; 339, 336 and 464 once a ring plan came
   * from the call rather than a planner lambda made per launch.
   */
  private static final long BOUND_PER_CALL = 1_600;

  /**
   * Bytes per allReduce over 4 ranks for trees, recursive doubling and Rabenseifner over
   * point-to-point links. Measured on a 2-core machine: 9,400 (tree), 11,900 (rd) and 20,400 (rh)
   * while each launch built its texts; 5,800, 7,900 and 14,300 once they were built only for an
   * error; 3,650, 4,980 and 8,470 once each link restarted its finished proxy operations, as the
   * ring's channels do; 3,180, 4,140 and 6,870 once each edge was its own wait condition (a wait
   * made two lambdas) and the exchanges' list was reused; about 770 for each once a launch re-armed
   * the edges, work and task of the last launch of its shape ({@code comm.PeerPlan}); about 670
   * once no planner lambda was made per launch. What remains is made per launch on each rank (about
   * 170 bytes per rank): the call, the collective and its future, and the kernel task's queue node.
   * Tree broadcasts and reduces with the mismatch check: about 840 and 920 (750 and 820 without the
   * lambda), of which each announcing rank's queued call is 24 bytes on its own thread and the
   * predecessors' decoded calls and queue entries 50 and 110 on the engine's threads.
   */
  private static final long BOUND_PER_POINT_TO_POINT_CALL = 1_600;

  @ParameterizedTest(name = "transport={0}")
  @EnumSource(
      value = Transport.class,
      names = {"SOCKET", "LOCAL", "UCX"})
  @DisplayName("10,000 small allReduces on the ring allocate a small fixed number of bytes each")
  void steadyStateAllReducesAllocateLittle(Transport transport) {
    long perCall = bytesPerAllReduce(transport, Algorithm.RING, RANKS);
    assertTrue(
        perCall <= BOUND_PER_CALL,
        transport
            + ": allocated "
            + perCall
            + " bytes per allReduce, expected at most "
            + BOUND_PER_CALL);
  }

  @ParameterizedTest(name = "algo={0}")
  @EnumSource(
      value = Algorithm.class,
      names = {"TREE", "RD", "RH"})
  @DisplayName("point-to-point algorithms allocate a bounded number of bytes per small allReduce")
  void pointToPointAlgorithmsAllocateABoundedAmount(Algorithm algo) {
    long perCall = bytesPerAllReduce(Transport.SOCKET, algo, POINT_TO_POINT_RANKS);
    assertTrue(
        perCall <= BOUND_PER_POINT_TO_POINT_CALL,
        algo
            + ": allocated "
            + perCall
            + " bytes per allReduce, expected at most "
            + BOUND_PER_POINT_TO_POINT_CALL);
  }

  @Test
  @DisplayName("a reduceScatter by recursive halving allocates a bounded number of bytes per call")
  void halvingReduceScattersAllocateABoundedAmount() {
    long perCall =
        bytesPerCall(Transport.SOCKET, Algorithm.RH, POINT_TO_POINT_RANKS, Op.REDUCE_SCATTER);
    assertTrue(
        perCall <= BOUND_PER_POINT_TO_POINT_CALL,
        "reduceScatter by halving: "
            + perCall
            + " bytes per reduceScatter, expected at most "
            + BOUND_PER_POINT_TO_POINT_CALL);
  }

  /**
   * Mid-size collectives: a reduction there goes through the reducer's on-heap blocks, through
   * typed views of the buffers, now cached per thread, and a ring moves every step through a FIFO
   * slot whose received call is now compared where it lies. Measured on a 2-core machine, bytes per
   * call before and after: halving reduceScatter 5,056 and 832, Rabenseifner allReduce 3,076 and
   * 768 (the views made per reduction; whether the JIT removed them depended on what else the
   * thread had reduced), ring allReduce over sockets 6,480 and 1,010 (the views, and a call decoded
   * per step) and in process 7,200 and 960 (a request object per step). Over UCX the ring went from
   * 10,661 to about 4,040: each step's flush makes a request in Jucx, left out here.
   */
  @ParameterizedTest(name = "{0}, {1}, {2}")
  @CsvSource({
    "SOCKET, RH, ALL_REDUCE",
    "SOCKET, RH, REDUCE_SCATTER",
    "SOCKET, RING, ALL_REDUCE",
    "LOCAL, RING, ALL_REDUCE"
  })
  @DisplayName("32 KiB collectives allocate a bounded number of bytes per call")
  void midSizeCollectivesAllocateABoundedAmount(Transport transport, Algorithm algo, Op op) {
    long perCall = bytesPerCall(transport, algo, POINT_TO_POINT_RANKS, op, MID_COUNT);
    assertTrue(
        perCall <= BOUND_PER_POINT_TO_POINT_CALL,
        op
            + " of 32 KiB by "
            + algo
            + " over "
            + transport
            + ": "
            + perCall
            + " bytes per call, expected at most "
            + BOUND_PER_POINT_TO_POINT_CALL);
  }

  /**
   * Jucx makes objects for every flush (a request, and the native id it boxes), and a ring step
   * over UCX flushes its data before it puts the step's record; Jucx 1.12.1 has no worker fence
   * that would order the two without one. A 32 KiB allReduce of 4 ranks makes 24 steps in all, and
   * took 3,744 bytes a call on a 2-core machine: 3,072 on the proxy threads, 128 a step (the Jucx
   * objects and this side's completion of the flush), the rest as on the other transports. Bounded
   * at the others' bound plus 128 bytes a step, so a step that makes anything more fails.
   */
  @Test
  @DisplayName("a 32 KiB ring allReduce over UCX allocates only its flushes' objects per step")
  void ucxRingAtMidSizeAllocatesOnlyItsFlushes() {
    int steps = 2 * (POINT_TO_POINT_RANKS - 1) * POINT_TO_POINT_RANKS;
    long bound = BOUND_PER_POINT_TO_POINT_CALL + steps * UCX_FLUSH_BYTES;
    long perCall =
        bytesPerCall(Transport.UCX, Algorithm.RING, POINT_TO_POINT_RANKS, Op.ALL_REDUCE, MID_COUNT);
    assertTrue(
        perCall <= bound,
        "ALL_REDUCE of 32 KiB by ring over UCX: "
            + perCall
            + " bytes per call, expected at most "
            + bound
            + " ("
            + UCX_FLUSH_BYTES
            + " a step for "
            + steps
            + " steps)");
  }

  /** What a ring step's flush over UCX allocates: Jucx's request and boxed id, and a completion. */
  private static final long UCX_FLUSH_BYTES = 128;

  /**
   * A tree broadcast's root and a tree reduce's leaves announce every call to their ring
   * predecessor for the mismatch check (on by default), which queues the announcements that arrive
   * before its own launch: the announcement path stays within the bound too.
   */
  @ParameterizedTest(name = "{0}")
  @EnumSource(
      value = Op.class,
      names = {"BROADCAST", "REDUCE"})
  @DisplayName(
      "tree broadcasts and reduces, which announce their calls, allocate a bounded number of bytes"
          + " per call")
  void announcingTreesAllocateABoundedAmount(Op op) {
    long perCall = bytesPerCall(Transport.SOCKET, Algorithm.TREE, POINT_TO_POINT_RANKS, op);
    assertTrue(
        perCall <= BOUND_PER_POINT_TO_POINT_CALL,
        op
            + " by a tree: "
            + perCall
            + " bytes per call, expected at most "
            + BOUND_PER_POINT_TO_POINT_CALL);
  }

  /** What {@link #bytesPerCall} repeats, on a max over 16 floats (or {@link #MID_COUNT}). */
  enum Op {
    ALL_REDUCE,
    REDUCE_SCATTER,
    BROADCAST,
    REDUCE
  }

  private static long bytesPerAllReduce(Transport transport, Algorithm algo, int ranks) {
    return bytesPerCall(transport, algo, ranks, Op.ALL_REDUCE);
  }

  /**
   * Bytes per call of {@code op} (in place, root 0) over all ranks, engine threads and callers
   * together, in steady state.
   */
  private static long bytesPerCall(Transport transport, Algorithm algo, int ranks, Op op) {
    return bytesPerCall(transport, algo, ranks, op, COUNT);
  }

  /** {@link #bytesPerCall(Transport, Algorithm, int, Op)} on {@code count} floats. */
  private static long bytesPerCall(
      Transport transport, Algorithm algo, int ranks, Op op, int count) {
    Allocations mx = new Allocations();
    CclConfig config =
        CclConfig.builder()
            .transport(transport)
            .algo(algo)
            .buffSize(64 << 10)
            .timeout(Duration.ofSeconds(30))
            .build();
    LocalBootstrap.Group group = LocalBootstrap.group(ranks);
    CyclicBarrier barrier = new CyclicBarrier(ranks);
    long[] callers = new long[ranks];
    long[] engine = new long[2];
    Throwable[] errors =
        RankHarness.runCollect(
            ranks,
            Duration.ofMinutes(2),
            rank -> {
              // the buffer is declared first so that it is freed after the communicator closed
              try (DeviceBuffer buf = HostDevice.INSTANCE.allocate(count * 4L);
                  Communicator comm = Communicator.create(group.rank(rank), config)) {
                ByteBuffer mine = Reference.heap(count * 4);
                for (int i = 0; i < count; i++) {
                  mine.putFloat(4 * i, rank + 1 + i);
                }
                buf.copyFromHost(mine, 0);
                for (int i = 0; i < WARMUP; i++) {
                  call(comm, buf, op, count);
                }
                barrier.await(30, TimeUnit.SECONDS);
                if (rank == 0) {
                  engine[0] = engineAllocatedBytes(mx);
                }
                barrier.await(30, TimeUnit.SECONDS);
                long before = mx.of(Thread.currentThread().getId());
                for (int i = 0; i < CALLS; i++) {
                  call(comm, buf, op, count);
                }
                callers[rank] = mx.of(Thread.currentThread().getId()) - before;
                ByteBuffer got = Reference.heap(count * 4);
                buf.copyToHost(0, got);
                // a reduceScatter in place writes this rank's block only, a reduce the root's
                int block = count / ranks;
                boolean scatter = op == Op.REDUCE_SCATTER;
                int checked = op == Op.REDUCE && rank != 0 ? 0 : count;
                for (int i = scatter ? rank * block : 0;
                    i < (scatter ? (rank + 1) * block : checked);
                    i++) {
                  // the max over the ranks of rank + 1 + i, or the root's 1 + i, unchanged by
                  // repeating the call
                  float expected = op == Op.BROADCAST ? 1 + i : ranks + i;
                  assertEquals(expected, got.getFloat(4 * i), 0f, "rank " + rank + " element " + i);
                }
                barrier.await(30, TimeUnit.SECONDS);
                if (rank == 0) {
                  engine[1] = engineAllocatedBytes(mx);
                }
                barrier.await(30, TimeUnit.SECONDS);
              }
            });
    RankHarness.assertNoErrors(errors, "");
    long total = engine[1] - engine[0];
    for (long c : callers) {
      total += c;
    }
    long perCall = total / CALLS;
    System.out.printf(
        "hot path allocation, %s, %s, %d ranks, %d floats: %d bytes per %s (engine threads %d,"
            + " callers %s)%n",
        transport,
        algo,
        ranks,
        count,
        perCall,
        op,
        engine[1] - engine[0],
        java.util.Arrays.toString(callers));
    return perCall;
  }

  /** One call of {@code op} over the whole buffer, in place (root 0; max where it reduces). */
  private static void call(Communicator comm, DeviceBuffer buf, Op op, int count) {
    switch (op) {
      case ALL_REDUCE -> comm.allReduce(buf, buf, count, DataType.FLOAT32, ReduceOp.MAX);
      case REDUCE_SCATTER ->
          comm.reduceScatter(buf, buf, count / comm.nRanks(), DataType.FLOAT32, ReduceOp.MAX);
      case BROADCAST -> comm.broadcast(buf, buf, count, DataType.FLOAT32, 0);
      case REDUCE -> comm.reduce(buf, buf, count, DataType.FLOAT32, ReduceOp.MAX, 0);
    }
  }

  /**
   * {@code com.sun.management.ThreadMXBean.getThreadAllocatedBytes}, called reflectively: the
   * engine's module does not read {@code jdk.management}, and the engine should not need it.
   */
  private static final class Allocations {
    private final Object bean = ManagementFactory.getThreadMXBean();
    private final Method perThread;

    Allocations() {
      try {
        Class<?> type = Class.forName("com.sun.management.ThreadMXBean");
        perThread = type.getMethod("getThreadAllocatedBytes", long.class);
        type.getMethod("setThreadAllocatedMemoryEnabled", boolean.class).invoke(bean, true);
      } catch (ReflectiveOperationException e) {
        throw new LinkageError("this JVM cannot count allocations per thread", e);
      }
    }

    long of(long threadId) {
      try {
        return (Long) perThread.invoke(bean, threadId);
      } catch (ReflectiveOperationException e) {
        throw new LinkageError("getThreadAllocatedBytes", e);
      }
    }
  }

  /** Bytes allocated so far by the engine's threads of every communicator in this JVM. */
  private static long engineAllocatedBytes(Allocations mx) {
    long sum = 0;
    for (Thread t : Thread.getAllStackTraces().keySet()) {
      if (t.getName().startsWith("sparkccl-")) {
        sum += Math.max(0, mx.of(t.getId()));
      }
    }
    return sum;
  }
}
