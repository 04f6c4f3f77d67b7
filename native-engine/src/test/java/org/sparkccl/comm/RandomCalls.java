package org.sparkccl.comm;

import java.util.Random;
import org.sparkccl.DataType;
import org.sparkccl.ReduceOp;

/** Random broadcast and reduce calls, the kinds ranks announce, for tests of announcements. */
public final class RandomCalls {
  private static final DataType[] TYPES = {
    DataType.FLOAT32, DataType.FLOAT64, DataType.INT32, DataType.INT64
  };

  private RandomCalls() {}

  /** A broadcast or reduce of number {@code seq}: random count, dtype, op and root below ranks. */
  public static CollectiveCall next(Random random, long seq, int ranks) {
    CollectiveCall.Kind kind =
        random.nextBoolean() ? CollectiveCall.Kind.BROADCAST : CollectiveCall.Kind.REDUCE;
    ReduceOp op = kind == CollectiveCall.Kind.REDUCE ? ReduceOp.values()[random.nextInt(3)] : null;
    return new CollectiveCall(
        kind,
        seq,
        1 + random.nextInt(1 << 20),
        TYPES[random.nextInt(TYPES.length)],
        op,
        random.nextInt(ranks));
  }
}
