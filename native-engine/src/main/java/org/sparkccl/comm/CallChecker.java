package org.sparkccl.comm;

import java.util.ArrayDeque;
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

  /**
   * Per peer, the calls it announced that this rank has not launched yet, oldest first (a rank
   * announces each number once, in order, on one connection). One queue per peer, not one list: a
   * broadcast's root or a reduce's leaf never waits for its receivers, so it can run thousands of
   * calls ahead (as many as the socket buffers hold), and launches that walked every early
   * announcement made 8 B broadcasts and reduces over sockets 2.4-2.9x slower with the check on.
   */
  private final ArrayDeque<CollectiveCall>[] early;

  /** Calls queued in {@link #early}, all peers together: a launch with none looks at no queue. */
  private int earlyCount;

  private final AtomicLong lastAnnounced = new AtomicLong();
  private long lastLaunched;

  /**
   * @param nRanks ranks of the communicator (the announcing peers are among them)
   * @param checks whether calls are compared at all (key {@code checkCalls}); when not, nothing is
   *     recorded and announcements are ignored
   */
  @SuppressWarnings({"unchecked", "rawtypes"}) // an array of a generic type: no other spelling
  CallChecker(int rank, int nRanks, boolean checks) {
    this.rank = rank;
    this.checks = checks;
    this.early = new ArrayDeque[nRanks];
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
          if (early[peer] == null) {
            early[peer] = new ArrayDeque<>();
          }
          early[peer].add(theirs);
          earlyCount++;
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
    CclMismatchException found = null;
    for (int peer = 0; earlyCount > 0 && peer < early.length; peer++) {
      ArrayDeque<CollectiveCall> queue = early[peer];
      CollectiveCall theirs;
      while (queue != null && (theirs = queue.peekFirst()) != null && theirs.seq() <= call.seq()) {
        queue.pollFirst();
        earlyCount--;
        if (theirs.seq() == call.seq() && !call.matches(theirs) && found == null) {
          found = mismatch(peer, theirs, rank, call);
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
