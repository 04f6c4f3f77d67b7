package org.sparkccl.spark;

import java.util.ArrayList;
import java.util.List;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import scala.collection.Iterator;
import scala.reflect.ClassTag$;
import scala.runtime.AbstractFunction1;

/** A barrier stage of {@code n} tasks in the tests: each runs {@code task} and returns lines. */
final class BarrierStage {
  private BarrierStage() {}

  /** The stage (not yet run) over partitions {@code 0..n-1}. */
  static JavaRDD<String> of(
      JavaSparkContext sc, int n, AbstractFunction1<Iterator<Integer>, Iterator<String>> task) {
    List<Integer> partitions = new ArrayList<>();
    for (int p = 0; p < n; p++) {
      partitions.add(p);
    }
    return sc.parallelize(partitions, n)
        .rdd()
        .barrier()
        .mapPartitions(task, false, ClassTag$.MODULE$.apply(String.class))
        .toJavaRDD();
  }
}
