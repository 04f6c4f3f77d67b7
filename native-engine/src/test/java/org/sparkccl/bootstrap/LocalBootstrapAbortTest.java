package org.sparkccl.bootstrap;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.sparkccl.CclException;

/**
 * Ranks as threads: a rank that gives up ({@link LocalBootstrap.Group#abort}) ends the waits of the
 * others at once, with its reason, and every later wait too; without it they gather normally.
 */
@DisplayName("ranks as threads that give up")
class LocalBootstrapAbortTest {
  private static final Duration LONG = Duration.ofSeconds(60);

  /** A thread per rank: the common pool may have a single thread on a small machine. */
  private final ExecutorService ranks = Executors.newFixedThreadPool(3);

  @AfterEach
  void stopRanks() {
    ranks.shutdownNow();
  }

  @Test
  @DisplayName("the waiting ranks fail at once with the reason, and so do later waits")
  void anAbortEndsEveryWait() throws Exception {
    LocalBootstrap.Group group = LocalBootstrap.group(3);
    List<CompletableFuture<byte[][]>> waiting = new ArrayList<>();
    for (int r = 0; r < 2; r++) {
      LocalBootstrap boot = group.rank(r);
      waiting.add(CompletableFuture.supplyAsync(() -> boot.allGather(new byte[] {1}, LONG), ranks));
    }
    Thread.sleep(100); // both are in the barrier, rank 2 never comes
    long start = System.nanoTime();
    group.abort("rank 2 ran out of memory");
    for (CompletableFuture<byte[][]> f : waiting) {
      ExecutionException e =
          assertThrows(ExecutionException.class, () -> f.get(10, TimeUnit.SECONDS));
      assertTrue(e.getCause() instanceof CclException, e.getCause().toString());
      assertTrue(
          e.getCause().getMessage().contains("rank 2 ran out of memory"),
          e.getCause().getMessage());
    }
    assertTrue(
        System.nanoTime() - start < TimeUnit.SECONDS.toNanos(10),
        "the waits ended long after the abort");
    CclException later =
        assertThrows(CclException.class, () -> group.rank(0).allGather(new byte[] {2}, LONG));
    assertTrue(later.getMessage().contains("rank 2 ran out of memory"), later.getMessage());
  }

  @Test
  @DisplayName("without an abort every rank gets every rank's bytes")
  void withoutAnAbortRanksGather() throws Exception {
    int n = 3;
    LocalBootstrap.Group group = LocalBootstrap.group(n);
    byte[][] mine = new byte[n][];
    SplittableRandom random = new SplittableRandom(5);
    List<CompletableFuture<byte[][]>> got = new ArrayList<>();
    for (int r = 0; r < n; r++) {
      mine[r] = new byte[8 + r];
      for (int i = 0; i < mine[r].length; i++) {
        mine[r][i] = (byte) random.nextInt(1, 256);
      }
      LocalBootstrap boot = group.rank(r);
      byte[] bytes = mine[r];
      got.add(CompletableFuture.supplyAsync(() -> boot.allGather(bytes, LONG), ranks));
    }
    for (CompletableFuture<byte[][]> f : got) {
      byte[][] all = f.get(30, TimeUnit.SECONDS);
      for (int r = 0; r < n; r++) {
        assertArrayEquals(mine[r], all[r], "rank " + r);
      }
    }
  }
}
