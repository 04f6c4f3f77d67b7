package org.sparkccl.examples;

import java.io.Serializable;
import java.util.List;
import org.apache.spark.SparkEnv;
import org.sparkccl.memory.DirectMemory;
import scala.jdk.javaapi.CollectionConverters;
import scala.runtime.AbstractFunction1;

/**
 * What a barrier task sees of its executor: its id, the engine threads still alive and the engine's
 * off-heap bytes still allocated (waiting up to 10 s for both to drain, since the last stage's
 * tasks close their communicators as they finish).
 */
final class ExecutorProbe
    extends AbstractFunction1<scala.collection.Iterator<Integer>, scala.collection.Iterator<String>>
    implements Serializable {
  @Override
  public scala.collection.Iterator<String> apply(scala.collection.Iterator<Integer> input) {
    long deadline = System.nanoTime() + 10_000_000_000L;
    long threads;
    long bytes;
    do {
      threads =
          Thread.getAllStackTraces().keySet().stream()
              .filter(t -> t.getName().startsWith("sparkccl-"))
              .count();
      bytes = DirectMemory.outstandingBytes();
      if (threads == 0 && bytes == 0) {
        break;
      }
      try {
        Thread.sleep(50);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        break;
      }
    } while (System.nanoTime() < deadline);
    String line = SparkEnv.get().executorId() + " threads=" + threads + " offHeapBytes=" + bytes;
    return CollectionConverters.asScala(List.of(line).iterator());
  }
}
