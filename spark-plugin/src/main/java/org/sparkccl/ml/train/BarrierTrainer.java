package org.sparkccl.ml.train;

import java.util.List;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.apache.spark.Dependency;
import org.apache.spark.NarrowDependency;
import org.apache.spark.SparkConf;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.rdd.RDD;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.sparkccl.spark.SparkCCL;
import scala.jdk.javaapi.CollectionConverters;
import scala.reflect.ClassTag;
import scala.reflect.ClassTag$;

/**
 * Runs a fit as one barrier stage on the driver's behalf. The stage ends in a shuffle (the result
 * goes through {@code repartition(1)}) so that it is a shuffle-map stage, which Spark retries as a
 * whole when a task fails; a failed barrier result stage would fail the job.
 *
 * <pre>{@code
 * int workers = BarrierTrainer.workers(spark.sparkContext().getConf(), 0, 4);
 * Fit fit = BarrierTrainer.fit(rows, spec, workers);
 * }</pre>
 */
public final class BarrierTrainer {
  private static final Logger LOG = LogManager.getLogger(BarrierTrainer.class);

  private BarrierTrainer() {}

  /**
   * The number of barrier tasks for {@code requested} (0: the application's task slots where the
   * master tells them, else the input's partitions); fails, saying what to change, where the
   * application cannot run that many tasks at once.
   */
  public static int workers(SparkConf conf, int requested, int inputPartitions) {
    if (conf.getBoolean("spark.dynamicAllocation.enabled", false)) {
      throw new IllegalArgumentException(
          "SparkCCL estimators train in one barrier stage, which needs a static set of executors;"
              + " set spark.dynamicAllocation.enabled=false");
    }
    int slots = SparkCCL.knownSlots(conf, conf.get("spark.master", ""));
    int workers = requested > 0 ? requested : (slots > 0 ? slots : inputPartitions);
    SparkCCL.checkSlots(conf, workers);
    return workers;
  }

  /**
   * Trains {@code spec} on {@code rows} (columns: label double, weight double, features vector)
   * with {@code workers} barrier tasks, repartitioning the rows (with a shuffle) when they come in
   * another number of partitions or from a chain Spark does not run as a barrier stage.
   */
  public static Fit fit(Dataset<Row> rows, TrainSpec spec, int workers) {
    JavaRDD<Row> input = rows.toJavaRDD();
    if (!stageFits(input.rdd(), workers)) {
      input = input.repartition(workers);
    }
    long submitted = System.currentTimeMillis();
    RDD<byte[]> trained =
        input.rdd().barrier().mapPartitions(new TrainTask(spec, submitted), false, bytesTag());
    List<byte[]> results = JavaRDD.fromRDD(trained, bytesTag()).repartition(1).collect();
    long done = System.currentTimeMillis();
    if (results.size() != 1) {
      throw new IllegalStateException(
          "the barrier stage returned " + results.size() + " models; expected rank 0's only");
    }
    FitCodec.Message message = FitCodec.decode(results.get(0));
    Fit fit = message.fit();
    Fit timed =
        fit.withTimings(fit.timings().withResult((double) (done - message.taskEndMillis())));
    LOG.info(
        "SparkCCL fit on {} workers: {} iterations in {} ms ({})",
        workers,
        timed.iterations(),
        done - submitted,
        timed.timings());
    return timed;
  }

  /**
   * Whether {@code rdd} can run as the barrier stage as it is: Spark requires every RDD of the
   * stage (the chain back to the previous shuffle) to have the stage's partition count, which rules
   * out, say, a union or a coalesce without shuffle upstream.
   */
  static boolean stageFits(RDD<?> rdd, int workers) {
    if (rdd.getNumPartitions() != workers) {
      return false;
    }
    for (Dependency<?> dep : CollectionConverters.asJava(rdd.dependencies())) {
      if (dep instanceof NarrowDependency<?> && !stageFits(dep.rdd(), workers)) {
        return false;
      }
    }
    return true;
  }

  private static ClassTag<byte[]> bytesTag() {
    return ClassTag$.MODULE$.apply(byte[].class);
  }
}
