package org.sparkccl.ml.optim

import breeze.linalg.{DenseVector => BDV}
import breeze.optimize.{CachedDiffFunction, DiffFunction, FirstOrderMinimizer, LBFGS, OWLQN}

/**
 * A differentiable loss, written in Java: breeze's `DiffFunction` cannot be implemented there
 * (its `apply` returns a primitive `double` for breeze and an `Object` for `Function1`).
 */
trait Objective {

  /** Returns the loss at `x` and writes its gradient into `gradient` (of `x`'s length). */
  def calculate(x: Array[Double], gradient: Array[Double]): Double
}

/**
 * Where a minimization ended: the solution, and the objective before the first step and after
 * every iteration, as MLlib reports it (`State.adjustedValue`).
 */
final class Minimum(val solution: Array[Double], val objectiveHistory: Array[Double])

/**
 * Breeze's LBFGS (or OWL-QN when an L1 penalty is given) with the history MLlib uses (10), so
 * the same objective follows the same path as MLlib's estimators.
 *
 * {{{
 * Minimum m = BreezeMinimizer.minimize(objective, new double[n], 100, 1e-6, null);
 * }}}
 */
object BreezeMinimizer {
  private val History = 10

  /**
   * @param l1 the L1 penalty of each coordinate (OWL-QN), or `null` for none (LBFGS)
   * @return the minimum; `null` when the optimizer made no step at all
   */
  def minimize(
      objective: Objective,
      start: Array[Double],
      maxIter: Int,
      tol: Double,
      l1: Array[Double]): Minimum = {
    val optimizer: FirstOrderMinimizer[BDV[Double], DiffFunction[BDV[Double]]] =
      if (l1 == null) {
        new LBFGS[BDV[Double]](maxIter, History, tol)
      } else {
        new OWLQN[Int, BDV[Double]](maxIter, History, (i: Int) => l1(i), tol)
      }
    val states =
      optimizer.iterations(new CachedDiffFunction(new JavaDiffFunction(objective)), BDV(start.clone()))
    val history = Array.newBuilder[Double]
    var solution: Array[Double] = null
    while (states.hasNext) {
      val state = states.next()
      history += state.adjustedValue
      solution = state.x.toArray
    }
    if (solution == null) null else new Minimum(solution, history.result())
  }
}

/** Breeze's view of an [[Objective]]: a fresh gradient per call, since breeze keeps them. */
private final class JavaDiffFunction(objective: Objective) extends DiffFunction[BDV[Double]] {
  override def calculate(x: BDV[Double]): (Double, BDV[Double]) = {
    val point =
      if (x.offset == 0 && x.stride == 1 && x.length == x.data.length) x.data else x.toArray
    val gradient = new Array[Double](x.length)
    val value = objective.calculate(point, gradient)
    (value, BDV(gradient))
  }
}
