package org.sparkccl.comm;

import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Random;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.sparkccl.CclMismatchException;

/**
 * The comparison of this rank's calls with what peers announce. A peer that only sends (a
 * broadcast's root) runs far ahead of this rank, so most announcements arrive before their launch
 * and wait in per-peer queues until it: each must be compared with the launch of its number, once.
 */
@DisplayName("the call checker")
class CallCheckerTest {
  private static final int RANK = 2;
  private static final int RANKS = 5;

  @Test
  @DisplayName("finds the one mismatch among thousands of calls two peers announced far ahead")
  void findsAMismatchAnnouncedFarAhead() {
    Random random = new Random(20261203);
    int calls = 20_000;
    CollectiveCall[] mine = new CollectiveCall[calls + 1];
    for (int seq = 1; seq <= calls; seq++) {
      mine[seq] = randomCall(random, seq);
    }
    long wrongSeq = 1L + random.nextInt(calls);
    int wrongPeer = 4;
    CallChecker checker = new CallChecker(RANK, RANKS, true);
    for (int seq = 1; seq <= calls; seq++) {
      // peer 3 announces everything before this rank launches anything; peer 4 keeps 100 ahead
      checker.onAnnounce(3, mine[seq]);
    }
    for (int seq = 1; seq <= 100; seq++) {
      checker.onAnnounce(wrongPeer, announced(mine, seq, wrongSeq));
    }
    for (int seq = 1; seq <= calls; seq++) {
      if (seq + 100 <= calls) {
        checker.onAnnounce(wrongPeer, announced(mine, seq + 100, wrongSeq));
      }
      CclMismatchException e = checker.recordLaunch(mine[seq]);
      if (seq == wrongSeq) {
        assertNotNull(e, "the mismatch at #" + seq + " went unseen");
        assertTrue(e.getMessage().startsWith("rank " + wrongPeer + " called "), e.getMessage());
        assertTrue(e.getMessage().contains(mine[seq].signature()), e.getMessage());
      } else {
        assertNull(e, "launch #" + seq + " of matching calls");
      }
    }
  }

  @Test
  @DisplayName("compares a late announcement with the launched call, and an early one only once")
  void lateAndEarlyAnnouncements() {
    Random random = new Random(7);
    CallChecker checker = new CallChecker(RANK, RANKS, true);
    CollectiveCall first = randomCall(random, 1);
    CollectiveCall second = randomCall(random, 2);
    assertNull(checker.recordLaunch(first));
    checker.onAnnounce(0, first); // late and matching
    CollectiveCall otherFirst = differentRoot(first);
    CclMismatchException late =
        assertThrows(CclMismatchException.class, () -> checker.onAnnounce(1, otherFirst));
    assertTrue(late.getMessage().contains(otherFirst.signature()), late.getMessage());
    checker.onAnnounce(0, differentRoot(second)); // early and wrong: found at the launch of #2
    assertNotNull(checker.recordLaunch(second));
    assertNull(checker.recordLaunch(randomCall(random, 3)), "#2's announcement was consumed");
  }

  @Test
  @DisplayName("with checkCalls off, records nothing and compares nothing")
  void checksOff() {
    Random random = new Random(11);
    CallChecker checker = new CallChecker(RANK, RANKS, false);
    CollectiveCall call = randomCall(random, 1);
    checker.onAnnounce(0, differentRoot(call));
    assertNull(checker.recordLaunch(call));
    checker.onAnnounce(1, differentRoot(call));
    assertNull(checker.launched(1));
  }

  private static CollectiveCall announced(CollectiveCall[] mine, long seq, long wrongSeq) {
    CollectiveCall call = mine[(int) seq];
    return seq == wrongSeq ? differentRoot(call) : call;
  }

  private static CollectiveCall differentRoot(CollectiveCall c) {
    return new CollectiveCall(
        CollectiveCall.Kind.BROADCAST,
        c.seq(),
        c.count(),
        c.dtype(),
        c.op(),
        c.kind() == CollectiveCall.Kind.BROADCAST ? (c.root() + 1) % RANKS : 0);
  }

  private static CollectiveCall randomCall(Random random, long seq) {
    return RandomCalls.next(random, seq, RANKS);
  }
}
