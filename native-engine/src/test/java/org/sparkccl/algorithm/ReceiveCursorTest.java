package org.sparkccl.algorithm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * The cursor a receiving proxy walks must name exactly the steps a host kernel copies unchanged
 * into the output, at the offsets the kernel copies them to, for plans of every primitive.
 */
class ReceiveCursorTest {
  private static final int STEP = 1000;
  private static final int MIN = 600;

  @Test
  void namesTheUnchangedLargeReceivesOfARandomPlan() {
    SplittableRandom rnd = new SplittableRandom(42);
    Primitive[] kinds = Primitive.values();
    for (int round = 0; round < 200; round++) {
      List<PrimitiveCall> calls = new ArrayList<>();
      for (int i = 0, n = 1 + rnd.nextInt(12); i < n; i++) {
        calls.add(
            new PrimitiveCall(
                kinds[rnd.nextInt(kinds.length)],
                rnd.nextInt(1 << 20),
                rnd.nextInt(1 << 20),
                1 + rnd.nextInt(4 * STEP)));
      }
      ChannelPlan plan = ChannelPlan.of(0, calls, STEP);
      List<long[]> expected = kernelSlices(calls);
      assertEquals(plan.recvSteps(), expected.size(), "the plan's receive steps");
      ReceiveCursor cursor = new ReceiveCursor();
      cursor.reset(plan, STEP, MIN);
      for (long[] step : expected) {
        assertEquals(step[0], cursor.next(), "offset of a step of " + calls);
        assertEquals(step[1], cursor.length(), "length of a step of " + calls);
      }
      assertThrows(IllegalStateException.class, cursor::next);
    }
  }

  /**
   * The receive slices as a host kernel takes them: {offset or -1, length}, written out plainly.
   */
  private static List<long[]> kernelSlices(List<PrimitiveCall> calls) {
    List<long[]> out = new ArrayList<>();
    for (PrimitiveCall c : calls) {
      if (!c.kind().receives()) {
        continue;
      }
      for (long done = 0; done < c.bytes(); done += STEP) {
        long len = Math.min(STEP, c.bytes() - done);
        boolean copied = c.kind() == Primitive.RECV || c.kind() == Primitive.RECV_COPY_SEND;
        out.add(new long[] {copied && len >= MIN ? c.dstOffset() + done : -1, len});
      }
    }
    return out;
  }
}
