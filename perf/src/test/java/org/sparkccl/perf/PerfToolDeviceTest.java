package org.sparkccl.perf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import java.time.Duration;
import java.util.List;
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
    PerfToolRun run = PerfToolRun.of(60, "--device", "cuda", "-n", "2");
    String output = run.output();
    assertEquals(2, run.exitCode(), output);
    assertTrue(output.contains("CUDA backend unavailable: "), output);
    assertTrue(Duration.ofNanos(run.nanos()).toSeconds() < 30, "not at once");
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
