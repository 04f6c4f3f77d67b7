package org.sparkccl.proxy;

import java.nio.ByteBuffer;
import java.util.function.LongFunction;
import org.sparkccl.algorithm.ChannelPlan;
import org.sparkccl.algorithm.ReceiveCursor;
import org.sparkccl.comm.CollectiveCall;
import org.sparkccl.fifo.Fifo;
import org.sparkccl.fifo.FifoLayout;
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

  /** The steps that land in {@link #output}; unused while it is null. */
  private final ReceiveCursor cursor = new ReceiveCursor();

  /** Where steps that land there unchanged are received; null: every step into its slot. */
  private ByteBuffer output;

  /**
   * Whether the operation posts nothing until the kernel has waited for one of its steps ({@link
   * Fifo#consumerReached}); unset by {@link #restart}.
   */
  private boolean afterConsumer;

  /** The memory each posted step is received into where it is not its slot. */
  private final ByteBuffer[] targets = new ByteBuffer[FifoLayout.STEPS];

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
    super(connection, connection.progressedByOwner(), fifo, base, nSteps, timeoutNanos, what);
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
    super(
        connection,
        connection.progressedByOwner(),
        fifo,
        base,
        nSteps,
        timeoutNanos,
        site,
        expected);
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
    this.output = null;
    this.afterConsumer = false;
  }

  /**
   * Posts no step (so reads nothing from the connection) until the kernel has waited for one of
   * this operation's steps. For the point-to-point edges of recursive doubling, halving and trees:
   * a rank waits on one partner at a time, and every other edge's operation, linked at launch, made
   * each progress pass read its socket to find nothing (at 8 ranks, three reads where one was
   * wanted, on the path from a message's arrival to the kernel). Only for a FIFO whose kernel waits
   * through {@link Fifo#consumerAt}, and before the operation is enqueued.
   */
  public void postAfterConsumer() {
    this.afterConsumer = true;
  }

  /**
   * Receives the steps of {@code plan} whose bytes land unchanged in {@code output} and number at
   * least {@code minBytes} straight there instead of into their slots ({@link ReceiveCursor}); the
   * FIFO then publishes each such step as lying there ({@link Fifo#publishFrom}), which tells the
   * kernel not to copy it. Only for a connection that reads into any memory, and before the
   * operation is enqueued; {@link #restart} forgets it.
   */
  public void receiveInto(ByteBuffer output, ChannelPlan plan, int minBytes) {
    this.output = output;
    cursor.reset(plan, fifo.stepSize(), minBytes);
  }

  @Override
  protected boolean canPost(long step) {
    return connection.isReady()
        && fifo.hasRoomFor(step)
        && (!afterConsumer || fifo.consumerReached() >= firstStep());
  }

  @Override
  protected NetRequest post(long step) {
    ByteBuffer target = null;
    if (output != null) {
      long at = cursor.next();
      if (at >= 0) {
        target = output.slice((int) at, cursor.length());
      }
    }
    targets[FifoLayout.slotOf(step)] = target;
    return connection.postRecv(target != null ? target : fifo.slot(step), step);
  }

  /**
   * Tells the kernel how much of a step received into its slot has landed ({@link Fifo#arrived}),
   * so that it sums that much while the rest arrives. Not before the header's call has been
   * checked: bytes of a mismatched call must not be summed, even into an output the failure then
   * discards.
   */
  @Override
  protected void inFlight(long step, NetRequest request) {
    int got = request.received();
    int told = fifo.arrived(step);
    if (got > told
        && targets[FifoLayout.slotOf(step)] == null
        && (told > 0 || !checks || request.sentFor(expected))) {
      fifo.arrived(step, got);
    }
  }

  @Override
  protected void complete(long step, NetRequest request) {
    if (checks && !request.sentFor(expected)) {
      throw CollectiveCall.mismatch(rank, expected, connection.peer(), request.call(), myCalls);
    }
    int slot = FifoLayout.slotOf(step);
    ByteBuffer target = targets[slot];
    if (target == null) {
      fifo.publish(step, request.size());
    } else {
      targets[slot] = null;
      fifo.publishFrom(step, target.limit(request.size()));
    }
  }
}
