package org.sparkccl.perf;

import java.util.ArrayList;
import java.util.List;
import org.sparkccl.config.Values;
import picocli.CommandLine.Command;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.Option;

/** Command line of {@code bin/sparkccl-perf}, modelled on nccl-tests. */
@Command(
    name = "sparkccl-perf",
    mixinStandardHelpOptions = true,
    description = "Measures SparkCCL collectives the way nccl-tests does.")
final class PerfOptions {
  /** Sizes like 8, 64K, 16M, 1G. */
  static final class Bytes implements ITypeConverter<Long> {
    @Override
    public Long convert(String value) {
      return Values.bytes("size", value);
    }
  }

  @Option(
      names = "-n",
      description = "ranks: separate JVMs on this machine (default ${DEFAULT-VALUE})")
  int ranks = 2;

  @Option(
      names = "-b",
      converter = Bytes.class,
      description = "smallest size in bytes (default ${DEFAULT-VALUE})")
  long minBytes = 8;

  @Option(
      names = "-e",
      converter = Bytes.class,
      description = "largest size in bytes (default ${DEFAULT-VALUE})")
  long maxBytes = 32 << 20;

  @Option(names = "-f", description = "size factor between steps (default ${DEFAULT-VALUE})")
  int factor = 2;

  @Option(
      names = "-o",
      description =
          "operation: allreduce, broadcast, reduce, allgather, reducescatter, sendrecv or all"
              + " (default ${DEFAULT-VALUE})")
  String operation = "allreduce";

  @Option(
      names = "--root",
      description = "root rank of broadcast and reduce (default ${DEFAULT-VALUE})")
  int root = 0;

  @Option(
      names = {"-a", "--algo"},
      description =
          "algorithm: ring, tree, rd (recursive doubling: allReduce; allGather), rh (Rabenseifner allReduce; reduceScatter by recursive halving) or auto (default ${DEFAULT-VALUE})")
  String algo = "auto";

  @Option(
      names = "-d",
      description =
          "dtype: int8 uint8 int32 uint32 int64 uint64 float16 bfloat16 float32 float64"
              + " (default ${DEFAULT-VALUE})")
  String dtype = "float32";

  @Option(names = "-r", description = "reduction: sum prod min max avg (default ${DEFAULT-VALUE})")
  String redop = "sum";

  @Option(
      names = {"-t", "--transport"},
      description =
          "ring transport: socket, ucx, local (ring slots copied in memory; needs"
              + " --threads) or auto (default ${DEFAULT-VALUE})")
  String transport = "auto";

  @Option(
      names = "--device",
      description =
          "where collectives run: host, cuda, cuda:N or auto (the GPU if the CUDA"
              + " backend is available, else the host); with cuda or auto, rank r runs on GPU"
              + " r mod (GPUs of the host), processes or threads alike (default ${DEFAULT-VALUE})")
  String device = "auto";

  /**
   * GPUs the ranks are spread over (rank r on {@code cuda:r mod gpus}); 0: all on {@link #device}.
   */
  int gpus;

  /** The device of rank {@code r}. */
  String deviceOf(int r) {
    return gpus > 0 ? "cuda:" + (r % gpus) : device;
  }

  @Option(
      names = "--threads",
      description =
          "ranks as threads of this JVM instead of one JVM each (several ranks on one"
              + " GPU must share a process: kernels of separate processes time-slice)")
  boolean threads;

  @Option(names = "-w", description = "warm-up iterations (default ${DEFAULT-VALUE})")
  int warmup = 5;

  @Option(
      names = "--warmup-ms",
      description =
          "after the -w warm-up iterations of a size, more of them until about this many"
              + " milliseconds have passed (at most 20000 calls; the ranks agree on the count), so"
              + " that a small size's own code path is compiled before it is timed"
              + " (default ${DEFAULT-VALUE}; 0: -w only)")
  int warmupMs = 200;

  @Option(names = "-i", description = "timed iterations (default ${DEFAULT-VALUE})")
  int iters = 20;

  @Option(
      names = "--timed-ms",
      description =
          "more timed iterations than -i where -i would take less than about this many"
              + " milliseconds, at the rate the warm-up measured (at most 1000000 calls; the ranks"
              + " agree on the count), so that a small size's mean is not carried by the few calls"
              + " the machine delays; not with -a compare or --check-compare (default ${DEFAULT-VALUE}: -i only)")
  int timedMs = 0;

  @Option(
      names = "--jit-warmup",
      description =
          "untimed calls of each measured collective before the first size, so that the JIT"
              + " has compiled its code (default ${DEFAULT-VALUE}; 0 skips them)")
  int jitWarmup = PerfRank.JIT_WARMUP_CALLS;

  @Option(
      names = "--call-times",
      description =
          "also time every call of a size on rank 0 and print their spread (median, 99th"
              + " percentile, slowest) above its row: whether a slow size is every call a little"
              + " slower or a few calls far slower")
  boolean callTimes;

  @Option(
      names = "--rank-times",
      description =
          "also print each rank's own time a call above each row (the row's time is the slowest"
              + " rank's): in a broadcast or reduce, whose senders run ahead, which rank sets the"
              + " pace")
  boolean rankTimes;

  @Option(
      names = "--check-compare",
      description =
          "measure the mismatch check's cost: checkCalls off and on, one communicator each in the"
              + " same rank processes, interleaved in --rounds rounds (median kept), one block of"
              + " rows each")
  boolean checkCompare;

  @Option(
      names = "--rounds",
      description =
          "rounds of -a compare and --check-compare: -i calls split between them, every setting"
              + " once a round (default ${DEFAULT-VALUE})")
  int rounds = 7;

  @Option(names = "-c", description = "check results: 0 or 1 (default ${DEFAULT-VALUE})")
  int check = 1;

  @Option(names = "--json", description = "also write the rows as JSON to this file")
  String json;

  @Option(
      names = "--timeout",
      description = "seconds a rank process may run in all (default ${DEFAULT-VALUE})")
  int processTimeoutSeconds = 600;

  @Option(names = "--rank", hidden = true, description = "internal: this process's rank")
  int rank = -1;

  @Option(names = "--bootstrap", hidden = true, description = "internal: bootstrap root address")
  String bootstrap;

  /** The bootstrap root's address (internal option). */
  String root() {
    return bootstrap;
  }

  /** Arguments to hand a rank process: everything but the internal options. */
  List<String> forRank(int r, String rootAddress) {
    List<String> a = new ArrayList<>();
    a.addAll(
        List.of("-n", "" + ranks, "-b", "" + minBytes, "-e", "" + maxBytes, "-f", "" + factor));
    a.addAll(List.of("-o", operation, "-d", dtype, "-r", redop, "-t", transport));
    a.addAll(List.of("--root", "" + root, "-a", algo));
    a.addAll(List.of("-w", "" + warmup, "--warmup-ms", "" + warmupMs));
    a.addAll(List.of("-i", "" + iters, "--timed-ms", "" + timedMs, "-c", "" + check));
    if (callTimes) {
      a.add("--call-times");
    }
    if (rankTimes) {
      a.add("--rank-times");
    }
    if (checkCompare) {
      a.add("--check-compare");
    }
    a.addAll(List.of("--rounds", "" + rounds));
    a.addAll(List.of("--jit-warmup", "" + jitWarmup, "--device", deviceOf(r)));
    if (json != null) {
      a.addAll(List.of("--json", json));
    }
    a.addAll(List.of("--rank", "" + r, "--bootstrap", rootAddress));
    return a;
  }
}
