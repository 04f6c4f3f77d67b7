package org.sparkccl.ml.classification;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.stream.Stream;
import org.apache.spark.ml.classification.LogisticRegression;
import org.apache.spark.ml.classification.LogisticRegressionModel;
import org.apache.spark.ml.evaluation.BinaryClassificationEvaluator;
import org.apache.spark.ml.evaluation.MulticlassClassificationEvaluator;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.sparkccl.ml.TestData;

/** CclLogisticRegression against MLlib's LogisticRegression, fitted on the same data. */
@DisplayName("CclLogisticRegression matches MLlib's LogisticRegression")
@Timeout(300)
class CclLogisticRegressionTest {
  private static SparkSession spark;

  @BeforeAll
  static void startSpark() {
    spark = TestData.spark(2, "CclLogisticRegressionTest");
  }

  @AfterAll
  static void stopSpark() {
    spark.stop();
  }

  /** One comparison: the data's classes and MLlib's settings. */
  record Case(
      String name,
      int classes,
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
        new Case("binomial, L2", 2, 0.01, 0.0, true, true, false),
        new Case("multinomial K=3, L2", 3, 0.01, 0.0, true, true, false),
        new Case("binomial, elastic net", 2, 0.02, 0.5, true, true, false),
        new Case("multinomial, elastic net, no standardization", 3, 0.01, 0.7, true, false, false),
        new Case("binomial, weights, no intercept", 2, 0.005, 0.0, false, true, true),
        new Case("multinomial, unregularized, weights", 3, 0.0, 0.0, true, true, true));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  void theCoefficientsObjectiveAndQualityAgreeWithMllib(Case c) {
    Dataset<Row> data = TestData.classification(spark, 6000, 12, c.classes(), 2, 7 + c.classes());
    LogisticRegression mllib =
        new LogisticRegression()
            .setRegParam(c.regParam())
            .setElasticNetParam(c.elasticNet())
            .setFitIntercept(c.intercept())
            .setStandardization(c.standardization());
    CclLogisticRegression ccl =
        new CclLogisticRegression()
            .setRegParam(c.regParam())
            .setElasticNetParam(c.elasticNet())
            .setFitIntercept(c.intercept())
            .setStandardization(c.standardization())
            .setNumWorkers(2);
    if (c.weighted()) {
      mllib.setWeightCol("weight");
      ccl.setWeightCol("weight");
    }
    LogisticRegressionModel expected = mllib.fit(data);
    CclLogisticRegressionModel got = ccl.fit(data);

    double[] want = expected.coefficientMatrix().toArray();
    double[] have = got.coefficientMatrix().toArray();
    assertTrue(
        TestData.relativeDistance(have, want) <= 1e-4,
        "coefficients differ by " + TestData.relativeDistance(have, want) + " (relative)");
    assertArrayEquals(
        expected.interceptVector().toArray(),
        got.interceptVector().toArray(),
        1e-4 * Math.max(1, norm(expected.interceptVector().toArray())),
        "intercepts");
    if (c.elasticNet() > 0) {
      for (int i = 0; i < want.length; i++) {
        assertEquals(want[i] == 0.0, have[i] == 0.0, "zero pattern at " + i);
      }
    }
    double[] wantHistory = expected.summary().objectiveHistory();
    double[] haveHistory = got.summary().objectiveHistory();
    double wantLoss = wantHistory[wantHistory.length - 1];
    double haveLoss = haveHistory[haveHistory.length - 1];
    System.out.printf(
        "%s: coefficients %.2e apart (relative), objective %.2e apart, iterations %d / %d"
            + " (SparkCCL / MLlib)%n",
        c,
        TestData.relativeDistance(have, want),
        Math.abs(haveLoss - wantLoss) / wantLoss,
        got.summary().totalIterations(),
        expected.summary().totalIterations());
    assertEquals(wantLoss, haveLoss, 1e-6 * Math.abs(wantLoss), "final objective");

    Dataset<Row> wantScored = expected.transform(data);
    Dataset<Row> haveScored = got.transform(data);
    if (c.classes() == 2) {
      BinaryClassificationEvaluator auc = new BinaryClassificationEvaluator();
      assertEquals(auc.evaluate(wantScored), auc.evaluate(haveScored), 0.001, "AUC");
    }
    MulticlassClassificationEvaluator accuracy =
        new MulticlassClassificationEvaluator().setMetricName("accuracy");
    assertEquals(accuracy.evaluate(wantScored), accuracy.evaluate(haveScored), 0.001, "accuracy");
    data.unpersist();
  }

  private static double norm(double[] v) {
    double s = 0;
    for (double x : v) {
      s += x * x;
    }
    return Math.sqrt(s);
  }
}
