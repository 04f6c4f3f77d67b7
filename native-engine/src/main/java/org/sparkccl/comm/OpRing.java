package org.sparkccl.comm;

import org.sparkccl.proxy.ProxyOp;

/**
 * The last few proxy operations of one direction of a ring channel or a point-to-point link, so
 * that a launch restarts one the proxy has finished with instead of making a new one: back-to-back
 * collectives then allocate no operations. An operation still held by the proxy (collectives
 * launched faster than they finish, or a link used twice in one collective) is left alone and a new
 * one takes its place. Used under the launch lock only.
 *
 * @param <T> the operation's class
 */
final class OpRing<T extends ProxyOp> {
  /** Operations kept: more than collectives usually in flight on one direction. */
  private static final int DEPTH = 4;

  private final ProxyOp[] ops = new ProxyOp[DEPTH];
  private int next;

  /** A finished operation to restart, or null: then make one and {@link #keep} it. */
  @SuppressWarnings("unchecked") // only keep() stores, and only a T
  T reusable() {
    ProxyOp op = ops[next];
    if (op != null && op.isUnlinked()) {
      next = (next + 1) % DEPTH;
      return (T) op;
    }
    return null;
  }

  /** Keeps a new operation for reuse. */
  void keep(T op) {
    ops[next] = op;
    next = (next + 1) % DEPTH;
  }
}
