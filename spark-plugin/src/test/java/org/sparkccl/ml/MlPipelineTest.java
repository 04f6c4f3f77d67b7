package org.sparkccl.ml;

import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.lit;
import static org.apache.spark.sql.functions.when;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.spark.BarrierTaskContext;
import org.apache.spark.SparkConf;
import org.apache.spark.TaskContext;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.function.FlatMapFunction;
import org.apache.spark.ml.Pipeline;
import org.apache.spark.ml.PipelineModel;
import org.apache.spark.ml.PipelineStage;
import org.apache.spark.ml.classification.LogisticRegression;
import org.apache.spark.ml.evaluation.BinaryClassificationEvaluator;
import org.apache.spark.ml.feature.VectorAssembler;
import org.apache.spark.ml.functions;
import org.apache.spark.ml.param.ParamMap;
import org.apache.spark.ml.tuning.CrossValidator;
import org.apache.spark.ml.tuning.CrossValidatorModel;
import org.apache.spark.ml.tuning.ParamGridBuilder;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.sparkccl.ml.classification.CclLogisticRegression;
import org.sparkccl.ml.classification.CclLogisticRegressionModel;
import org.sparkccl.ml.regression.CclLinearRegression;
import org.sparkccl.ml.regression.CclLinearRegressionModel;
import org.sparkccl.ml.train.BarrierTrainer;

/**
 * The estimators inside MLlib's machinery: pipelines, cross-validation, persistence; the checks the
 * driver makes before a stage starts; and a stage whose first attempt fails.
 */
@DisplayName("SparkCCL estimators in pipelines, persistence, checks and retries")
@Timeout(300)
class MlPipelineTest {
  private static SparkSession spark;
  private static Dataset<Row> data;

  @BeforeAll
  static void startSpark() {
    spark = TestData.spark(2, "MlPipelineTest");
    data = TestData.classification(spark, 3000, 6, 2, 2, 3);
  }

  @AfterAll
  static void stopSpark() {
    spark.stop();
  }

  /** The features as separate columns a, b, c, ... for a VectorAssembler to put together. */
  private static Dataset<Row> columns() {
    Dataset<Row> arrays =
        data.withColumn("x", functions.vector_to_array(col("features"), "float64"));
    for (int j = 0; j < 6; j++) {
      arrays = arrays.withColumn("c" + j, col("x").getItem(j));
    }
    return arrays.drop("x", "features");
  }

  private static Pipeline pipeline(PipelineStage classifier) {
    VectorAssembler assembler =
        new VectorAssembler()
            .setInputCols(new String[] {"c0", "c1", "c2", "c3", "c4", "c5"})
            .setOutputCol("features");
    return new Pipeline().setStages(new PipelineStage[] {assembler, classifier});
  }

  private static CrossValidatorModel crossValidate(PipelineStage classifier, ParamMap[] grid) {
    return new CrossValidator()
        .setEstimator(pipeline(classifier))
        .setEstimatorParamMaps(grid)
        .setEvaluator(new BinaryClassificationEvaluator())
        .setNumFolds(2)
        .setSeed(42)
        .fit(columns());
  }

  @Test
  void crossValidationOverRegParamInAPipelineScoresAsMllibDoes() {
    CclLogisticRegression ccl = new CclLogisticRegression();
    LogisticRegression mllib = new LogisticRegression();
    double[] regs = {0.001, 0.3};
    CrossValidatorModel got =
        crossValidate(ccl, new ParamGridBuilder().addGrid(ccl.regParam(), regs).build());
    CrossValidatorModel want =
        crossValidate(mllib, new ParamGridBuilder().addGrid(mllib.regParam(), regs).build());
    assertArrayEquals(want.avgMetrics(), got.avgMetrics(), 0.001, "AUC per regParam");
    PipelineModel best = (PipelineModel) got.bestModel();
    assertInstanceOf(CclLogisticRegressionModel.class, best.stages()[1]);
  }

  @Test
  void aPipelineModelWithTheModelSavesAndLoads(@TempDir Path dir) throws Exception {
    PipelineModel model = pipeline(new CclLogisticRegression().setRegParam(0.01)).fit(columns());
    String path = dir.resolve("pipeline").toString();
    model.write().overwrite().save(path);
    PipelineModel loaded = PipelineModel.load(path);
    assertInstanceOf(CclLogisticRegressionModel.class, loaded.stages()[1]);
    List<Row> before =
        model.transform(columns()).select("probability", "prediction").collectAsList();
    List<Row> after =
        loaded.transform(columns()).select("probability", "prediction").collectAsList();
    assertEquals(before, after);
  }

