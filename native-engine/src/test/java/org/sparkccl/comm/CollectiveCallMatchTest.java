package org.sparkccl.comm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.sparkccl.DataType;
import org.sparkccl.ReduceOp;

/** {@link CollectiveCall#matches}, written out by hand, must agree with the record's equality. */
@DisplayName("collective calls match")
class CollectiveCallMatchTest {
  @Test
  @DisplayName("exactly when the record says they are equal, whichever argument differs")
  void matchesIsEquality() {
    Random random = new Random(20261205);
    for (int i = 0; i < 2_000; i++) {
      CollectiveCall a = RandomCalls.next(random, 1 + random.nextInt(3), 4);
      CollectiveCall b = random.nextBoolean() ? copy(a) : changeOne(a, random);
      assertEquals(a.equals(b), a.matches(b), a + " against " + b);
      assertEquals(b.equals(a), b.matches(a), b + " against " + a);
    }
  }

  @Test
  @DisplayName("each argument alone makes a difference, and nothing matches null")
  void eachArgumentCounts() {
    CollectiveCall a =
        new CollectiveCall(CollectiveCall.Kind.REDUCE, 7, 1024, DataType.FLOAT32, ReduceOp.SUM, 2);
    List<CollectiveCall> others =
        List.of(
            new CollectiveCall(CollectiveCall.Kind.ALL_REDUCE, 7, 1024, a.dtype(), a.op(), 2),
            new CollectiveCall(a.kind(), 8, 1024, a.dtype(), a.op(), 2),
            new CollectiveCall(a.kind(), 7, 1025, a.dtype(), a.op(), 2),
            new CollectiveCall(a.kind(), 7, 1024, DataType.INT32, a.op(), 2),
            new CollectiveCall(a.kind(), 7, 1024, a.dtype(), ReduceOp.MAX, 2),
            new CollectiveCall(a.kind(), 7, 1024, a.dtype(), null, 2),
            new CollectiveCall(a.kind(), 7, 1024, a.dtype(), a.op(), 3));
    for (CollectiveCall o : others) {
      assertFalse(a.matches(o), a + " against " + o);
    }
    assertTrue(a.matches(copy(a)));
    assertFalse(a.matches(null));
  }

  private static CollectiveCall copy(CollectiveCall c) {
    return new CollectiveCall(c.kind(), c.seq(), c.count(), c.dtype(), c.op(), c.root());
  }

  private static CollectiveCall changeOne(CollectiveCall c, Random random) {
    CollectiveCall.Kind[] kinds = CollectiveCall.Kind.values();
    DataType[] types = DataType.values();
    return switch (random.nextInt(6)) {
      case 0 ->
          new CollectiveCall(
              kinds[random.nextInt(kinds.length)], c.seq(), c.count(), c.dtype(), c.op(), c.root());
      case 1 -> new CollectiveCall(c.kind(), c.seq() + 1, c.count(), c.dtype(), c.op(), c.root());
      case 2 -> new CollectiveCall(c.kind(), c.seq(), c.count() ^ 1, c.dtype(), c.op(), c.root());
      case 3 ->
          new CollectiveCall(
              c.kind(), c.seq(), c.count(), types[random.nextInt(types.length)], c.op(), c.root());
      case 4 -> new CollectiveCall(c.kind(), c.seq(), c.count(), c.dtype(), null, c.root());
      default ->
          new CollectiveCall(c.kind(), c.seq(), c.count(), c.dtype(), c.op(), random.nextInt(4));
    };
  }
}
