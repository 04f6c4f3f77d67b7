package org.sparkccl;

import java.time.Duration;
import java.util.SplittableRandom;
import java.util.concurrent.locks.LockSupport;
import java.util.regex.Pattern;
import org.sparkccl.bootstrap.LocalBootstrap;
import org.sparkccl.config.CclConfig;
import org.sparkccl.device.DeviceBuffer;
import org.sparkccl.device.HostDevice;

/**
 * A child JVM for {@code ProcessAllReduceTest}: 3 ranks as threads; rank 0 closes its communicator
 * as soon as it has one, while ranks 1 and 2, a few milliseconds later or at once, launch an
 * allReduce that rank 0 never joins (a training loop that runs one step more on some ranks). Both
 * must fail soon, each saying that rank 0 closed (told by rank 0, or by the other rank that failed
 * first), and must not write into the memory rank 0 freed: over UCX rank 1 posts its entries into
 * rank 0's side area, and ranks that are threads share one address space, so a late post damaged
 * this JVM's heap. Prints {@code OK} and exits 0 after 10 rounds.
 */
public final class CloseWhileOthersCallMain {
  /**
   * The cause, over either transport. Over sockets a send to rank 0 can meet the reset of its
   * connection before the proxy has read rank 0's close notice; the failed send reads it then.
   */
  private static final Pattern CAUSE = Pattern.compile("rank 0 has closed its communicator");

  private CloseWhileOthersCallMain() {}

  public static void main(String[] args) {
    ChildJvm.exitWith(CloseWhileOthersCallMain::rounds);
  }

  private static int rounds() {
    CclConfig config = TestConfig.builder().nChannels(2).timeout(Duration.ofSeconds(30)).build();
    int count = 1 << 20; // 4 MiB of floats: over UCX, the ring of one-sided puts
    for (int r0 = 0; r0 < 10; r0++) {
      int round = r0;
      LocalBootstrap.Group group = LocalBootstrap.group(3);
      SplittableRandom rnd = new SplittableRandom(round);
      long lateNanos = rnd.nextInt(3_000_000);
      Throwable[] failures = new Throwable[3];
      String[] ring = new String[3];
      Throwable[] errors =
          RankHarness.runCollect(
              3,
              Duration.ofSeconds(60),
              rank -> {
                // made first, so that the call starts right after the communicator
                SplittableRandom mine = new SplittableRandom(round * 31L + rank);
                float[] data = new float[count];
                for (int i = 0; i < count; i++) {
                  data[i] = (float) mine.nextGaussian();
                }
                try (Communicator comm = Communicator.create(group.rank(rank), config);
                    DeviceBuffer buf = HostDevice.INSTANCE.allocate(4L * count)) {
                  ring[rank] = comm.ringTransport();
                  if (rank == 0) {
                    return;
                  }
                  buf.copyFromHost(data, 0);
                  LockSupport.parkNanos(lateNanos);
                  failures[rank] =
                      RankHarness.await(
                          comm.allReduceAsync(buf, buf, count, DataType.FLOAT32, ReduceOp.SUM),
                          Duration.ofSeconds(20),
                          "rank " + rank);
                }
              });
      if (errors[0] != null) {
        throw new AssertionError("round " + round + ": rank 0: " + errors[0], errors[0]);
      }
      // each fails soon and cleanly, naming the close
      for (int r = 1; r < 3; r++) {
        // the call fails, or its launch throws where the communicator has failed already
        Throwable f = failures[r] != null ? failures[r] : errors[r];
        if (!(f instanceof CclException) || f instanceof CclTimeoutException) {
          throw new AssertionError(
              "round " + round + ": rank " + r + " should fail at once; got " + f, f);
        }
        if (!CAUSE.matcher(String.valueOf(f.getMessage())).find()) {
          throw new AssertionError(
              "round "
                  + round
                  + " ("
                  + ring[1]
                  + " ring): rank "
                  + r
                  + " did not say \""
                  + CAUSE.pattern()
                  + "\": "
                  + f,
              f);
        }
      }
    }
    System.out.println("OK");
    return 0;
  }
}
