package org.sparkccl.spark;

import java.io.Serializable;
import org.sparkccl.DataType;
import org.sparkccl.ReduceOp;

/** Which collective a barrier stage runs on each partition's buffers; shipped to the tasks. */
record CollectiveSpec(Kind kind, DataType dtype, ReduceOp op, int root) implements Serializable {
  enum Kind {
    ALL_REDUCE("allReduce"),
    BROADCAST("broadcast"),
    ALL_GATHER("allGather"),
    REDUCE_SCATTER("reduceScatter");

    final String apiName;

    Kind(String apiName) {
      this.apiName = apiName;
    }
  }

  /** Bytes of the result of one input buffer of {@code inBytes}, across {@code ranks} ranks. */
  long outBytes(long inBytes, int ranks) {
    return switch (kind) {
      case ALL_GATHER -> inBytes * ranks;
      case REDUCE_SCATTER -> inBytes / ranks;
      default -> inBytes;
    };
  }

  /**
   * Why a buffer of {@code bytes} cannot take part, or {@code null} when it can: a whole number of
   * elements, and for reduceScatter a whole number of elements per rank.
   */
  String unfit(long bytes, int ranks) {
    if (bytes % dtype.size() != 0) {
      return bytes + " bytes is not a whole number of " + dtype + " elements";
    }
    if (kind == Kind.REDUCE_SCATTER && (bytes / dtype.size()) % ranks != 0) {
      return bytes
          + " bytes holds "
          + (bytes / dtype.size())
          + " elements; reduceScatter"
          + " expects a multiple of the "
          + ranks
          + " partitions";
    }
    return null;
  }
}
