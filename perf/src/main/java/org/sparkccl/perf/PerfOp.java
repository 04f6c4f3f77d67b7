package org.sparkccl.perf;

import java.nio.ByteBuffer;
import java.util.Locale;
import org.sparkccl.Communicator;
import org.sparkccl.DataType;
import org.sparkccl.ReduceOp;
import org.sparkccl.device.DeviceBuffer;

/**
 * The operations of the perf tool, with nccl-tests' conventions: {@code size} is the larger buffer
 * (allGather's output, reduceScatter's input), and busbw is algbw times {@code 2(n-1)/n} for
 * allReduce, {@code (n-1)/n} for allGather and reduceScatter, 1 for broadcast and reduce.
 */
enum PerfOp {
  ALLREDUCE(true, false),
  BROADCAST(false, true),
  REDUCE(true, true),
  ALLGATHER(false, false),
  REDUCESCATTER(true, false),
  /** Each rank sends to the next and receives from the previous, in one group. */
  SENDRECV(false, false);

  private final boolean reduces;
  private final boolean rooted;

  PerfOp(boolean reduces, boolean rooted) {
    this.reduces = reduces;
    this.rooted = rooted;
  }

  String label() {
    return name().toLowerCase(Locale.ROOT);
  }

  boolean reduces() {
    return reduces;
  }

  /** The root column: {@code -1} for operations without a root. */
  int rootColumn(int root) {
    return rooted ? root : -1;
  }

  static PerfOp fromName(String name) {
    for (PerfOp op : values()) {
      if (op.label().equals(name)) {
        return op;
      }
    }
    throw new IllegalArgumentException(
        "-o "
            + name
            + " is not an operation; expected allreduce, broadcast, reduce, allgather,"
            + " reducescatter, sendrecv or all");
  }

  /** Elements each rank contributes for a row of {@code size} bytes. */
  long perRankCount(long size, DataType type, int nRanks) {
    long total = size / type.size();
    return this == ALLGATHER || this == REDUCESCATTER ? total / nRanks : total;
  }

  /** Elements in the send buffer. */
  long sendCount(long perRank, int nRanks) {
    return this == REDUCESCATTER ? perRank * nRanks : perRank;
  }

  /** Elements in the receive buffer. */
  long recvCount(long perRank, int nRanks) {
    return this == ALLGATHER ? perRank * nRanks : perRank;
  }

  /** Bytes of the larger buffer: the row's {@code size}. */
  long bytes(long perRank, int nRanks, DataType type) {
    return Math.max(recvCount(perRank, nRanks), sendCount(perRank, nRanks)) * type.size();
  }

  double busFactor(int n) {
    return switch (this) {
      case ALLREDUCE -> 2.0 * (n - 1) / n;
      case ALLGATHER, REDUCESCATTER -> (double) (n - 1) / n;
      case BROADCAST, REDUCE, SENDRECV -> 1.0;
    };
  }

  void run(
      Communicator comm,
      DeviceBuffer send,
      DeviceBuffer recv,
      long perRank,
      DataType type,
      ReduceOp op,
      int root) {
    switch (this) {
      case ALLREDUCE -> comm.allReduce(send, recv, perRank, type, op);
      case BROADCAST -> comm.broadcast(send, recv, perRank, type, root);
      case REDUCE -> comm.reduce(send, recv, perRank, type, op, root);
      case ALLGATHER -> comm.allGather(send, recv, perRank, type);
      case REDUCESCATTER -> comm.reduceScatter(send, recv, perRank, type, op);
      case SENDRECV -> {
        int n = comm.nRanks();
        if (n == 1) {
          comm.allGather(send, recv, perRank, type);
          return;
        }
        try (Communicator.Group g = comm.group()) {
          comm.sendAsync(send, perRank, type, (comm.rank() + 1) % n);
          comm.recvAsync(recv, perRank, type, (comm.rank() - 1 + n) % n);
        }
      }
    }
  }

  /**
   * Counts wrong elements of this rank's result, given every rank's send buffer contents ({@code
   * inputs[r]}, regenerated independently by this rank).
   */
  long countWrong(
      ByteBuffer result,
      ByteBuffer[] inputs,
      long perRank,
      DataType type,
      ReduceOp op,
      int rank,
      int root) {
    int n = inputs.length;
    int bytes = (int) (perRank * type.size());
    return switch (this) {
      case ALLREDUCE -> TestData.countWrong(result, inputs, perRank, type, op);
      case REDUCE -> rank == root ? TestData.countWrong(result, inputs, perRank, type, op) : 0;
      case BROADCAST -> TestData.countDifferent(result, 0, inputs[root], 0, perRank, type);
      case SENDRECV ->
          TestData.countDifferent(result, 0, inputs[Math.floorMod(rank - 1, n)], 0, perRank, type);
      case ALLGATHER -> {
        long wrong = 0;
        for (int k = 0; k < n; k++) {
          wrong += TestData.countDifferent(result, k * bytes, inputs[k], 0, perRank, type);
        }
        yield wrong;
      }
      case REDUCESCATTER -> {
        ByteBuffer[] blocks = new ByteBuffer[n];
        for (int r = 0; r < n; r++) {
          blocks[r] = inputs[r].slice(rank * bytes, bytes).order(inputs[r].order());
        }
        yield TestData.countWrong(result, blocks, perRank, type, op);
      }
    };
  }
}
