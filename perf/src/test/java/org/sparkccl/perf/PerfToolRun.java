package org.sparkccl.perf;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * One run of the perf tool in a JVM of its own, as {@code bin/sparkccl-perf} starts it: what it
 * printed (stdout and stderr together), its exit code and how long it took. A run that outlasts its
 * limit is killed and fails the test, with what it printed.
 */
record PerfToolRun(String output, int exitCode, long nanos) {
  /**
   * A run of {@code ranks} ranks as threads of its JVM on host memory, quick to start: no JIT
   * warm-up, then {@code args}.
   */
  static PerfToolRun hostThreads(int timeoutSeconds, int ranks, String... args)
      throws IOException, InterruptedException {
    List<String> all = new ArrayList<>();
    all.addAll(List.of("--threads", "--device", "host", "-n", "" + ranks, "--jit-warmup", "0"));
    all.addAll(List.of(args));
    return of(timeoutSeconds, all.toArray(new String[0]));
  }

  static PerfToolRun of(int timeoutSeconds, String... args)
      throws IOException, InterruptedException {
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), PerfTool.class.getName()));
    cmd.addAll(List.of(args));
    File out = File.createTempFile("perf-tool-run", ".log");
    out.deleteOnExit();
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(out).start();
    long t0 = System.nanoTime();
    boolean exited = p.waitFor(timeoutSeconds, TimeUnit.SECONDS);
    if (!exited) {
      p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
    }
    long nanos = System.nanoTime() - t0;
    String output = Files.readString(out.toPath(), StandardCharsets.UTF_8);
    assertTrue(
        exited,
        "the perf tool did not exit within " + timeoutSeconds + " s; it printed: " + output);
    return new PerfToolRun(output, p.exitValue(), nanos);
  }
}
