package org.sparkccl;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.sparkccl.config.CclConfig;
import org.sparkccl.config.Transport;
import org.sparkccl.device.DeviceBuffer;
import org.sparkccl.device.HostBuffer;

/**
 * Sends and receives never wait for ever: a blocking one inside a group is refused, and a group
 * that cannot start releases what it took and fails its futures, so close() need not wait.
 */
@DisplayName("send/recv: refused or failed, never hung")
class PeerCallBoundsTest {
  private static final Duration DEADLINE = Duration.ofSeconds(30);

  private static CclConfig config() {
    return TestConfig.builder().transport(Transport.LOCAL).timeout(Duration.ofSeconds(20)).build();
  }

  @Test
  @Timeout(60)
  void aBlockingSendOrRecvInsideAGroupIsRefusedAndTheCommunicatorStillWorks() {
    Communicator[] comms = RankHarness.createAll(2, config(), DEADLINE);
    RankHarness.closingAfter(
        comms,
        DEADLINE,
        () ->
            RankHarness.run(
                2,
                DEADLINE,
                rank -> {
                  Communicator comm = comms[rank];
                  int peer = 1 - rank;
                  float[] data = randomFloats(rank, 1000);
                  try (DeviceBuffer out = comm.device().allocate(4000);
                      DeviceBuffer in = comm.device().allocate(4000)) {
                    out.copyFromHost(data, 0);
                    comm.groupStart();
                    IllegalStateException e =
                        assertThrows(
                            IllegalStateException.class,
                            () -> comm.send(out, 1000, DataType.FLOAT32, peer));
                    assertTrue(e.getMessage().contains("sendAsync"), e.getMessage());
                    e =
                        assertThrows(
                            IllegalStateException.class,
                            () -> comm.recv(in, 1000, DataType.FLOAT32, peer));
                    assertTrue(e.getMessage().contains("recvAsync"), e.getMessage());
                    comm.sendAsync(out, 1000, DataType.FLOAT32, peer);
                    comm.recvAsync(in, 1000, DataType.FLOAT32, peer);
                    comm.groupEnd();
                    float[] got = new float[1000];
                    in.copyToHost(0, got);
                    float[] theirs = randomFloats(peer, 1000);
                    assertArrayEquals(theirs, got, "the group after the refusals moved the data");
                  }
                }));
  }

  private static float[] randomFloats(int seed, int n) {
    SplittableRandom r =
        new SplittableRandom(seed * 7919L + System.identityHashCode(PeerCallBoundsTest.class));
    float[] a = new float[n];
    for (int i = 0; i < n; i++) {
      a[i] = (float) r.nextDouble(-1e6, 1e6);
    }
    return a;
  }

  @Test
  @Timeout(60)
  void aGroupThatCannotStartReleasesItsBuffersAndFailsItsFutures() throws Exception {
    Communicator[] comms = RankHarness.createAll(2, config(), DEADLINE);
    try {
      Communicator comm = comms[0];
      HostBuffer kept = (HostBuffer) comm.device().allocate(4096);
      DeviceBuffer closedEarly = comm.device().allocate(4096);
      comm.groupStart();
      CompletableFuture<Void> first = comm.sendAsync(kept, 1024, DataType.FLOAT32, 1);
      CompletableFuture<Void> second = comm.sendAsync(closedEarly, 1024, DataType.FLOAT32, 1);
      closedEarly.close(); // between recording and the group's end
      CompletableFuture<Void> group = comm.groupEndAsync();
      for (CompletableFuture<Void> f : java.util.List.of(first, second, group)) {
        ExecutionException e =
            assertThrows(ExecutionException.class, () -> f.get(5, TimeUnit.SECONDS));
        assertTrue(e.getCause() instanceof CclException, "failed with " + e.getCause());
      }
      kept.close();
      // freed at once: the failed launch did not leave it retained
      assertThrows(IllegalStateException.class, kept::memory);
      long t0 = System.nanoTime();
      comm.close();
      long took = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
      assertTrue(took < 5_000, "close took " + took + " ms; nothing should be left to wait for");
    } finally {
      RankHarness.closeQuietly(comms);
    }
  }
}
