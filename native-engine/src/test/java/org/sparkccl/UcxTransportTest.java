package org.sparkccl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.time.Duration;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.sparkccl.config.Algorithm;
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
  @DisplayName(
      "a ring step of up to 440 bytes travels inside its UCX record, a larger one beside it,"
          + " and both arrive whole, lap after lap")
  void stepsOnBothSidesOfTheInlineLimit() {
    CclConfig config =
        CclConfig.builder()
            .transport(Transport.UCX)
            .algo(Algorithm.RING)
            .timeout(Duration.ofSeconds(30))
            .build();
    Communicator[] comms = RankHarness.createAll(3, config, WAIT);
    try {
      assertEquals("ucx", comms[0].ringTransport());
      // a ring allReduce of 3 ranks moves count / 3 elements a step: 110 floats are 440 bytes,
      // the most a record carries, 111 are 444; 1 float is 4 bytes (ranks without data send 0)
      int[] counts = {330, 333, 3, 1, 1200, 330};
      for (int i = 0; i < counts.length; i++) {
        // more calls than the FIFO has slots, so that records are reused
        for (int lap = 0; lap < 3; lap++) {
          long seed = 31L * i + lap;
          assertNull(
              RankHarness.allReduceAndCheck(
                  comms, counts[i], DataType.FLOAT32, ReduceOp.SUM, lap == 1, seed, WAIT),
              counts[i] + " floats, lap " + lap);
        }
      }
    } finally {
      RankHarness.closeAll(comms, WAIT);
    }
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
