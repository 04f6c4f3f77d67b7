package org.sparkccl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.SplittableRandom;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.sparkccl.bootstrap.LocalBootstrap;
import org.sparkccl.config.CclConfig;
import org.sparkccl.config.Transport;
import org.sparkccl.device.DeviceBuffer;
import org.sparkccl.device.HostDevice;

/**
 * Communicators with {@code encrypt=true}: collectives and point-to-point results match a reference
 * computed without the engine over sealed sockets, {@code auto} between threads of one JVM uses the
 * in-memory ring (no wire to seal), and {@code ucx} is refused by name.
 */
@DisplayName("encrypt=true: communicators over sealed sockets")
class EncryptedCommunicatorTest {
  private static final Duration WAIT = Duration.ofSeconds(60);

  @Test
  @Timeout(120)
  void allReduceAndSendRecvAreExactOverEncryptedSockets() {
    checkEncrypted(Transport.SOCKET, "socket");
  }

  @Test
  @Timeout(120)
  void autoBetweenThreadsOfOneJvmKeepsTheRingInMemory() {
    checkEncrypted(Transport.AUTO, "local");
  }

  private static void checkEncrypted(Transport transport, String expectedRing) {
    int n = 3;
    CclConfig config =
        CclConfig.builder()
            .transport(transport)
            .encrypt(true)
            .socketThreads(1)
            .socketsPerThread(2)
            .buffSize(1 << 20)
            .timeout(WAIT)
            .build();
    Communicator[] comms = RankHarness.createAll(n, config, WAIT);
    RankHarness.closingAfter(
        comms,
        WAIT,
        () ->
            RankHarness.run(
                n,
                WAIT,
                r -> {
                  Communicator c = comms[r];
                  assertEquals(expectedRing, c.ringTransport(), "transport=" + transport);
                  for (int count : new int[] {2, 1_000, 300_000}) {
                    checkAllReduce(c, count);
                  }
                  checkRingSendRecv(c, 200_001);
                }));
  }

  @Test
  @Timeout(60)
  void ranksWithDifferentEncryptSettingsAreRefusedOnEveryRank() {
    LocalBootstrap.Group group = LocalBootstrap.group(2);
    Communicator[] comms = new Communicator[2];
    Throwable[] errors =
        RankHarness.createEach(
            comms,
            WAIT,
            r ->
                Communicator.create(
                    group.rank(r),
                    CclConfig.builder()
                        .transport(Transport.SOCKET)
                        .encrypt(r == 0)
                        .timeout(WAIT)
                        .build()));
    RankHarness.closeQuietly(comms);
    for (int r = 0; r < 2; r++) {
      String message = String.valueOf(errors[r]);
      assertTrue(
          message.contains("has encrypt=" + (r == 0))
              && message.contains("has encrypt=" + (r != 0))
              && message.contains("expected every rank to have the same encrypt setting"),
          "rank " + r + ": " + message);
    }
  }

  @Test
  @Timeout(60)
  void explicitUcxWithEncryptionIsRefusedWithTheReason() {
    CclConfig config =
        CclConfig.builder().transport(Transport.UCX).encrypt(true).timeout(WAIT).build();
    AssertionError e =
        org.junit.jupiter.api.Assertions.assertThrows(
            AssertionError.class, () -> RankHarness.createAll(2, config, WAIT));
    String message = String.valueOf(e.getCause());
    assertTrue(
        message.contains("transport=ucx with encrypt=true") && message.contains("does not encrypt"),
        message);
  }

  /** allReduce(sum) of random int32 values, checked against sums computed here. */
  private static void checkAllReduce(Communicator c, int count) {
    int n = c.nRanks();
    try (DeviceBuffer b = HostDevice.INSTANCE.allocate(4L * count)) {
      b.copyFromHost(values(c.rank(), count), 0);
      c.allReduce(b, b, count, DataType.INT32, ReduceOp.SUM);
      int[] got = new int[count];
      b.copyToHost(0, got);
      int[][] all = new int[n][];
      for (int r = 0; r < n; r++) {
        all[r] = values(r, count);
      }
      for (int i = 0; i < count; i++) {
        int sum = 0;
        for (int r = 0; r < n; r++) {
          sum += all[r][i];
        }
        if (got[i] != sum) {
          throw new AssertionError(
              "rank "
                  + c.rank()
                  + ", count "
                  + count
                  + ", element "
                  + i
                  + ": "
                  + got[i]
                  + " != "
                  + sum);
        }
      }
    }
  }

  /** Each rank sends random bytes to the next and checks what the previous sent. */
  private static void checkRingSendRecv(Communicator c, int bytes) {
    int n = c.nRanks();
    int next = (c.rank() + 1) % n;
    int prev = (c.rank() + n - 1) % n;
    try (DeviceBuffer out = HostDevice.INSTANCE.allocate(bytes);
        DeviceBuffer in = HostDevice.INSTANCE.allocate(bytes)) {
      out.copyFromHost(bytes(c.rank(), bytes), 0);
      c.groupStart();
      c.sendAsync(out, bytes, DataType.UINT8, next);
      c.recvAsync(in, bytes, DataType.UINT8, prev);
      c.groupEnd();
      ByteBuffer got = ByteBuffer.allocateDirect(bytes).order(ByteOrder.nativeOrder());
      in.copyToHost(0, got);
      assertEquals(bytes(prev, bytes), got.clear(), "rank " + c.rank() + " from rank " + prev);
    }
  }

  private static int[] values(int rank, int count) {
    SplittableRandom rnd = new SplittableRandom(31L * rank + count);
    int[] v = new int[count];
    for (int i = 0; i < count; i++) {
      v[i] = rnd.nextInt() | 1;
    }
    return v;
  }

  private static ByteBuffer bytes(int rank, int n) {
    SplittableRandom rnd = new SplittableRandom(977L * rank + n);
    ByteBuffer b = ByteBuffer.allocateDirect(n).order(ByteOrder.nativeOrder());
    for (int i = 0; i < n; i++) {
      b.put(i, (byte) rnd.nextInt(256));
    }
    return b;
  }
}
