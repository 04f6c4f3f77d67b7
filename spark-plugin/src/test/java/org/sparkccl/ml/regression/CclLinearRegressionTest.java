package org.sparkccl.ml.regression;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.stream.Stream;
import org.apache.spark.ml.evaluation.RegressionEvaluator;
import org.apache.spark.ml.regression.LinearRegression;
import org.apache.spark.ml.regression.LinearRegressionModel;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.sparkccl.ml.TestData;

/** CclLinearRegression against MLlib's LinearRegression with solver=l-bfgs, on the same data. */
@DisplayName("CclLinearRegression matches MLlib's LinearRegression (l-bfgs)")
@Timeout(300)
class CclLinearRegressionTest {
  private static SparkSession spark;
  private static Dataset<Row> data;

  @BeforeAll
  static void startSpark() {
    spark = TestData.spark(2, "CclLinearRegressionTest");
    data = TestData.regression(spark, 5000, 15, 2, 11);
  }

  @AfterAll
  static void stopSpark() {
    spark.stop();
  }

  /** One comparison: MLlib's settings. */
  record Case(
      String name,
      double regParam,
      double elasticNet,
      boolean intercept,
      boolean standardization,
      boolean weighted) {
    @Override
    public String toString() {
      return name;
    }
  }

  static Stream<Case> cases() {
    return Stream.of(
        new Case("unregularized", 0.0, 0.0, true, true, false),
        new Case("L2", 0.3, 0.0, true, true, false),
        new Case("elastic net", 0.2, 0.6, true, true, false),
        new Case("elastic net, no standardization", 0.2, 0.5, true, false, false),
        new Case("L2, weights, no intercept", 0.1, 0.0, false, true, true));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  void theCoefficientsObjectiveAndErrorAgreeWithMllib(Case c) {
    LinearRegression mllib =
        new LinearRegression()
            .setSolver("l-bfgs")
            .setRegParam(c.regParam())
            .setElasticNetParam(c.elasticNet())
            .setFitIntercept(c.intercept())
            .setStandardization(c.standardization());
    CclLinearRegression ccl =
        new CclLinearRegression()
            .setRegParam(c.regParam())
            .setElasticNetParam(c.elasticNet())
            .setFitIntercept(c.intercept())
            .setStandardization(c.standardization())
            .setNumWorkers(2);
    if (c.weighted()) {
      mllib.setWeightCol("weight");
      ccl.setWeightCol("weight");
    }
    LinearRegressionModel expected = mllib.fit(data);
    CclLinearRegressionModel got = ccl.fit(data);

    double[] want = expected.coefficients().toArray();
    double[] have = got.coefficients().toArray();
    double distance = TestData.relativeDistance(have, want);
    double[] wantHistory = expected.summary().objectiveHistory();
    double[] haveHistory = got.summary().objectiveHistory();
    double wantLoss = wantHistory[wantHistory.length - 1];
    double haveLoss = haveHistory[haveHistory.length - 1];
    System.out.printf(
        "%s: coefficients %.2e apart (relative), objective %.2e apart, iterations %d / %d"
            + " (SparkCCL / MLlib)%n",
        c,
        distance,
        Math.abs(haveLoss - wantLoss) / wantLoss,
        got.summary().totalIterations(),
        expected.summary().totalIterations());
    assertTrue(distance <= 1e-4, "coefficients differ by " + distance + " (relative)");
    assertEquals(
        expected.intercept(),
        got.intercept(),
        1e-4 * Math.max(1, Math.abs(expected.intercept())),
        "intercept");
    if (c.elasticNet() > 0) {
      for (int i = 0; i < want.length; i++) {
        assertEquals(want[i] == 0.0, have[i] == 0.0, "zero pattern at " + i);
      }
    }
    assertEquals(wantLoss, haveLoss, 1e-6 * Math.abs(wantLoss), "final objective");
    RegressionEvaluator rmse = new RegressionEvaluator();
    double wantRmse = rmse.evaluate(expected.transform(data));
    assertEquals(wantRmse, rmse.evaluate(got.transform(data)), 1e-3 * wantRmse, "RMSE");
  }

  @Test
  void settingsOnlyMllibSupportsFailNamingMllibsEstimator() {
    IllegalArgumentException normal =
        assertThrows(
            IllegalArgumentException.class,
            () -> new CclLinearRegression().setSolver("normal").fit(data));
    assertTrue(normal.getMessage().contains("org.apache.spark.ml.regression.LinearRegression"));
    IllegalArgumentException huber =
        assertThrows(
            IllegalArgumentException.class,
            () -> new CclLinearRegression().setLoss("huber").fit(data));
    assertTrue(huber.getMessage().contains("org.apache.spark.ml.regression.LinearRegression"));
  }
}
