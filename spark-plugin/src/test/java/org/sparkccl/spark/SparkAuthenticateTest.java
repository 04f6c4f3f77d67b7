package org.sparkccl.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.apache.spark.BarrierTaskContext;
import org.apache.spark.SparkConf;
import org.apache.spark.api.java.JavaSparkContext;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.sparkccl.Communicator;
import org.sparkccl.ReduceOp;
import scala.collection.Iterator;
import scala.jdk.javaapi.CollectionConverters;

/**
 * With {@code spark.authenticate=true} the communicator's secret is bound to the application's: the
 * application's tasks form communicators and reduce correctly; a rank that holds another secret
 * (and saw the whole exchange, being a task of the stage) cannot join.
 */
@DisplayName("spark.authenticate=true binds communicators to the application's secret")
@Timeout(300)
class SparkAuthenticateTest {
  private static JavaSparkContext sc;

  @BeforeAll
  static void startSpark() {
    SparkConf conf =
        new SparkConf()
            .setMaster("local[2]")
            .setAppName("SparkAuthenticateTest")
            .set("spark.plugins", SparkCCLPlugin.class.getName())
            .set("spark.authenticate", "true")
            .set("spark.ui.enabled", "false")
            .set("spark.ccl.transport", "socket")
            .set("spark.ccl.timeout", "5s");
    sc = new JavaSparkContext(conf);
  }

  @AfterAll
  static void stopSpark() {
    if (sc != null) {
      sc.stop();
    }
  }

  @Test
  void theApplicationsTasksReduceCorrectly() {
    SplittableRandom rnd = new SplittableRandom(4);
    List<float[]> inputs = new ArrayList<>();
    for (int p = 0; p < 2; p++) {
      float[] a = new float[1000];
      for (int i = 0; i < a.length; i++) {
        a[i] = (float) (0.5 + rnd.nextDouble());
      }
      inputs.add(a);
    }
    List<float[]> out = SparkCCL.allReduce(sc.parallelize(inputs, 2), ReduceOp.SUM).collect();
    for (float[] got : out) {
      for (int i = 0; i < got.length; i++) {
        assertEquals(inputs.get(0)[i] + inputs.get(1)[i], got[i], 1e-6, "element " + i);
      }
    }
  }

  @Test
  void aRankWithAnotherSecretCannotJoin() {
    // Each task reports its own outcome: had they thrown, Spark would name only the first to fail,
    // and the rank that did not see the wrong proof fails on a closed or refused connection.
    List<String> outcomes = BarrierStage.of(sc, 2, new RankOneHoldsAnotherSecret()).collect();
    assertEquals(2, outcomes.size(), outcomes.toString());
    for (String o : outcomes) {
      assertTrue(o.startsWith("failed: "), "a rank joined: " + outcomes);
    }
    // the first failure is a wrong proof (nothing else goes wrong), seen by one rank or the other
    assertTrue(
        outcomes.stream()
            .anyMatch(
                o ->
                    o.contains("did not prove this communicator's secret")
                        || o.contains("did not prove the secret")),
        outcomes.toString());
  }

  /** Rank 1 joins with a secret of its own instead of the application's. */
  private static final class RankOneHoldsAnotherSecret
      extends scala.runtime.AbstractFunction1<Iterator<Integer>, Iterator<String>>
      implements java.io.Serializable {
    private static final long serialVersionUID = 1L;

    @Override
    public Iterator<String> apply(Iterator<Integer> rows) {
      BarrierTaskContext context = BarrierTaskContext.get();
      byte[] app = AppSecret.current();
      if (app == null) {
        throw new AssertionError("spark.authenticate=true, yet no application secret");
      }
      byte[] secret =
          context.partitionId() == 1 ? "not the app's".getBytes(StandardCharsets.UTF_8) : app;
      String outcome;
      try (Communicator comm =
          Communicator.create(
              new BarrierBootstrap(context, secret), ExecutorEngine.get().config())) {
        outcome = "joined " + comm.rank();
      } catch (RuntimeException e) {
        outcome = "failed: " + e.getMessage();
      }
      return CollectionConverters.asScala(List.of(outcome).iterator());
    }
  }
}
