package org.sparkccl.comm;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.sparkccl.CclMismatchException;

/**
 * Compares this rank's collective calls with what peers announce (see {@code
 * RecvConnection.announce}): the calls launched recently, by sequence number, and announcements
 * that arrived before this rank launched their number.
 */
final class CallChecker {
  private static final int HISTORY = 1024;

  private final int rank;
  private final boolean checks;

  /** The last {@link #HISTORY} launched calls, call {@code seq} at {@code seq % HISTORY}. */
  private final CollectiveCall[] launched = new CollectiveCall[HISTORY];

  private final List<Announced> early = new ArrayList<>();
  private final AtomicLong lastAnnounced = new AtomicLong();
  private long lastLaunched;

  private record Announced(int peer, CollectiveCall call) {}

  /**
   * @param checks whether calls are compared at all (key {@code checkCalls}); when not, nothing is
   *     recorded and announcements are ignored
   */
  CallChecker(int rank, boolean checks) {
    this.rank = rank;
    this.checks = checks;
  }

  /** Whether calls are compared (key {@code checkCalls}). */
  boolean checks() {
    return checks;
  }

  /**
   * A peer announced the collective it is about to receive for: it must be ours of that number.
   * Called on the proxy thread.
   *
   * @throws CclMismatchException when it is not
   */
  void onAnnounce(int peer, CollectiveCall theirs) {
    if (theirs.kind() == CollectiveCall.Kind.SEND_RECV || !checks) {
      return;
    }
    CollectiveCall mine;
    synchronized (this) {
      mine = launchedCall(theirs.seq());
      if (mine == null) {
        if (theirs.seq() > lastLaunched) {
          early.add(new Announced(peer, theirs));
        }
        return;
      }
    }
    if (!mine.matches(theirs)) {
      throw mismatch(peer, theirs, rank, mine);
    }
  }

  /** Records a launched call; returns the mismatch an earlier announcement reveals, if any. */
  synchronized CclMismatchException recordLaunch(CollectiveCall call) {
    if (!checks) {
      return null;
    }
    launched[slot(call.seq())] = call;
    lastLaunched = call.seq();
    if (early.isEmpty()) {
      return null; // the usual case, without an iterator
    }
    CclMismatchException found = null;
    for (Iterator<Announced> it = early.iterator(); it.hasNext(); ) {
      Announced a = it.next();
      if (a.call().seq() <= call.seq()) {
        it.remove();
        if (a.call().seq() == call.seq() && !call.matches(a.call()) && found == null) {
          found = mismatch(a.peer(), a.call(), rank, call);
        }
      }
    }
    return found;
  }

  /** This rank's call number {@code seq}, if it is recent enough to be remembered. */
  synchronized CollectiveCall launched(long seq) {
    return launchedCall(seq);
  }

  private CollectiveCall launchedCall(long seq) {
    CollectiveCall c = launched[slot(seq)];
    return c != null && c.seq() == seq ? c : null;
  }

  private static int slot(long seq) {
    return (int) Math.floorMod(seq, (long) HISTORY);
  }

  /** Whether this rank should announce call {@code seq} now: true once per number. */
  boolean claimAnnouncement(long seq) {
    long last = lastAnnounced.get();
    while (seq > last) {
      if (lastAnnounced.compareAndSet(last, seq)) {
        return true;
      }
      last = lastAnnounced.get();
    }
    return false;
  }

  /** Rank {@code peer}'s call against rank {@code rank}'s of the same number. */
  static CclMismatchException mismatch(
      int peer, CollectiveCall theirs, int rank, CollectiveCall mine) {
    return new CclMismatchException(
        "rank "
            + peer
            + " called "
            + theirs.signature()
            + " as operation #"
            + theirs.seq()
            + " but rank "
            + rank
            + " called "
            + mine.signature()
            + " as operation #"
            + mine.seq());
  }
}
