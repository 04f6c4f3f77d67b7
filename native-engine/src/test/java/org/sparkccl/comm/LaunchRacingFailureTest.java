package org.sparkccl.comm;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteOrder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.sparkccl.DataType;
import org.sparkccl.ReduceOp;
import org.sparkccl.TestConfig;
import org.sparkccl.bootstrap.LocalBootstrap;
import org.sparkccl.config.Algorithm;
import org.sparkccl.config.CclConfig;
import org.sparkccl.config.Transport;
import org.sparkccl.device.HostBuffer;
import org.sparkccl.device.HostDevice;

/**
 * A failure recorded while a launch queues its proxy operations still drops them. An abort from
 * another thread does not take the launch lock, so its drop can come between a launch's check and
 * its queueing; the operations queued after it stayed counted, and the proxy of a UCX communicator
 * polled for them every 20 us until close.
 */
@DisplayName("a failure racing launches")
class LaunchRacingFailureTest {
  private static final int TRIALS = 100;
  private static final int COUNT = 1 << 12;

  /** One launch of rank 0 that does not wait: its operations stay in flight. */
  private interface Launch {
    CompletableFuture<Void> start(CommCore core, HostBuffer src, HostBuffer dst);
  }

  @Test
  @Timeout(240)
  @DisplayName("leaves no proxy operation of a ring allReduce counted")
  void noRingOperationStaysCounted() throws Exception {
    runTrials(
        0x5ca1ab1e,
        (core, src, dst) ->
            core.collectives()
                .launch(
                    false,
                    CollectiveCall.Kind.ALL_REDUCE,
                    COUNT,
                    DataType.FLOAT32,
                    ReduceOp.SUM,
                    0,
                    src,
                    dst,
                    0,
                    0));
  }

  @Test
  @Timeout(240)
  @DisplayName("leaves no proxy operation of a send counted")
  void noSendOperationStaysCounted() throws Exception {
    runTrials(
        0x5e11d,
        (core, src, dst) -> core.pointToPoint().call(true, src, COUNT, DataType.FLOAT32, 1));
  }

  private static void runTrials(long seed, Launch launch) throws Exception {
    Random random = new Random(seed);
    for (int trial = 0; trial < TRIALS; trial++) {
      runTrial(trial, random.nextInt(400), launch);
    }
  }

  /**
   * Rank 0 launches without waiting while rank 1 launches nothing, so every launch is still in
   * flight when another thread aborts rank 0 after {@code abortAfterMicros}.
   */
  private static void runTrial(int trial, int abortAfterMicros, Launch launch) throws Exception {
    CclConfig config =
        TestConfig.builder()
            .transport(Transport.SOCKET)
            .algo(Algorithm.RING)
            .timeout(Duration.ofSeconds(30))
            .build();
    LocalBootstrap.Group group = LocalBootstrap.group(2);
    ExecutorService pool = Executors.newFixedThreadPool(3);
    try {
      Future<CommCore> other = pool.submit(() -> CommCore.create(group.rank(1), config));
      CommCore core = CommCore.create(group.rank(0), config);
      CommCore peer = other.get(30, TimeUnit.SECONDS);
      HostBuffer src = HostDevice.INSTANCE.allocate(4L * COUNT);
      HostBuffer dst = HostDevice.INSTANCE.allocate(4L * COUNT);
      try {
        fill(src, trial);
        AtomicBoolean started = new AtomicBoolean();
        Future<List<CompletableFuture<Void>>> launches =
            pool.submit(
                () -> {
                  List<CompletableFuture<Void>> futures = new ArrayList<>();
                  while (!core.isAborted()) {
                    try {
                      futures.add(launch.start(core, src, dst));
                    } catch (RuntimeException aborted) {
                      break;
                    }
                    started.set(true);
                  }
                  return futures;
                });
        while (!started.get()) {
          Thread.onSpinWait();
        }
        long until = System.nanoTime() + abortAfterMicros * 1_000L;
        while (System.nanoTime() < until) {
          Thread.onSpinWait();
        }
        core.abort();
        for (CompletableFuture<Void> f : launches.get(30, TimeUnit.SECONDS)) {
          f.handle((v, e) -> null).get(30, TimeUnit.SECONDS);
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (!core.context().proxy.isIdle() && System.nanoTime() < deadline) {
          Thread.sleep(1);
        }
        assertTrue(
            core.context().proxy.isIdle(),
            "trial "
                + trial
                + " (abort after "
                + abortAfterMicros
                + " us): rank 0's proxy still counts operations 5 s after every launch ended;"
                + " expected the failure to have dropped them all");
      } finally {
        core.close();
        peer.abort();
        peer.close();
        src.close();
        dst.close();
      }
    } finally {
      pool.shutdownNow();
    }
  }

  private static void fill(HostBuffer buf, int seed) {
    Random random = new Random(seed);
    var bytes = buf.memory().duplicate().order(ByteOrder.nativeOrder());
    for (int i = 0; i < COUNT; i++) {
      bytes.putFloat(4 * i, random.nextFloat() - 0.5f);
    }
  }
}
