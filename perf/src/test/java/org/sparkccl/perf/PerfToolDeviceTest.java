package org.sparkccl.perf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.sparkccl.device.cuda.CudaBackend;

/**
 * Without a GPU (CI), {@code bin/sparkccl-perf --device cuda} must fail fast with the engine's
 * reason rather than start rank processes that cannot run. Skipped where CUDA works.
 */
@DisplayName("the perf tool without a GPU")
class PerfToolDeviceTest {
  @Test
  void exitsAtOnceWithTheReasonForDeviceCuda() throws Exception {
    assumeFalse(CudaBackend.isAvailable(), "a GPU is present: nothing to check here");
    List<String> cmd =
        List.of(
            Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "-cp",
            System.getProperty("java.class.path"),
            PerfTool.class.getName(),
            "--device",
            "cuda",
            "-n",
            "2");
    File out = File.createTempFile("perf-device-cuda", ".log");
    out.deleteOnExit();
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(out).start();
    long t0 = System.nanoTime();
    boolean exited = p.waitFor(60, TimeUnit.SECONDS);
    if (!exited) {
      p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
    }
    String output = Files.readString(out.toPath(), StandardCharsets.UTF_8);
    assertTrue(exited, "the perf tool did not exit within 60 s; it printed: " + output);
    assertEquals(2, p.exitValue(), output);
    assertTrue(output.contains("CUDA backend unavailable: "), output);
    assertTrue(Duration.ofNanos(System.nanoTime() - t0).toSeconds() < 30, "not at once");
  }

  @Test
  @DisplayName("with several GPUs, rank r runs on GPU r mod (GPUs), in the rank processes too")
  void ranksSpreadOverTheGpus() {
    PerfOptions o = new PerfOptions();
    o.device = "cuda:0";
    o.gpus = 3;
    String[] expected = {"cuda:0", "cuda:1", "cuda:2", "cuda:0", "cuda:1"};
    for (int r = 0; r < expected.length; r++) {
      assertEquals(expected[r], o.deviceOf(r), "rank " + r);
      List<String> args = o.forRank(r, "127.0.0.1:1");
      assertEquals(expected[r], args.get(args.indexOf("--device") + 1), "rank " + r + "'s args");
    }
    o.gpus = 0; // an explicit cuda:N keeps every rank there
    assertEquals("cuda:0", o.deviceOf(4));
  }
}
