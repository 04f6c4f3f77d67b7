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

  /** The plan kept for {@code call} under {@code algo}, in use or not; null when none is. */
  PeerPlan find(Algorithm algo, CollectiveCall call) {
    for (PeerPlan p : plans) {
      if (p != null && p.matches(algo, call)) {
        return p;
      }
    }
    return null;
  }

  /**
   * Keeps {@code plan} in place of {@code replaced} (the plan of the same shape, still in use), or,
   * with none, of the oldest.
   */
  void keep(PeerPlan plan, PeerPlan replaced) {
    for (int i = 0; i < SIZE && replaced != null; i++) {
      if (plans[i] == replaced) {
        plans[i] = plan;
        return;
      }
    }
    plans[next] = plan;
    next = (next + 1) % SIZE;
  }
}
