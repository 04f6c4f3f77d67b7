package org.sparkccl.comm;

import java.lang.invoke.VarHandle;
import org.sparkccl.CclMismatchException;
import org.sparkccl.transport.p2p.CallBoard;

/**
 * The mismatch check between ring neighbours that share memory ({@link CallBoard}): every launch
 * posts the call for both neighbours; a rank that would announce its call at once compares it with
 * the neighbours' calls of its number instead, and any collective that stalls compares then. Two
 * neighbours that both compare at launch post before they read (a full fence between), so at least
 * one sees the other's call; a rank that does not compare at launch waits for data the other never
 * sends when they differ, so it stalls and compares.
 *
 * <pre>{@code
 * NeighbourCalls n = new NeighbourCalls(rank, prevBoard, nextBoard);
 * n.post(call);
 * CclMismatchException e = n.compare(call); // null while they agree
 * }</pre>
 */
final class NeighbourCalls {
  private final int rank;
  private final CallBoard prev;
  private final CallBoard next;

  /**
   * @param prev the board shared with the previous rank, or null where that edge has none
   * @param next the board shared with the next rank, or null
   */
  NeighbourCalls(int rank, CallBoard prev, CallBoard next) {
    this.rank = rank;
    this.prev = prev;
    this.next = next;
  }

  /**
   * Whether the previous rank reads this rank's calls here: this rank then need not announce them
   * to it over the network.
   */
  boolean coversPrev() {
    return prev != null;
  }

  /** Posts this rank's call for both neighbours; allocates nothing. */
  void post(CollectiveCall call) {
    if (prev != null) {
      prev.post(call);
    }
    if (next != null) {
      next.post(call);
    }
  }

  /** The mismatch with a neighbour's posted call of the same number, or null. */
  CclMismatchException compare(CollectiveCall mine) {
    VarHandle.fullFence(); // this rank's post before its reads: see the class comment
    CclMismatchException e = compare(prev, mine);
    return e != null ? e : compare(next, mine);
  }

  private CclMismatchException compare(CallBoard board, CollectiveCall mine) {
    CollectiveCall theirs = board == null ? null : board.differingFrom(mine);
    return theirs == null ? null : CallChecker.mismatch(board.peer(), theirs, rank, mine);
  }
}
