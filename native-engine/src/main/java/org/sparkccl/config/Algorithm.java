package org.sparkccl.config;

/** The algorithm of a collective (key {@code algo}); the tuner turns {@code AUTO} into one. */
public enum Algorithm {
  /** The tuner picks per call from its cost model. */
  AUTO,
  RING,
  TREE,
  /**
   * Recursive doubling: allReduce, and allGather with a power-of-two rank count (other collectives,
   * and allGathers it cannot run, run as rings).
   */
  RD,
  /**
   * Rabenseifner's allReduce: reduce-scatter by recursive halving, then allGather by recursive
   * doubling; reduceScatter by recursive halving alone (power-of-two rank counts, inputs up to 64
   * MiB). Other collectives, and reduceScatters it cannot run, run as rings.
   */
  RH;

  @Override
  public String toString() {
    return Values.lowerName(this);
  }
}
