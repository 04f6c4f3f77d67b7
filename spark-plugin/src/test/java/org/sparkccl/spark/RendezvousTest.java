package org.sparkccl.spark;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

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

  /** A post's bytes as the executor writes them, with each field chosen by the test. */
  private static byte[] post(String key, int rank, int nRanks, int length, byte[] payload) {
    java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
    try (java.io.DataOutputStream out = new java.io.DataOutputStream(bytes)) {
      out.writeUTF(key);
      out.writeInt(rank);
      out.writeInt(nRanks);
      out.writeInt(length);
      out.write(payload);
    } catch (java.io.IOException e) {
      throw new AssertionError(e);
    }
    return bytes.toByteArray();
  }

  @Test
  void malformedPostsAreRefusedBeforeAnythingIsAllocatedOrHeld() {
    Rendezvous rv = new Rendezvous();
    byte[] small = {1, 2, 3};
    int[][] ranks = {{-1, 2}, {2, 2}, {0, 0}, {0, -5}, {0, Integer.MAX_VALUE}, {0, 1 << 20}};
    for (int[] r : ranks) {
      IllegalArgumentException e =
          assertThrows(
              IllegalArgumentException.class,
              () -> Rendezvous.Post.decode(post("k", r[0], r[1], 3, small)));
      assertTrue(e.getMessage().contains("expected 0 <= rank < ranks"), e.getMessage());
      assertThrows(
          IllegalArgumentException.class,
          () -> rv.handle(new Rendezvous.Post("k", r[0], r[1], small)),
          "rank " + r[0] + " of " + r[1]);
    }
    for (int length : new int[] {-1, Integer.MIN_VALUE, 4, 1 << 30, Integer.MAX_VALUE}) {
      IllegalArgumentException e =
          assertThrows(
              IllegalArgumentException.class,
              () -> Rendezvous.Post.decode(post("k", 0, 2, length, small)));
      assertTrue(e.getMessage().contains("payload of " + length + " bytes"), e.getMessage());
    }
    assertEquals(0, rv.size(), "nothing refused left an entry");
    // every truncation of a good post, and trailing bytes, are refused
    byte[] good = post("7.0#0", 0, 2, 3, small);
    for (int cut = 0; cut < good.length; cut++) {
      byte[] truncated = java.util.Arrays.copyOf(good, cut);
      assertThrows(IllegalArgumentException.class, () -> Rendezvous.Post.decode(truncated));
    }
    byte[] longer = java.util.Arrays.copyOf(good, good.length + 1);
    assertThrows(IllegalArgumentException.class, () -> Rendezvous.Post.decode(longer));
    // random bytes never escape as anything but IllegalArgumentException
    SplittableRandom rnd = new SplittableRandom(11);
    for (int i = 0; i < 5_000; i++) {
      byte[] junk = new byte[rnd.nextInt(40)];
      rnd.nextBytes(junk);
      try {
        Rendezvous.Post p = Rendezvous.Post.decode(junk);
        assertTrue(p.payload().length <= junk.length, "a payload no longer than the message");
      } catch (IllegalArgumentException expected) {
        // refused
      }
      try {
        Rendezvous.Reply.decode(junk);
      } catch (IllegalArgumentException expected) {
        // refused
      }
    }
  }

  @Test
  void aReplyCountTheMessageCannotHoldIsRefused() {
    for (int n : new int[] {-1, Integer.MAX_VALUE, 1 << 20, 3}) {
      byte[] reply = java.nio.ByteBuffer.allocate(1 + 4 + 8).put((byte) 1).putInt(n).array();
      IllegalArgumentException e =
          assertThrows(IllegalArgumentException.class, () -> Rendezvous.Reply.decode(reply));
      assertTrue(e.getMessage().contains(n + " entries"), e.getMessage());
    }
  }
}
