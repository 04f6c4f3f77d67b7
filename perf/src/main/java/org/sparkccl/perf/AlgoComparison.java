package org.sparkccl.perf;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.sparkccl.CclException;
import org.sparkccl.Communicator;
import org.sparkccl.DataType;
import org.sparkccl.ReduceOp;
import org.sparkccl.bootstrap.TcpBootstrap;
import org.sparkccl.config.CclConfig;
import org.sparkccl.config.Key;
import org.sparkccl.device.HostDevice;

/**
 * {@code -a compare}: ring, tree, rd, rh and auto measured in the same rank processes, interleaved
 * in rounds (ring, tree, rd, rh, auto, ring, ...) with the median round kept, so that the machine's
 * drift between separate runs (3x at small sizes on a shared 2-core machine) does not decide which
 * algorithm looks faster. Prints one block of rows per algorithm.
 */
final class AlgoComparison {
  private static final List<String> ALGOS = List.of("ring", "tree", "rd", "rh", "auto");
  private static final int ROUNDS = 7;

  private AlgoComparison() {}

  static int run(PerfOptions o) {
    DataType type = DataType.fromName(o.dtype);
    ReduceOp op = ReduceOp.fromName(o.redop);
    CclConfig base =
        CclConfig.fromEnvironment().toBuilder().set(Key.TRANSPORT, o.transport).build();
    List<List<PerfRank.Row>> rows = new ArrayList<>();
    ALGOS.forEach(a -> rows.add(new ArrayList<>()));
    Communicator[] comms = new Communicator[ALGOS.size()];
    try (TcpBootstrap boot = TcpBootstrap.connect(o.root(), o.rank, o.ranks, base.timeout());
        PerfBuffers buffers = PerfBuffers.allocate(HostDevice.INSTANCE, o.maxBytes)) {
      PerfRank.Context[] ctx = new PerfRank.Context[ALGOS.size()];
      for (int a = 0; a < comms.length; a++) {
        CclConfig config = base.toBuilder().set(Key.ALGO, ALGOS.get(a)).build();
        comms[a] = Communicator.create(boot, config);
        ctx[a] = new PerfRank.Context(o, boot, config, comms[a], buffers, type, op);
        PerfRank.jitWarmup(ctx[a]);
      }
      for (PerfOp perfOp : PerfRank.operations(o)) {
        for (long size = o.minBytes; size <= o.maxBytes; size *= o.factor) {
          measure(ctx, perfOp, size, rows);
        }
      }
    } catch (CclException e) {
      System.err.println("sparkccl-perf: rank " + o.rank + ": " + e.getMessage());
      return 1;
    } finally {
      for (Communicator c : comms) {
        if (c != null) {
          c.close();
        }
      }
    }
    List<PerfRank.Row> all = new ArrayList<>();
    for (int a = 0; a < ALGOS.size(); a++) {
      if (o.rank == 0 && !rows.get(a).isEmpty()) {
        PerfRank.printHeader(
            o,
            PerfOp.fromName(rows.get(a).get(0).operation()),
            ALGOS.get(a),
            base.toBuilder().set(Key.ALGO, ALGOS.get(a)).build(),
            HostDevice.INSTANCE);
        rows.get(a).forEach(PerfRank::printRow);
      }
      all.addAll(rows.get(a));
    }
    return PerfRank.finish(o, all);
  }

  private static void measure(
      PerfRank.Context[] ctx, PerfOp perfOp, long size, List<List<PerfRank.Row>> rows) {
    PerfOptions o = ctx[0].o();
    int n = o.ranks;
    long perRank = perfOp.perRankCount(size, ctx[0].type(), n);
    if (perRank == 0) {
      return;
    }
    long bytes = perfOp.bytes(perRank, n, ctx[0].type());
    ctx[0].buffers().fillSend(perfOp.sendCount(perRank, n), ctx[0].type(), 1, o.rank);
    int perRound = Math.max(1, o.iters / ROUNDS);
    double[][] times = new double[ctx.length][ROUNDS];
    for (PerfRank.Context c : ctx) {
      for (int i = 0; i < o.warmup; i++) {
        run(c, perfOp, perRank);
      }
    }
    for (int round = 0; round < ROUNDS; round++) {
      for (int a = 0; a < ctx.length; a++) {
        PerfRank.barrier(ctx[a]);
        long t0 = System.nanoTime();
        for (int i = 0; i < perRound; i++) {
          run(ctx[a], perfOp, perRank);
        }
        times[a][round] = PerfRank.maxOver(ctx[a], (System.nanoTime() - t0) / 1e3 / perRound);
      }
    }
    for (int a = 0; a < ctx.length; a++) {
      Arrays.sort(times[a]);
      long wrong = o.check == 1 ? PerfRank.check(ctx[a], perfOp, perRank, size) : 0;
      rows.get(a)
          .add(PerfRank.row(ctx[a], perfOp, ALGOS.get(a), bytes, times[a][ROUNDS / 2], wrong));
    }
  }

  private static void run(PerfRank.Context c, PerfOp perfOp, long perRank) {
    perfOp.run(c.comm(), c.send(), c.recv(), perRank, c.type(), c.op(), c.o().root);
  }
}
