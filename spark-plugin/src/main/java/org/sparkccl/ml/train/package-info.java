/**
 * The trainer behind {@code org.sparkccl.ml}'s estimators, not an API of its own: the driver's
 * checks ({@link org.sparkccl.ml.train.DatasetChecks}), the barrier stage ({@link
 * org.sparkccl.ml.train.BarrierTrainer}) and, inside each task, the blocks, the summary all-reduce,
 * MLlib's losses and the optimizer with one all-reduce per loss evaluation.
 *
 * <pre>{@code
 * Dataset<Row> rows = TrainingRows.select(dataset, "label", null, "features");
 * DatasetChecks checks = DatasetChecks.run(rows, true);
 * TrainSpec spec = new TrainSpec(TrainSpec.Loss.BINOMIAL, checks.numFeatures(), 2, true, true,
 *     0.01, 0.0, 100, 1e-6, 0.0, 0);
 * Fit fit = BarrierTrainer.fit(rows, spec, BarrierTrainer.workers(conf, 0, 4));
 * }</pre>
 */
package org.sparkccl.ml.train;
