package org.sparkccl.comm;

import org.sparkccl.config.Algorithm;

/**
 * The last few {@link PeerPlan}s, so that a loop that alternates a few collectives (a gradient and
 * a loss, say) reuses a plan for each. Looked up by scanning: a handful of entries, and a lookup
 * allocates nothing. Used under the launch lock only.
 */
final class PeerPlans {
  private static final int SIZE = 8;

  private final PeerPlan[] plans = new PeerPlan[SIZE];
  private int next;

  /** A plan for {@code call} under {@code algo} that a launch may re-arm now, or null. */
  PeerPlan reusable(Algorithm algo, CollectiveCall call) {
    for (PeerPlan p : plans) {
      if (p != null && p.matches(algo, call)) {
        return p.reusable() ? p : null;
      }
    }
    return null;
  }

  /**
   * Keeps {@code plan}: in place of one of the same shape (still in use, or it would have been
   * reused), else of the oldest.
   */
  void keep(PeerPlan plan) {
    for (int i = 0; i < SIZE; i++) {
      PeerPlan p = plans[i];
      if (p != null && p.sameShape(plan)) {
        plans[i] = plan;
        return;
      }
    }
    plans[next] = plan;
    next = (next + 1) % SIZE;
  }
}
