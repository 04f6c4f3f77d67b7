package org.sparkccl.proxy;

import java.util.function.LongFunction;
import org.sparkccl.comm.CollectiveCall;
import org.sparkccl.fifo.Fifo;
import org.sparkccl.transport.NetRequest;
import org.sparkccl.transport.RecvConnection;

/**
 * Receives FIFO steps into slots the kernel has freed: NCCL's {@code netRecvProxy}. A slot is
 * published to the kernel as its data lands.
 */
public final class RecvProxyOp extends FifoProxyOp {
  private final RecvConnection connection;
  private CollectiveCall expected;
  private final int rank;
  private final LongFunction<CollectiveCall> myCalls;
  private final boolean checks;

  /**
   * @param expected what this rank called: every message must come from the same call
   * @param checks whether to compare each message's call with {@code expected} (key {@code
   *     checkCalls})
   * @param rank this rank, for messages
   */
  public RecvProxyOp(
      RecvConnection connection,
      Fifo fifo,
      long base,
      long nSteps,
      CollectiveCall expected,
      boolean checks,
      int rank,
      long timeoutNanos,
      String what) {
    this(connection, fifo, base, nSteps, expected, checks, rank, seq -> null, timeoutNanos, what);
  }

  /**
   * @param myCalls this rank's call of a given number, if it still knows it: when a message of
   *     another number arrives, the report compares calls of the same number, which names the cause
   *     (rank 0's broadcast #2 against rank 3's allReduce #2) rather than its consequence (#3
   *     against #2)
   */
  public RecvProxyOp(
      RecvConnection connection,
      Fifo fifo,
      long base,
      long nSteps,
      CollectiveCall expected,
      boolean checks,
      int rank,
      LongFunction<CollectiveCall> myCalls,
      long timeoutNanos,
      String what) {
    super(connection, fifo, base, nSteps, timeoutNanos, what);
    this.connection = connection;
    this.expected = expected;
    this.checks = checks;
    this.rank = rank;
    this.myCalls = myCalls;
  }

  /** As above, described by {@code site} (which names this rank) only when asked. */
  public RecvProxyOp(
      RecvConnection connection,
      Fifo fifo,
      long base,
      long nSteps,
      CollectiveCall expected,
      boolean checks,
      LongFunction<CollectiveCall> myCalls,
      long timeoutNanos,
      OpSite site) {
    super(connection, fifo, base, nSteps, timeoutNanos, site, expected);
    this.connection = connection;
    this.expected = expected;
    this.checks = checks;
    this.rank = site.rank();
    this.myCalls = myCalls;
  }

  /** Reuses this finished operation ({@link #isUnlinked()}) for another collective. */
  public void restart(long base, long nSteps, CollectiveCall expected) {
    restartFifo(base, nSteps, expected);
    this.expected = expected;
  }

  @Override
  protected boolean canPost(long step) {
    return connection.isReady() && fifo.hasRoomFor(step);
  }

  @Override
  protected NetRequest post(long step) {
    return connection.postRecv(fifo.slot(step), step);
  }

  @Override
  protected void complete(long step, NetRequest request) {
    CollectiveCall got = request.call();
    if (checks && got != null && !got.matches(expected)) {
      throw CollectiveCall.mismatch(rank, expected, connection.peer(), got, myCalls);
    }
    fifo.publish(step, request.size());
  }
}
