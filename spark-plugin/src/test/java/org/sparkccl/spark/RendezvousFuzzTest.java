package org.sparkccl.spark;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.SplittableRandom;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The driver plugin's rendezvous decodes what executors send through Spark's RPC: the plugin sees a
 * {@code byte[]} and everything after that is ours. 10,000 random and mutated messages go through
 * the same path as {@code SparkCCLPlugin}'s {@code receive} (decode, handle, encode) while a real
 * 3-rank all-gather posts in between: each bad message is an {@code IllegalArgumentException},
 * never another exception or an allocation the message did not pay for, and the real all-gather
 * gets every rank's bytes.
 */
@DisplayName("the driver's rendezvous under random messages")
class RendezvousFuzzTest {
  /**
   * The real all-gather's key, unlike the mutated one's: a flipped bit in a key could otherwise
   * post as a real rank (whoever reaches the driver's RPC can; Spark's RPC authentication decides
   * who does).
   */
  private static final String REAL_KEY = "real-stage-12.0#0";

  private static final int[] EXTREMES = {
    -1, Integer.MIN_VALUE, Integer.MAX_VALUE, 1 << 30, 1 << 24, 0, 1, 2, 3
  };

  /** What the plugin's RPC endpoint does with a message. */
  private static byte[] receive(Rendezvous rv, byte[] message) {
    return rv.handle(Rendezvous.Post.decode(message)).encode();
  }

  @Test
  @DisplayName(
      "10,000 random and mutated posts are refused with IllegalArgumentException, and a real"
          + " all-gather amid them completes")
  void randomPostsAreRefusedAndARealAllGatherCompletes() {
    Rendezvous rv = new Rendezvous();
    SplittableRandom rnd = new SplittableRandom(16);
    byte[][] real = new byte[3][];
    for (int r = 0; r < 3; r++) {
      real[r] = new byte[1 + rnd.nextInt(300)];
      rnd.nextBytes(real[r]);
    }
    byte[] valid = new Rendezvous.Post("9.0#0", 1, 3, real[1]).encode();
    int refused = 0;
    int accepted = 0;
    for (int i = 0; i < 10_000; i++) {
      if (i % 2500 == 1000) {
        // a real rank posts between bad messages
        int r = i / 2500;
        if (r < 3) {
          receive(rv, new Rendezvous.Post(REAL_KEY, r, 3, real[r]).encode());
        }
      }
      byte[] message = mutate(valid, rnd);
      try {
        byte[] reply = receive(rv, message);
        Rendezvous.Reply.decode(reply);
        accepted++;
      } catch (IllegalArgumentException e) {
        refused++;
      }
      // a random reply must decode or be refused the same way (executors decode replies)
      try {
        Rendezvous.Reply.decode(mutate(valid, rnd));
      } catch (IllegalArgumentException e) {
        refused++;
      }
    }
    Rendezvous.Reply done =
        Rendezvous.Reply.decode(receive(rv, new Rendezvous.Post(REAL_KEY, 2, 3, real[2]).encode()));
    for (int r = 0; r < 3; r++) {
      assertArrayEquals(real[r], done.all()[r], "rank " + r + "'s bytes");
    }
    System.out.println(
        "RendezvousFuzzTest: " + refused + " refused, " + accepted + " well-formed posts answered");
    assertTrue(refused > 5_000, "most random messages are malformed: " + refused);
  }

  @Test
  @DisplayName("lengths and rank counts from the wire are checked before anything is allocated")
  void hugeAndNegativeSizesAreRefusedBeforeAllocating() {
    Rendezvous rv = new Rendezvous();
    for (int len : new int[] {-1, Integer.MIN_VALUE, Integer.MAX_VALUE, 1 << 30}) {
      byte[] post = new Rendezvous.Post("k", 0, 2, new byte[0]).encode();
      ByteBuffer.wrap(post).putInt(post.length - 4, len);
      assertRefused(() -> Rendezvous.Post.decode(post));
      byte[] reply = ByteBuffer.allocate(5).put((byte) 1).putInt(len).array();
      assertRefused(() -> Rendezvous.Reply.decode(reply));
    }
    for (int n : new int[] {-1, 0, Integer.MIN_VALUE, Integer.MAX_VALUE, 1 << 30}) {
      assertRefused(() -> rv.handle(new Rendezvous.Post("k" + n, 0, n, new byte[0])));
    }
    assertRefused(() -> rv.handle(new Rendezvous.Post("k", 2, 2, new byte[0])));
    assertRefused(() -> rv.handle(new Rendezvous.Post("k", -1, 2, new byte[0])));
    assertEquals(0, rv.size(), "a refused post leaves no entry behind");
  }

  private static void assertRefused(Runnable r) {
    try {
      r.run();
    } catch (IllegalArgumentException e) {
      return;
    }
    throw new AssertionError("accepted");
  }

  private static byte[] mutate(byte[] valid, SplittableRandom rnd) {
    switch (rnd.nextInt(5)) {
      case 0 -> {
        byte[] b = new byte[rnd.nextInt(200)];
        rnd.nextBytes(b);
        return b;
      }
      case 1 -> {
        byte[] b = valid.clone();
        for (int k = 1 + rnd.nextInt(4); k > 0; k--) {
          b[rnd.nextInt(b.length)] ^= (byte) (1 << rnd.nextInt(8));
        }
        return b;
      }
      case 2 -> {
        byte[] b = new byte[rnd.nextInt(valid.length)];
        System.arraycopy(valid, 0, b, 0, b.length);
        return b;
      }
      default -> {
        byte[] b = valid.clone();
        int at = rnd.nextInt(b.length - 3);
        ByteBuffer.wrap(b).putInt(at, EXTREMES[rnd.nextInt(EXTREMES.length)]);
        return b;
      }
    }
  }
}
