package org.sparkccl.idle;

import org.sparkccl.config.IdleMode;

/**
 * What {@code idle=auto} decides from: the threads that poll while work is in flight, on this host,
 * against the cores they may use. Spinning threads that outnumber their cores take turns by the
 * scheduler's time slice (milliseconds) instead of by the microseconds a hand-off should take, so a
 * host that cannot give each of them a core backs off instead.
 */
public final class AutoIdle {
  private AutoIdle() {}

  /**
   * Threads of one rank that poll while work is in flight: a kernel thread per channel, the proxy
   * thread, and the socket helpers of the ring's two connections per channel.
   */
  public static int pollingThreadsPerRank(int channels, int socketHelpersPerConnection) {
    return channels + 1 + 2 * channels * socketHelpersPerConnection;
  }

  /**
   * Cores the ranks on this host may keep busy: the JVM's count, capped by {@code cpusPerRank} per
   * rank where it is set (Spark gives each task {@code spark.task.cpus}).
   */
  public static int cores(int available, int cpusPerRank, int ranksOnHost) {
    if (cpusPerRank <= 0) {
      return available;
    }
    return (int) Math.min(available, (long) cpusPerRank * ranksOnHost);
  }

  /**
   * Whether a rank's waits on work in flight spin: {@code spin}, or {@code auto} where the cores
   * cover the polling threads. Every rank computes this for every other from what the bootstrap
   * exchange carries, so that a choice that depends on it (the tuner's constants) is the same on
   * every rank, even where hosts differ in cores.
   */
  public static boolean spinsWhenBusy(
      IdleMode mode, int ranksOnHost, int threadsPerRank, int available, int cpusPerRank) {
    return mode == IdleMode.SPIN
        || (mode == IdleMode.AUTO
            && spins(ranksOnHost, threadsPerRank, cores(available, cpusPerRank, ranksOnHost)));
  }

  /**
   * Whether a host's cores cover twice its ranks' polling threads: a spinning thread that hands
   * work to another (a proxy's socket calls, and the network processing they bring) then leaves it
   * a core. On a 16-core host over sockets, giving the ring's large transfers to the proxy took
   * 0.82-0.96x the time at 4 ranks of 2 polling threads and 0.86-1.14x at 8 (docs/benchmarks.md).
   */
  public static boolean sparesCores(
      int ranksOnHost, int threadsPerRank, int available, int cpusPerRank) {
    return spins(ranksOnHost, 2 * threadsPerRank, cores(available, cpusPerRank, ranksOnHost));
  }

  /** Whether {@code cores} cover {@code ranksOnHost} ranks of {@code threadsPerRank} each. */
  public static boolean spins(int ranksOnHost, int threadsPerRank, int cores) {
    return (long) ranksOnHost * threadsPerRank <= cores;
  }
}
