package org.sparkccl;

import java.time.Duration;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.locks.LockSupport;
import org.sparkccl.bootstrap.LocalBootstrap;
import org.sparkccl.config.CclConfig;
import org.sparkccl.device.DeviceBuffer;
import org.sparkccl.device.HostDevice;

/**
 * A child JVM for {@code ProcessAllReduceTest}: 3 ranks as threads run large allReduces; rank 1
 * aborts in the middle of one; every rank frees its buffer as soon as its call has returned, in the
 * order of the {@link Communicator} class example (buffer closed before the communicator). Once a
 * call has returned the engine must not touch the buffer again, nor a peer touch memory a closed
 * rank freed; if either does, the JVM crashes or malloc aborts it. Prints {@code OK} and exits 0
 * after 10 rounds.
 */
public final class FreeAfterFailureMain {
  private FreeAfterFailureMain() {}

  public static void main(String[] args) {
    ChildJvm.exitWith(FreeAfterFailureMain::rounds);
  }

  private static int rounds() {
    CclConfig config = TestConfig.builder().nChannels(2).timeout(Duration.ofSeconds(20)).build();
    // 16 MiB of floats. The first buffer is unmapped when freed, so a late touch faults; glibc
    // then raises its mmap threshold and later ones come from its heap, where a late write
    // breaks the free lists and malloc aborts the process: either way this JVM dies.
    int count = 4 << 20;
    for (int round = 0; round < 10; round++) {
      LocalBootstrap.Group group = LocalBootstrap.group(3);
      SplittableRandom rnd = new SplittableRandom(round);
      long abortAfterNanos = 1_000_000L + rnd.nextInt(30_000_000);
      Throwable[] errors =
          RankHarness.runCollect(
              3,
              Duration.ofSeconds(60),
              rank -> {
                try (Communicator comm = Communicator.create(group.rank(rank), config);
                    DeviceBuffer buf = HostDevice.INSTANCE.allocate(4L * count)) {
                  CompletableFuture<Void> f =
                      comm.allReduceAsync(buf, buf, count, DataType.FLOAT32, ReduceOp.SUM);
                  if (rank == 1) {
                    LockSupport.parkNanos(abortAfterNanos);
                    comm.abort();
                  }
                  RankHarness.await(f, Duration.ofSeconds(30), "rank " + rank);
                }
              });
      for (int r = 0; r < 3; r++) {
        if (errors[r] != null && !(errors[r] instanceof CclException)) {
          throw new AssertionError("round " + round + ": rank " + r + ": " + errors[r], errors[r]);
        }
      }
    }
    System.out.println("OK");
    return 0;
  }
}
