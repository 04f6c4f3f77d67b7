package org.sparkccl.spark;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import org.apache.spark.BarrierTaskContext;
import org.apache.spark.SparkConf;
import org.apache.spark.api.java.JavaSparkContext;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import scala.collection.Iterator;
import scala.jdk.javaapi.CollectionConverters;

/**
 * Without the plugin, the all-gather goes through {@code BarrierTaskContext.allGather}, which Spark
 * bounds only by {@code spark.barrier.sync.timeout} (a year by default); the engine's timeout must
 * bound it instead.
 */
@DisplayName("TaskAllGather without the plugin honours the timeout")
class BarrierFallbackTimeoutTest {
  private static final long TIMEOUT_MS = 1_500;

  @Test
  @Timeout(120)
  void aRankThatNeverArrivesFailsTheOthersWithinTheTimeout() {
    SparkConf conf =
        new SparkConf()
            .setMaster("local[2]")
            .setAppName("BarrierFallbackTimeoutTest")
            .set("spark.ui.enabled", "false");
    try (JavaSparkContext sc = new JavaSparkContext(conf)) {
      // start-up and a first barrier job, so the timed job below measures only itself
      sc.parallelize(List.of(0, 1), 2).count();
      long t0 = System.nanoTime();
      Exception e =
          assertThrows(
              Exception.class,
              () -> BarrierStage.of(sc, 2, new RankZeroGathersRankOneDoesNot()).count());
      long tookMs = (System.nanoTime() - t0) / 1_000_000;
      String message = String.valueOf(e.getMessage());
      assertTrue(
          message.contains("BarrierTaskContext.allGather did not complete within " + TIMEOUT_MS),
          message);
      assertTrue(
          tookMs < TIMEOUT_MS + 5_000,
          "failed after " + tookMs + " ms; timeout " + TIMEOUT_MS + " ms");
    }
  }

  /** Rank 0 gathers; rank 1 waits out 20 s (or its kill) without ever calling allGather. */
  private static final class RankZeroGathersRankOneDoesNot
      extends scala.runtime.AbstractFunction1<Iterator<Integer>, Iterator<String>>
      implements java.io.Serializable {
    private static final long serialVersionUID = 1L;

    @Override
    public Iterator<String> apply(Iterator<Integer> rows) {
      BarrierTaskContext context = BarrierTaskContext.get();
      if (context.partitionId() == 0) {
        byte[][] all =
            TaskAllGather.allGather(
                context, "rank 0".getBytes(StandardCharsets.UTF_8), Duration.ofMillis(TIMEOUT_MS));
        return CollectionConverters.asScala(List.of(String.valueOf(all.length)).iterator());
      }
      long end = System.nanoTime() + 20_000_000_000L;
      while (System.nanoTime() < end && !context.isInterrupted()) {
        try {
          Thread.sleep(50);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          break;
        }
      }
      return CollectionConverters.asScala(List.<String>of().iterator());
    }
  }
}
