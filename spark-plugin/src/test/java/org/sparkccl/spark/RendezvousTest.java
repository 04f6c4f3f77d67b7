package org.sparkccl.spark;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class RendezvousTest {
  private static byte[] random(SplittableRandom rnd) {
    byte[] b = new byte[1 + rnd.nextInt(64)];
    rnd.nextBytes(b);
    return b;
  }

  @Test
  void answersWithEveryRanksBytesOnceAllPostedAndThenForgetsTheEntry() {
    Rendezvous rv = new Rendezvous();
    SplittableRandom rnd = new SplittableRandom(3);
    byte[][] mine = {random(rnd), random(rnd), random(rnd)};
    Rendezvous.Reply first = rv.handle(new Rendezvous.Post("7.0#0", 1, 3, mine[1]));
    assertNull(first.all());
    assertEquals(List.of(0, 2), first.missing());
    // a re-post is idempotent
    assertEquals(List.of(0, 2), rv.handle(new Rendezvous.Post("7.0#0", 1, 3, mine[1])).missing());
    byte[] waiting = rv.handle(new Rendezvous.Post("7.0#0", 2, 3, mine[2])).encode();
    assertEquals(List.of(0), Rendezvous.Reply.decode(waiting).missing());
    for (int r : new int[] {0, 1, 2}) {
      // through the wire format, as between executor and driver
      byte[] wire = new Rendezvous.Post("7.0#0", r, 3, mine[r]).encode();
      Rendezvous.Reply done =
          Rendezvous.Reply.decode(rv.handle(Rendezvous.Post.decode(wire)).encode());
      for (int k = 0; k < 3; k++) {
        assertArrayEquals(mine[k], done.all()[k], "rank " + r + " sees rank " + k);
      }
    }
    assertEquals(0, rv.size(), "the entry is dropped once every rank has its answer");
  }

  @Test
  void keysOfOtherAttemptsAreSeparateAndBadRanksAreRefused() {
    Rendezvous rv = new Rendezvous();
    rv.handle(new Rendezvous.Post("7.0#0", 0, 2, new byte[] {1}));
    // the retry (stage attempt 1) does not meet the first attempt's rank 0
    assertEquals(
        List.of(0), rv.handle(new Rendezvous.Post("7.1#0", 1, 2, new byte[] {2})).missing());
    assertEquals(2, rv.size());
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> rv.handle(new Rendezvous.Post("7.0#0", 1, 3, new byte[] {3})));
    assertEquals(
        "rendezvous 7.0#0: rank 1 of 3 does not fit the 2 ranks seen first", e.getMessage());
  }
}
