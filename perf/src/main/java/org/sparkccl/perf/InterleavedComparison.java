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
 * Several engine settings measured in the same rank processes, one communicator each, interleaved
 * in rounds (first, second, ..., first, ...) with the median round kept, so that the machine's
 * drift between separate runs does not decide which setting looks faster: 3x at small sizes on a
 * shared 2-core machine, and 2-3x between starts of 8 rank processes on a 16-core host, where where
 * each process's threads land weighs more than a 5% difference. Prints one block of rows per
 * setting.
 *
 * <ul>
 *   <li>{@code -a compare}: ring, tree, rd, rh and auto.
 *   <li>{@code --check-compare}: the mismatch check ({@code checkCalls}) off, then on, with the
 *       algorithm of {@code -a}.
 * </ul>
 */
final class InterleavedComparison {
  private static final List<String> ALGOS = List.of("ring", "tree", "rd", "rh", "auto");

  /** One setting: its label in the output's headers and rows, and its configuration. */
  private record Variant(String label, CclConfig config) {}

  private InterleavedComparison() {}

  /** The settings {@code o} asks to compare. */
  private static List<Variant> variants(PerfOptions o) {
    CclConfig base =
        CclConfig.fromEnvironment().toBuilder().set(Key.TRANSPORT, o.transport).build();
    List<Variant> variants = new ArrayList<>();
    if (o.checkCompare) {
      for (String check : List.of("false", "true")) {
        variants.add(
            new Variant(
                o.algo + ",checkCalls=" + check,
                base.toBuilder().set(Key.ALGO, o.algo).set(Key.CHECK_CALLS, check).build()));
      }
    } else {
      for (String algo : ALGOS) {
        variants.add(new Variant(algo, base.toBuilder().set(Key.ALGO, algo).build()));
      }
    }
    return variants;
  }

  static int run(PerfOptions o) {
    DataType type = DataType.fromName(o.dtype);
    ReduceOp op = ReduceOp.fromName(o.redop);
    List<Variant> variants = variants(o);
    List<List<PerfRank.Row>> rows = new ArrayList<>();
    variants.forEach(v -> rows.add(new ArrayList<>()));
    Communicator[] comms = new Communicator[variants.size()];
    try (TcpBootstrap boot =
            TcpBootstrap.connect(o.root(), o.rank, o.ranks, variants.get(0).config().timeout());
        PerfBuffers buffers = PerfBuffers.allocate(HostDevice.INSTANCE, o.maxBytes)) {
      PerfRank.Context[] ctx = new PerfRank.Context[variants.size()];
      for (int v = 0; v < comms.length; v++) {
        CclConfig config = variants.get(v).config();
        comms[v] = Communicator.create(boot, config);
        ctx[v] = new PerfRank.Context(o, boot, config, comms[v], buffers, type, op);
        PerfRank.jitWarmup(ctx[v]);
      }
      for (PerfOp perfOp : PerfRank.operations(o)) {
        for (long size = o.minBytes; size <= o.maxBytes; size *= o.factor) {
          measure(ctx, variants, perfOp, size, rows);
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
    for (int v = 0; v < variants.size(); v++) {
      if (o.rank == 0 && !rows.get(v).isEmpty()) {
        PerfRank.printHeader(
            o,
            PerfOp.fromName(rows.get(v).get(0).operation()),
            variants.get(v).label(),
            variants.get(v).config(),
            HostDevice.INSTANCE);
        rows.get(v).forEach(PerfRank::printRow);
      }
      all.addAll(rows.get(v));
    }
    return PerfRank.finish(o, all);
  }

  private static void measure(
      PerfRank.Context[] ctx,
      List<Variant> variants,
      PerfOp perfOp,
      long size,
      List<List<PerfRank.Row>> rows) {
    PerfOptions o = ctx[0].o();
    int n = o.ranks;
    long perRank = perfOp.perRankCount(size, ctx[0].type(), n);
    if (perRank == 0) {
      return;
    }
    long bytes = perfOp.bytes(perRank, n, ctx[0].type());
    ctx[0].buffers().fillSend(perfOp.sendCount(perRank, n), ctx[0].type(), 1, o.rank);
    int rounds = o.rounds;
    int perRound = Math.max(1, o.iters / rounds);
    double[][] times = new double[ctx.length][rounds];
    for (PerfRank.Context c : ctx) {
      for (int i = 0; i < o.warmup; i++) {
        run(c, perfOp, perRank);
      }
    }
    for (int round = 0; round < rounds; round++) {
      for (int k = 0; k < ctx.length; k++) {
        // every other round backwards: a setting that always followed another would always start
        // with the other's threads still winding down
        int v = round % 2 == 0 ? k : ctx.length - 1 - k;
        PerfRank.barrier(ctx[v]);
        long t0 = System.nanoTime();
        for (int i = 0; i < perRound; i++) {
          run(ctx[v], perfOp, perRank);
        }
        times[v][round] = PerfRank.maxOver(ctx[v], (System.nanoTime() - t0) / 1e3 / perRound);
      }
    }
    for (int v = 0; v < ctx.length; v++) {
      if (o.rank == 0) {
        System.out.println(
            "# " + variants.get(v).label() + " rounds, us a call: " + Arrays.toString(times[v]));
      }
      Arrays.sort(times[v]);
      long wrong = o.check == 1 ? PerfRank.check(ctx[v], perfOp, perRank, size) : 0;
      rows.get(v)
          .add(
              PerfRank.row(
                  ctx[v], perfOp, variants.get(v).label(), bytes, times[v][rounds / 2], wrong));
    }
  }

  private static void run(PerfRank.Context c, PerfOp perfOp, long perRank) {
    perfOp.run(c.comm(), c.send(), c.recv(), perRank, c.type(), c.op(), c.o().root);
  }
}
