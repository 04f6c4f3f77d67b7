package org.sparkccl.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.sparkccl.device.Device;
import org.sparkccl.device.HostDevice;

class DeviceChoiceTest {
  /** A backend that opens any ordinal as a named device (host memory underneath). */
  private static final DeviceChoice.GpuBackend FAKE_GPU =
      ordinal ->
          new Device() {
            @Override
            public String name() {
              return "gpu:" + ordinal;
            }

            @Override
            public org.sparkccl.device.DeviceBuffer allocate(long bytes) {
              return HostDevice.INSTANCE.allocate(bytes);
            }

            @Override
            public org.sparkccl.kernel.ChannelKernel newChannelKernel(
                int stepSize,
                org.sparkccl.kernel.KernelWaiter waiter,
                org.sparkccl.kernel.KernelGuard guard,
                java.util.function.BooleanSupplier assist) {
              return HostDevice.INSTANCE.newChannelKernel(stepSize, waiter, guard, assist);
            }
          };

  @Test
  void autoWithoutAGpuResourceUsesHostMemoryAndSaysWhy() {
    DeviceChoice c = DeviceChoice.choose("auto", new String[0], FAKE_GPU);
    assertSame(HostDevice.INSTANCE, c.device());
    assertEquals("no gpu resource assigned", c.reason());
  }

  @Test
  void aGpuResourceAddressSelectsThatOrdinal() {
    DeviceChoice c = DeviceChoice.choose("AUTO", new String[] {"3", "4"}, FAKE_GPU);
    assertEquals("gpu:3", c.device().name());
    assertTrue(c.reason().contains("address 3"), c.reason());
    assertSame(
        HostDevice.INSTANCE, DeviceChoice.choose("host", new String[] {"3"}, FAKE_GPU).device());
  }

  @Test
  void autoFallsBackToHostWhenTheBackendCannotOpenTheGpu() {
    DeviceChoice c = DeviceChoice.choose("auto", new String[] {"0"}, DeviceChoice.NO_GPU_BACKEND);
    assertSame(HostDevice.INSTANCE, c.device());
    assertTrue(c.reason().contains("no CUDA backend"), c.reason());
  }

  @Test
  void cudaFailsWithTheReasonWhenThereIsNoUsableGpu() {
    IllegalArgumentException none =
        assertThrows(
            IllegalArgumentException.class, () -> DeviceChoice.choose("cuda", null, FAKE_GPU));
    assertTrue(none.getMessage().contains("no gpu resource"), none.getMessage());
    IllegalArgumentException broken =
        assertThrows(
            IllegalArgumentException.class,
            () -> DeviceChoice.choose("cuda", new String[] {"0"}, DeviceChoice.NO_GPU_BACKEND));
    assertTrue(broken.getMessage().contains("no CUDA backend"), broken.getMessage());
    IllegalArgumentException address =
        assertThrows(
            IllegalArgumentException.class,
            () -> DeviceChoice.choose("cuda", new String[] {"GPU-abc"}, FAKE_GPU));
    assertTrue(address.getMessage().contains("not a device ordinal"), address.getMessage());
  }

  @Test
  void theRealCudaBackendDecidesOnThisMachine() {
    org.sparkccl.device.cuda.CudaBackend.Status cuda =
        org.sparkccl.device.cuda.CudaBackend.status();
    DeviceChoice auto = DeviceChoice.choose("auto", new String[] {"0"}, SparkConfKeys.gpuBackend());
    if (cuda.available()) {
      assertEquals("cuda:0", auto.device().name());
      return;
    }
    System.out.println("no GPU here (" + cuda.reason() + "): checking the fallback and the error");
    assertSame(HostDevice.INSTANCE, auto.device());
    assertTrue(auto.reason().startsWith("gpu 0 not usable"), auto.reason());
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> DeviceChoice.choose("cuda", new String[] {"0"}, SparkConfKeys.gpuBackend()));
    assertTrue(e.getMessage().contains("GPU 0 cannot be used"), e.getMessage());
  }
}
