package org.sparkccl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.time.Duration;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.sparkccl.config.CclConfig;
import org.sparkccl.config.Transport;
import org.sparkccl.transport.ucx.UcxTransport;

/** What only the UCX transport has: its choice, its endpoints per connection, its release. */
class UcxTransportTest {
  private static final Duration WAIT = Duration.ofSeconds(60);

  @Test
  @DisplayName(
      "transport=ucx runs the ring over UCX with 4 endpoints per connection and releases"
          + " every UCX object")
  void ucxRingWithFourEndpointsPerConnection() {
    long before = UcxTransport.liveObjects();
    CclConfig config =
        CclConfig.builder()
            .transport(Transport.UCX)
            .qpsPerConnection(4)
            .nChannels(2)
            .buffSize(4 << 20)
            .timeout(Duration.ofSeconds(30))
            .build();
    Communicator[] comms = RankHarness.createAll(3, config, WAIT);
    try {
      for (Communicator c : comms) {
        assertEquals("ucx", c.ringTransport());
      }
      // 3 Mi floats: slots of 512 KiB, striped over the 4 endpoints
      assertNull(
          RankHarness.allReduceAndCheck(
              comms, 3 << 20, DataType.FLOAT32, ReduceOp.SUM, false, 7, WAIT));
      assertNull(
          RankHarness.allReduceAndCheck(comms, 5, DataType.INT64, ReduceOp.MAX, true, 8, WAIT));
    } finally {
      RankHarness.closeAll(comms, WAIT);
    }
    assertEquals(before, UcxTransport.liveObjects(), "UCX objects left after close");
  }

  @Test
  @DisplayName("transport=socket keeps UCX out of the ring")
  void socketWhenAskedFor() {
    CclConfig config = CclConfig.builder().transport(Transport.SOCKET).build();
    Communicator[] comms = RankHarness.createAll(2, config, WAIT);
    try {
      assertEquals("socket", comms[0].ringTransport());
    } finally {
      RankHarness.closeAll(comms, WAIT);
    }
  }
}
