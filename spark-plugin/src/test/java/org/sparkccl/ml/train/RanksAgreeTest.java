package org.sparkccl.ml.train;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;
import java.util.stream.Stream;
import org.apache.spark.ml.linalg.Vectors;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.sparkccl.Communicator;
import org.sparkccl.bootstrap.LocalBootstrap;
import org.sparkccl.config.CclConfig;
import org.sparkccl.config.Key;

/**
 * Ranks as threads, each with a communicator and a share of the rows: after a fit every rank holds
 * the same coefficients bit for bit, for each all-reduce algorithm the engine offers and several
 * rank counts; a rank that drifts fails loudly.
 */
@DisplayName("Every rank ends a fit with bit-identical coefficients")
@Timeout(180)
class RanksAgreeTest {
  private static final int FEATURES = 20;

  /** The engine's all-reduce algorithms (the {@code algo} setting); add new ones here. */
  static Stream<Arguments> algorithmsAndRanks() {
    List<Arguments> out = new ArrayList<>();
    for (String algo : new String[] {"ring", "tree"}) {
      for (int ranks : new int[] {2, 3, 4}) {
        out.add(Arguments.of(algo, ranks));
      }
    }
    return out.stream();
  }

  private static List<Row> rows(int n, int classes, long seed) {
    SplittableRandom rnd = new SplittableRandom(seed);
    double[] w = new double[FEATURES];
    for (int j = 0; j < FEATURES; j++) {
      w[j] = rnd.nextGaussian();
    }
    List<Row> rows = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      double[] x = new double[FEATURES];
      double m = 0;
      for (int j = 0; j < FEATURES; j++) {
        x[j] = 1 + 3 * rnd.nextGaussian();
        m += w[j] * x[j] / 3;
      }
      double label;
      if (classes == 0) {
        label = m + rnd.nextGaussian();
      } else {
        double u = (1 + Math.tanh(m + rnd.nextGaussian())) / 2;
        label = Math.min(classes - 1, (int) (u * classes));
      }
      rows.add(RowFactory.create(label, 0.5 + rnd.nextDouble(), Vectors.dense(x)));
    }
    return rows;
  }

  /** Runs {@code body} as {@code ranks} threads and returns what each returned. */
  private static <T> List<T> onRanks(int ranks, IntFunction<T> body) throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(ranks);
    try {
      List<Future<T>> futures = new ArrayList<>();
      for (int r = 0; r < ranks; r++) {
        int rank = r;
        futures.add(pool.submit(() -> body.apply(rank)));
      }
      List<T> out = new ArrayList<>();
      for (Future<T> f : futures) {
        out.add(f.get(120, TimeUnit.SECONDS));
      }
      return out;
    } finally {
      pool.shutdownNow();
    }
  }

  private static List<Fit> fitOnRanks(TrainSpec spec, List<Row> rows, String algo, int ranks)
      throws Exception {
    LocalBootstrap.Group group = LocalBootstrap.group(ranks);
    CclConfig config = CclConfig.builder().set(Key.ALGO, algo).build();
    return onRanks(
        ranks,
        rank -> {
          List<Row> mine = new ArrayList<>();
          for (int i = rank; i < rows.size(); i += ranks) {
            mine.add(rows.get(i));
          }
          try (Communicator comm = Communicator.create(group.rank(rank), config);
              CommunicatorSum sum = new CommunicatorSum(comm, Trainer.reduceCapacity(spec))) {
            return Trainer.train(spec, Blocks.pack(mine.iterator(), FEATURES, 64), sum);
          }
        });
  }

  private static TrainSpec spec(TrainSpec.Loss loss, int classes, double reg, double en) {
    return new TrainSpec(loss, FEATURES, classes, true, true, reg, en, 100, 1e-9, 0.0, 0);
  }

  @ParameterizedTest(name = "{0} all-reduce, {1} ranks")
  @MethodSource("algorithmsAndRanks")
  void allRanksHoldTheSameBits(String algo, int ranks) throws Exception {
    List<TrainSpec> specs =
        List.of(
            spec(TrainSpec.Loss.BINOMIAL, 2, 0.001, 0.0),
            spec(TrainSpec.Loss.MULTINOMIAL, 3, 0.01, 0.5),
            spec(TrainSpec.Loss.SQUARED_ERROR, 0, 0.01, 0.0));
    for (TrainSpec spec : specs) {
      List<Row> rows = rows(3000, spec.numClasses(), ranks * 31L + spec.numClasses());
      List<Fit> fits = fitOnRanks(spec, rows, algo, ranks);
      Fit first = fits.get(0);
      assertTrue(first.iterations() > 3, spec.loss() + ": a fit of a few iterations at least");
      for (int r = 1; r < ranks; r++) {
        Fit other = fits.get(r);
        assertArrayEquals(first.coefficients(), other.coefficients(), spec.loss() + " rank " + r);
        assertArrayEquals(first.intercepts(), other.intercepts(), spec.loss() + " rank " + r);
        assertArrayEquals(
            first.objectiveHistory(), other.objectiveHistory(), spec.loss() + " rank " + r);
      }
    }
  }

  @Test
  void aRankEvaluatingAnotherPointFailsInsteadOfHanging() throws Exception {
    TrainSpec spec = spec(TrainSpec.Loss.BINOMIAL, 2, 0.0, 0.0);
    List<Row> rows = rows(200, 2, 5);
    LocalBootstrap.Group group = LocalBootstrap.group(2);
    List<String> errors =
        onRanks(
            2,
            rank -> {
              CclConfig config = CclConfig.builder().build();
              try (Communicator comm = Communicator.create(group.rank(rank), config);
                  CommunicatorSum sum = new CommunicatorSum(comm, Trainer.reduceCapacity(spec))) {
                List<Block> blocks = Blocks.pack(rows.iterator(), FEATURES, 64);
                DistributedObjective objective =
                    new DistributedObjective(
                        blocks,
                        new BinaryLogisticKernel(FEATURES, true, new double[FEATURES]),
                        sum,
                        1.0,
                        new L2Penalty(0.0, FEATURES, null));
                double[] x = new double[FEATURES + 1];
                x[0] = rank; // the ranks disagree on the point
                objective.calculate(x, new double[FEATURES + 1]);
                return null;
              } catch (IllegalStateException e) {
                return e.getMessage();
              }
            });
    assertEquals(2, errors.size());
    for (String e : errors) {
      assertNotNull(e, "each rank sees that the sum is not nRanks times its own fingerprint");
      assertTrue(e.contains("diverged"), e);
    }
  }
}
