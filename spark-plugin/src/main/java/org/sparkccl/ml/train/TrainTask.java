package org.sparkccl.ml.train;

import java.io.Serializable;
import java.time.Duration;
import java.util.Collections;
import java.util.List;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.apache.spark.BarrierTaskContext;
import org.apache.spark.sql.Row;
import org.sparkccl.Communicator;
import org.sparkccl.spark.SparkCCL;
import scala.jdk.javaapi.CollectionConverters;
import scala.runtime.AbstractFunction1;

/**
 * One barrier task of a fit: packs its rows, joins the stage's communicator and trains. Rank 0
 * returns the fit as bytes; the other ranks return nothing.
 */
final class TrainTask
    extends AbstractFunction1<scala.collection.Iterator<Row>, scala.collection.Iterator<byte[]>>
    implements Serializable {
  private static final Logger LOG = LogManager.getLogger(TrainTask.class);

  private final TrainSpec spec;
  private final long submittedMillis;

  TrainTask(TrainSpec spec, long submittedMillis) {
    this.spec = spec;
    this.submittedMillis = submittedMillis;
  }

  @Override
  public scala.collection.Iterator<byte[]> apply(scala.collection.Iterator<Row> input) {
    BarrierTaskContext context = BarrierTaskContext.get();
    double launch = System.currentTimeMillis() - submittedMillis;
    long t0 = System.nanoTime();
    int d = spec.numFeatures();
    List<Block> blocks =
        Blocks.pack(
            CollectionConverters.asJava(input), d, Blocks.rowsPerBlock(spec.maxBlockSizeInMB(), d));
    long t1 = System.nanoTime();
    Duration timeout = spec.timeoutMillis() > 0 ? Duration.ofMillis(spec.timeoutMillis()) : null;
    Communicator comm = SparkCCL.communicator(context, timeout);
    long t2 = System.nanoTime();
    Fit fit;
    try (CommunicatorSum reducer = new CommunicatorSum(comm, Trainer.reduceCapacity(spec))) {
      fit = Trainer.train(spec, blocks, reducer);
    } catch (InputRejected e) {
      return CollectionConverters.asScala(
          comm.rank() == 0
              ? List.of(FitCodec.encodeRejection(e.getMessage())).iterator()
              : Collections.<byte[]>emptyIterator());
    }
    Timings timings = fit.timings().withLaunch(launch, Trainer.ms(t1 - t0), Trainer.ms(t2 - t1));
    LOG.info(
        "SparkCCL fit, rank {}/{} (stage attempt {}): {} iterations, {}",
        comm.rank(),
        comm.nRanks(),
        context.stageAttemptNumber(),
        fit.iterations(),
        timings);
    if (comm.rank() != 0) {
      return CollectionConverters.asScala(Collections.<byte[]>emptyIterator());
    }
    byte[] message = FitCodec.encode(fit.withTimings(timings), System.currentTimeMillis());
    return CollectionConverters.asScala(List.of(message).iterator());
  }
}
