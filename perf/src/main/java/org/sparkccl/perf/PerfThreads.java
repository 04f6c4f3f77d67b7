package org.sparkccl.perf;

import java.util.ArrayList;
import java.util.List;
import org.sparkccl.bootstrap.LocalBootstrap;
import org.sparkccl.config.CclConfig;
import picocli.CommandLine;

/**
 * {@code --threads}: the ranks as threads of this JVM, meeting through a {@link LocalBootstrap}.
 * This is how several ranks share one GPU: one process, one context, a stream per channel.
 */
final class PerfThreads {
  private PerfThreads() {}

  /** Runs every rank on its own thread; returns the worst exit code. */
  static int run(PerfOptions o, String[] args) {
    LocalBootstrap.Group group = LocalBootstrap.group(o.ranks);
    int[] codes = new int[o.ranks];
    List<Thread> threads = new ArrayList<>();
    for (int r = 0; r < o.ranks; r++) {
      PerfOptions mine = forRank(o, args, r);
      int rank = r;
      Thread t =
          new Thread(
              () -> {
                try {
                  CclConfig config = PerfRank.config(mine);
                  codes[rank] = PerfRank.run(mine, group.rank(rank), config);
                } catch (RuntimeException | OutOfMemoryError e) {
                  // any failure of a rank is the tool's failure: say it, end the other ranks' waits
                  // for this one (they would otherwise last until their timeout), exit non-zero
                  String why =
                      e instanceof OutOfMemoryError ? outOfMemory(e, o.ranks) : e.getMessage();
                  System.err.println("sparkccl-perf: rank " + rank + ": " + why);
                  codes[rank] = 1;
                  group.abort("rank " + rank + " failed (" + e.getClass().getSimpleName() + ")");
                }
              },
              "perf-rank-" + r);
      threads.add(t);
      t.start();
    }
    int worst = 0;
    for (int r = 0; r < threads.size(); r++) {
      try {
        threads.get(r).join();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return 1;
      }
      worst = Math.max(worst, codes[r]);
    }
    return worst;
  }

  /** What to do about a rank thread out of memory: its buffers share the JVM with the others'. */
  private static String outOfMemory(Throwable e, int ranks) {
    return "ran out of memory ("
        + e.getMessage()
        + "); "
        + ranks
        + " ranks share this JVM: lower -e, or raise its -Xmx or -XX:MaxDirectMemorySize"
        + " (SPARKCCL_JAVA_OPTS)";
  }

  /** The options again, with this rank's number and the device already resolved. */
  private static PerfOptions forRank(PerfOptions o, String[] args, int rank) {
    PerfOptions mine = new PerfOptions();
    new CommandLine(mine).parseArgs(args);
    mine.rank = rank;
    mine.device = o.deviceOf(rank);
    return mine;
  }
}
