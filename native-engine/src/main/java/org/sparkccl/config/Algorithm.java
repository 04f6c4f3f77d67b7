package org.sparkccl.config;

/** The algorithm of a collective (key {@code algo}); the tuner turns {@code AUTO} into one. */
public enum Algorithm {
  /** The tuner picks per call from its cost model. */
  AUTO,
  RING,
  TREE,
  /** Recursive doubling, for allReduce (other collectives run as rings). */
  RD,
  /**
   * Rabenseifner's allReduce: reduce-scatter by recursive halving, then allGather by recursive
   * doubling (other collectives run as rings).
   */
  RH;

  @Override
  public String toString() {
    return Values.lowerName(this);
  }
}
