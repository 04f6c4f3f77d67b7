package org.sparkccl.perf;

import java.io.File;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.sparkccl.bootstrap.TcpBootstrapRoot;
import org.sparkccl.device.Device;
import org.sparkccl.device.DeviceSpec;
import org.sparkccl.device.Devices;
import org.sparkccl.device.cuda.CudaBackend;
import org.sparkccl.device.cuda.CudaDevice;
import org.sparkccl.device.cuda.CudaUnavailableException;
import picocli.CommandLine;

/**
 * {@code bin/sparkccl-perf}: starts {@code -n} rank JVMs that meet through a TCP bootstrap root and
 * measure a collective over a range of sizes; rank 0 prints nccl-tests style rows.
 *
 * <pre>
 * bin/sparkccl-perf -n 4 -b 8 -e 64M -f 2 -o allreduce -d float32 -r sum -t socket
 * </pre>
 */
public final class PerfTool {
  private PerfTool() {}

  public static void main(String[] args) {
    PerfOptions o = new PerfOptions();
    CommandLine cl = new CommandLine(o);
    try {
      cl.parseArgs(args);
    } catch (CommandLine.ParameterException e) {
      System.err.println(e.getMessage());
      cl.usage(System.err);
      System.exit(2);
    }
    if (cl.isUsageHelpRequested()) {
      cl.usage(System.out);
      return;
    }
    try {
      if (o.rank >= 0) {
        System.exit(PerfRank.run(o));
      }
      PerfRank.validate(o);
      // Resolve the device once, here: asked for a GPU where there is none, fail at once
      String asked = o.device;
      Device device = Devices.resolve(DeviceSpec.parse(asked));
      o.device = device.name();
      if (device instanceof CudaDevice gpu) {
        if (!asked.startsWith("cuda:")) {
          // one rank per GPU, like nccl-tests with one GPU per process
          o.gpus = CudaBackend.status().deviceCount();
        }
        // before any rank runs: freeing device memory waits for every kernel on the GPU
        CopyBandwidth.print(gpu, o.maxBytes);
      }
      System.exit(o.threads ? PerfThreads.run(o, args) : launch(o));
    } catch (IllegalArgumentException | CudaUnavailableException e) {
      System.err.println("sparkccl-perf: " + e.getMessage());
      System.exit(2);
    }
  }

  /** Starts the root and the rank processes; returns the exit code. */
  private static int launch(PerfOptions o) {
    String java =
        System.getProperty("java.home") + File.separator + "bin" + File.separator + "java";
    List<Process> procs = new ArrayList<>();
    try (TcpBootstrapRoot root = TcpBootstrapRoot.start("127.0.0.1", o.ranks)) {
      for (int r = 0; r < o.ranks; r++) {
        List<String> cmd = new ArrayList<>(List.of(java, "-XX:+UseSerialGC", "-Xmx1g"));
        cmd.add("-XX:MaxDirectMemorySize=" + Math.max(1L << 30, 8 * o.maxBytes * (o.ranks + 2)));
        for (Map.Entry<Object, Object> p : System.getProperties().entrySet()) {
          String k = p.getKey().toString();
          if (k.startsWith("sparkccl.") || k.startsWith("log4j")) {
            cmd.add("-D" + k + "=" + p.getValue());
          }
        }
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), PerfTool.class.getName()));
        cmd.addAll(o.forRank(r, root.address()));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT);
        pb.redirectOutput(
            r == 0 ? ProcessBuilder.Redirect.INHERIT : ProcessBuilder.Redirect.DISCARD);
        procs.add(pb.start());
      }
      return waitAll(procs, o.processTimeoutSeconds);
    } catch (IOException e) {
      System.err.println("sparkccl-perf: cannot start rank processes: " + e.getMessage());
      return 1;
    } finally {
      procs.forEach(Process::destroyForcibly);
    }
  }

  private static int waitAll(List<Process> procs, int timeoutSeconds) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(timeoutSeconds);
    int worst = 0;
    for (int r = 0; r < procs.size(); r++) {
      Process p = procs.get(r);
      try {
        long left = deadline - System.nanoTime();
        if (!p.waitFor(Math.max(0, left), TimeUnit.NANOSECONDS)) {
          System.err.println(
              "sparkccl-perf: rank "
                  + r
                  + " still running after "
                  + timeoutSeconds
                  + " s; stopping all ranks");
          return 1;
        }
        int code = p.exitValue();
        if (code != 0) {
          System.err.println("sparkccl-perf: rank " + r + " exited with " + code);
          worst = Math.max(worst, code);
          procs.forEach(Process::destroyForcibly);
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return 1;
      }
    }
    return worst;
  }
}
