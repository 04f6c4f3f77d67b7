package org.sparkccl.transport.p2p;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.nio.ByteBuffer;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.sparkccl.DataType;
import org.sparkccl.ReduceOp;
import org.sparkccl.comm.CollectiveCall;

class CallBoardTest {
  private final SplittableRandom random = new SplittableRandom(20261201L);

  private CollectiveCall call(long seq) {
    return new CollectiveCall(
        CollectiveCall.Kind.BROADCAST,
        seq,
        1 + random.nextInt(1 << 20),
        DataType.FLOAT32,
        null,
        random.nextInt(8));
  }

  @Test
  void eachEndReadsTheOthersCallsAndOnlyADifferingOneComesBack() {
    ByteBuffer region = ByteBuffer.allocateDirect(CallBoard.BYTES);
    CallBoard receiver = CallBoard.over(region, true, 3);
    CallBoard sender = CallBoard.over(region, false, 4);
    for (long seq = 1; seq <= 3L * CallBoard.RECORDS; seq++) {
      CollectiveCall mine = call(seq);
      assertNull(sender.differingFrom(mine), "nothing posted for #" + seq + " yet");
      receiver.post(mine);
      assertNull(receiver.differingFrom(mine), "a rank never reads its own half");
      assertNull(sender.differingFrom(mine), "the same call of #" + seq);
      CollectiveCall other =
          new CollectiveCall(
              mine.kind(), seq, mine.count() + 1, mine.dtype(), mine.op(), mine.root());
      assertEquals(mine, sender.differingFrom(other), "a differing call of #" + seq);
      sender.post(other);
      assertEquals(other, receiver.differingFrom(mine));
    }
  }

  @Test
  void aRecordOverwrittenByALaterCallIsNotCompared() {
    ByteBuffer region = ByteBuffer.allocateDirect(CallBoard.BYTES);
    CallBoard receiver = CallBoard.over(region, true, 0);
    CallBoard sender = CallBoard.over(region, false, 1);
    CollectiveCall early = call(5);
    receiver.post(call(5 + CallBoard.RECORDS));
    assertNull(sender.differingFrom(early), "the record holds a later number");
    CollectiveCall sum =
        new CollectiveCall(CollectiveCall.Kind.ALL_REDUCE, 9, 64, DataType.INT32, ReduceOp.SUM, 0);
    CollectiveCall max =
        new CollectiveCall(CollectiveCall.Kind.ALL_REDUCE, 9, 64, DataType.INT32, ReduceOp.MAX, 0);
    sender.post(sum);
    assertEquals(sum, receiver.differingFrom(max));
    assertEquals(3, CallBoard.over(region, true, 3).peer());
  }
}
