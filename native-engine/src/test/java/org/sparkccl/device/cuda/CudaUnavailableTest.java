package org.sparkccl.device.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.sparkccl.Communicator;
import org.sparkccl.bootstrap.LocalBootstrap;
import org.sparkccl.config.CclConfig;
import org.sparkccl.device.DeviceSpec;
import org.sparkccl.device.Devices;
import org.sparkccl.device.HostDevice;

/**
 * Without a GPU (CI): the CUDA backend says it is unavailable and why, the host is used for {@code
 * auto}, and asking for CUDA explicitly fails with that reason, in the engine and in the perf tool.
 * Skipped where CUDA works.
 */
@DisplayName("the CUDA backend without a GPU")
class CudaUnavailableTest {
  private static void assumeNoGpu() {
    assumeFalse(CudaBackend.isAvailable(), "a GPU is present: nothing to check here");
  }

  @Test
  void reportsItselfUnavailableWithTheReasonAndTheSameAnswerEveryTime() {
    assumeNoGpu();
    CudaBackend.Status s = CudaBackend.status();
    assertFalse(s.available());
    assertNotNull(s.reason());
    assertTrue(s.reason().contains("libcuda") || s.reason().contains("driver"), s.reason());
    assertFalse(s.reason().contains("\n"), "one line: " + s.reason());
    assertSame(s, CudaBackend.status());
  }

  @Test
  void autoFallsBackToTheHostAndExplicitCudaFailsWithTheReason() {
    assumeNoGpu();
    assertSame(HostDevice.INSTANCE, Devices.resolve(DeviceSpec.AUTO));
    assertSame(HostDevice.INSTANCE, Devices.resolve(DeviceSpec.HOST));
    for (String setting : List.of("cuda", "cuda:0", "cuda:3")) {
      CudaUnavailableException e =
          assertThrows(
              CudaUnavailableException.class, () -> Devices.resolve(DeviceSpec.parse(setting)));
      assertTrue(e.getMessage().startsWith("CUDA backend unavailable: "), e.getMessage());
      assertTrue(e.getMessage().contains(CudaBackend.status().reason()), e.getMessage());
    }
    assertThrows(IllegalArgumentException.class, () -> DeviceSpec.parse("gpu"));
  }

  @Test
  void aCommunicatorAskedToRunOnCudaFailsAtCreation() {
    assumeNoGpu();
    CclConfig config = CclConfig.builder().device(DeviceSpec.parse("cuda")).build();
    CudaUnavailableException e =
        assertThrows(
            CudaUnavailableException.class,
            () -> Communicator.create(LocalBootstrap.group(1).rank(0), config));
    assertTrue(e.getMessage().contains(CudaBackend.status().reason()));
    try (Communicator c =
        Communicator.create(
            LocalBootstrap.group(1).rank(0), CclConfig.builder().device(DeviceSpec.AUTO).build())) {
      assertSame(HostDevice.INSTANCE, c.device());
    }
  }

  @Test
  void thePerfToolExitsAtOnceWithTheReasonForDeviceCuda() throws Exception {
    assumeNoGpu();
    List<String> cmd =
        List.of(
            Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "-cp",
            System.getProperty("java.class.path"),
            "org.sparkccl.perf.PerfTool",
            "--device",
            "cuda",
            "-n",
            "2");
    File out = File.createTempFile("perf-device-cuda", ".log");
    out.deleteOnExit();
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(out).start();
    long t0 = System.nanoTime();
    assertTrue(p.waitFor(60, TimeUnit.SECONDS), "the perf tool did not exit");
    String output = java.nio.file.Files.readString(out.toPath(), StandardCharsets.UTF_8);
    assertEquals(2, p.exitValue(), output);
    assertTrue(output.contains("CUDA backend unavailable: "), output);
    assertTrue(Duration.ofNanos(System.nanoTime() - t0).toSeconds() < 30, "not at once");
  }

  @Test
  void theDeviceSettingIsValidated() throws IOException {
    assertEquals(DeviceSpec.HOST, CclConfig.builder().build().device());
    assertEquals(
        "cuda:2", CclConfig.fromMap(java.util.Map.of("device", "CUDA:2")).device().toString());
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> CclConfig.fromMap(java.util.Map.of("device", "gpu0")));
    assertTrue(e.getMessage().contains("device=gpu0"), e.getMessage());
  }
}