  @Test
  void estimatorsAndModelsRoundTripThroughSaveAndLoad(@TempDir Path dir) throws Exception {
    CclLogisticRegression lr =
        new CclLogisticRegression().setRegParam(0.02).setFamily("multinomial").setNumWorkers(2);
    lr.write().save(dir.resolve("lr").toString());
    CclLogisticRegression lr2 = CclLogisticRegression.load(dir.resolve("lr").toString());
    assertEquals(lr.uid(), lr2.uid());
    assertEquals(0.02, lr2.getRegParam());
    assertEquals("multinomial", lr2.getFamily());
    assertEquals(2, lr2.getNumWorkers());

    CclLogisticRegressionModel m = lr.fit(data).setThreshold(0.4);
    m.write().save(dir.resolve("lrm").toString());
    CclLogisticRegressionModel m2 = CclLogisticRegressionModel.load(dir.resolve("lrm").toString());
    assertEquals(m.coefficientMatrix(), m2.coefficientMatrix());
    assertEquals(m.interceptVector(), m2.interceptVector());
    assertEquals(0.4, (Double) m2.getOrDefault(m2.threshold()));
    assertTrue(m2.isMultinomial());

    CclLinearRegressionModel r = new CclLinearRegression().setRegParam(0.1).fit(data);
    r.write().save(dir.resolve("linm").toString());
    CclLinearRegressionModel r2 = CclLinearRegressionModel.load(dir.resolve("linm").toString());
    assertEquals(r.coefficients(), r2.coefficients());
    assertEquals(r.intercept(), r2.intercept());
  }

  @Test
  void badInputsFailOnTheDriverWithAMessage() {
    CclLogisticRegression lr = new CclLogisticRegression();
    assertMessage("empty", () -> lr.fit(data.limit(0)));
    assertMessage(
        "label",
        () -> lr.fit(data.withColumn("label", when(col("label").equalTo(1), 2.5).otherwise(0.0))));
    assertMessage("label", () -> lr.fit(data.withColumn("label", lit(Double.NaN))));
    assertMessage(
        "weight", () -> lr.setWeightCol("weight").fit(data.withColumn("weight", lit(-1.0))));
    assertMessage(
        "weights sum", () -> lr.setWeightCol("weight").fit(data.withColumn("weight", lit(0.0))));
    lr.setWeightCol("");
    assertMessage("task slots", () -> lr.setNumWorkers(3).fit(data));
    SparkConf dynamic = new SparkConf().set("spark.dynamicAllocation.enabled", "true");
    assertMessage("dynamicAllocation", () -> BarrierTrainer.workers(dynamic, 2, 2));
  }

  private static void assertMessage(String part, org.junit.jupiter.api.function.Executable fit) {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, fit);
    assertTrue(e.getMessage().contains(part), "'" + part + "' in: " + e.getMessage());
  }

  @Test
  void inputsOfAnotherShapeAreRepartitionedToTheWorkers() {
    CclLogisticRegression lr = new CclLogisticRegression().setRegParam(0.01);
    double[] want = lr.setNumWorkers(2).fit(data).coefficientMatrix().toArray();
    // the same rows as a union of two one-partition halves (two partitions, as the workers, but
    // a chain Spark cannot run as a barrier stage), in three partitions, and on one worker
    Dataset<Row> union =
        data.filter(col("label").equalTo(0))
            .coalesce(1)
            .union(data.filter(col("label").equalTo(1)).coalesce(1));
    Exception rejected =
        assertThrows(
            Exception.class,
            () ->
                union
                    .toJavaRDD()
                    .rdd()
                    .barrier()
                    .mapPartitions(
                        new IdentityFunction(),
                        false,
                        scala.reflect.ClassTag$.MODULE$.apply(Row.class))
                    .count());
    assertTrue(rejected.getMessage().contains("RDD chain"), rejected.toString());
    List<double[]> got =
        List.of(
            lr.setNumWorkers(2).fit(union).coefficientMatrix().toArray(),
            lr.setNumWorkers(2).fit(data.repartition(3)).coefficientMatrix().toArray(),
            lr.setNumWorkers(1).fit(data).coefficientMatrix().toArray());
    for (double[] have : got) {
      double distance = TestData.relativeDistance(have, want);
      assertTrue(distance < 1e-8, "coefficients " + distance + " apart (relative)");
    }
  }

  /** A stage function that passes its rows on. */
  private static final class IdentityFunction
      extends scala.runtime.AbstractFunction1<
          scala.collection.Iterator<Row>, scala.collection.Iterator<Row>>
      implements java.io.Serializable {
    @Override
    public scala.collection.Iterator<Row> apply(scala.collection.Iterator<Row> rows) {
      return rows;
    }
  }

  /** Throws in the first barrier task that reads partition 0, once per JVM. */
  private static final AtomicBoolean ARMED = new AtomicBoolean();

  @Test
  void aStageWhoseFirstAttemptFailsIsRetriedAndGivesTheSameModel() {
    CclLogisticRegression lr = new CclLogisticRegression().setRegParam(0.01).setNumWorkers(2);
    CclLogisticRegressionModel clean = lr.fit(data);
    JavaRDD<Row> failing =
        data.toJavaRDD()
            .mapPartitions((FlatMapFunction<Iterator<Row>, Row>) MlPipelineTest::failOnce, true);
    Dataset<Row> flaky = spark.createDataFrame(failing, data.schema());
    ARMED.set(true);
    CclLogisticRegressionModel retried = lr.fit(flaky);
    assertTrue(!ARMED.get(), "the first attempt failed");
    assertEquals(clean.coefficientMatrix(), retried.coefficientMatrix());
    assertEquals(clean.interceptVector(), retried.interceptVector());
  }

  private static Iterator<Row> failOnce(Iterator<Row> rows) {
    TaskContext task = TaskContext.get();
    if (task instanceof BarrierTaskContext
        && task.partitionId() == 0
        && ARMED.compareAndSet(true, false)) {
      throw new IllegalStateException("injected failure of the first attempt");
    }
    return rows;
  }
}
