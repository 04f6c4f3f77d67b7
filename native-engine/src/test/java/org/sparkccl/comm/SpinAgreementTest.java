package org.sparkccl.comm;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.sparkccl.TestConfig;
import org.sparkccl.bootstrap.LocalBootstrap;
import org.sparkccl.config.CclConfig;
import org.sparkccl.config.IdleMode;
import org.sparkccl.idle.AutoIdle;

/**
 * The tuner takes {@code tuner.spin.*} only where every rank spins, and every rank must make the
 * same choice: a rank that picked Rabenseifner while its peer picked the ring would wait forever.
 * So whether every rank spins is computed from what each rank sent, the same on every rank, even
 * where one rank backs off and the other spins. Whether every host has cores to spare (for {@code
 * ring.proxyMinBytes=auto}) is agreed the same way.
 */
@DisplayName("whether every rank spins")
class SpinAgreementTest {
  private static final Duration WAIT = Duration.ofSeconds(60);

  @Test
  @DisplayName("is the same on every rank, and true only where every rank's waits spin")
  void everyRankAgrees() throws Exception {
    IdleMode[][] cases = {
      {IdleMode.SPIN, IdleMode.SPIN},
      {IdleMode.SPIN, IdleMode.BACKOFF},
      {IdleMode.PARK, IdleMode.SPIN},
      {IdleMode.AUTO, IdleMode.AUTO},
    };
    int cores = Runtime.getRuntime().availableProcessors();
    for (IdleMode[] modes : cases) {
      // auto: two ranks of two polling threads each, on however many cores this machine has
      int threads = AutoIdle.pollingThreadsPerRank(1, 0);
      boolean autoSpins = AutoIdle.spins(2, threads, cores);
      boolean expected = true;
      for (IdleMode m : modes) {
        expected &= m == IdleMode.SPIN || (m == IdleMode.AUTO && autoSpins);
      }
      // ring.proxyMinBytes=auto: twice the polling threads against the cores, spinning, sockets
      boolean spare = AutoIdle.spins(2, 2 * threads, cores);
      Links[] seen = linksSeenByEachRank(modes, CclConfig.RING_PROXY_AUTO);
      String where = modes[0] + " and " + modes[1] + " on " + cores + " cores";
      boolean proxyMoves = expected && spare && seen[0].ring().overSockets();
      for (int r = 0; r < 2; r++) {
        assertEquals(expected, seen[r].everyRankSpins(), "rank " + r + ", " + where);
        assertEquals(
            proxyMoves ? CollectiveLauncher.AUTO_PROXY_MIN_BYTES : 0,
            seen[r].ringProxyMinBytes(),
            "rank " + r + ", ring.proxyMinBytes=auto, " + where);
      }
    }
  }

  @Test
  @DisplayName("ring.proxyMinBytes set to a size holds whether the ranks spin or not")
  void anExplicitProxySizeReachesTheCommunicator() throws Exception {
    long size = 3 << 20;
    for (IdleMode mode : new IdleMode[] {IdleMode.SPIN, IdleMode.BACKOFF}) {
      for (Links seen : linksSeenByEachRank(new IdleMode[] {mode, mode}, size)) {
        assertEquals(size, seen.ringProxyMinBytes(), "idle=" + mode);
      }
      for (Links seen : linksSeenByEachRank(new IdleMode[] {mode, mode}, 0)) {
        assertEquals(0, seen.ringProxyMinBytes(), "idle=" + mode + ", off");
      }
    }
  }

  @Test
  @DisplayName("follows auto's rule from each rank's cores, threads and cap")
  void autoFollowsTheCores() {
    assertEquals(true, AutoIdle.spinsWhenBusy(IdleMode.AUTO, 8, 2, 16, 0));
    assertEquals(false, AutoIdle.spinsWhenBusy(IdleMode.AUTO, 8, 3, 16, 0));
    assertEquals(false, AutoIdle.spinsWhenBusy(IdleMode.AUTO, 4, 2, 16, 1));
    assertEquals(true, AutoIdle.spinsWhenBusy(IdleMode.SPIN, 4, 2, 2, 0));
    assertEquals(false, AutoIdle.spinsWhenBusy(IdleMode.BACKOFF, 1, 1, 64, 0));
  }

  @Test
  @DisplayName("has cores to spare where the cores cover twice the polling threads")
  void coresToSpareNeedTwiceThePollingThreads() {
    assertEquals(true, AutoIdle.sparesCores(4, 2, 16, 0));
    assertEquals(false, AutoIdle.sparesCores(8, 2, 16, 0), "16 spinning threads on 16 cores");
    assertEquals(false, AutoIdle.sparesCores(4, 2, 16, 2), "capped at 2 cores a rank");
    assertEquals(true, AutoIdle.sparesCores(4, 2, 16, 4));
    assertEquals(false, AutoIdle.sparesCores(2, 2, 2, 0), "the 2-core VM");
  }

  /** Each rank's links, rank {@code r} with idle mode {@code modes[r]}. */
  private static Links[] linksSeenByEachRank(IdleMode[] modes, long proxyMinBytes)
      throws Exception {
    LocalBootstrap.Group group = LocalBootstrap.group(modes.length);
    ExecutorService pool = Executors.newFixedThreadPool(modes.length);
    try {
      List<Future<Links>> seen = new ArrayList<>();
      for (int r = 0; r < modes.length; r++) {
        CclConfig config =
            TestConfig.builder()
                .nChannels(1) // the polling threads counted above: one channel
                .idle(modes[r])
                .ringProxyMinBytes(proxyMinBytes)
                .timeout(WAIT)
                .build();
        int rank = r;
        seen.add(
            pool.submit(
                () -> {
                  CommCore core = CommCore.create(group.rank(rank), config);
                  try {
                    return core.context().links();
                  } finally {
                    core.close();
                  }
                }));
      }
      Links[] out = new Links[modes.length];
      for (int r = 0; r < modes.length; r++) {
        out[r] = seen.get(r).get(WAIT.toSeconds(), TimeUnit.SECONDS);
      }
      return out;
    } finally {
      pool.shutdownNow();
    }
  }
}
