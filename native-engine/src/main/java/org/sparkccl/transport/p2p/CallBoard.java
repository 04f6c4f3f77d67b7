package org.sparkccl.transport.p2p;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.sparkccl.comm.CollectiveCall;

/**
 * The calls two ranks of one direct ring edge launched, in memory both map: each posts its own
 * calls on its half and reads the other's, so that a mismatch between neighbours is found without a
 * message. Over the network a rank announces its call to its ring predecessor in a frame that wakes
 * the predecessor's proxy; between rank processes of one host that frame cost a small broadcast 4
 * to 6 times its time.
 *
 * <p>A half holds the last {@link #RECORDS} calls, call {@code seq} in record {@code seq %
 * RECORDS}: a published sequence number (0 while the record is being written) and the call. A
 * neighbour never runs that many calls ahead: collectives wait for each other within a few FIFO
 * steps.
 *
 * <pre>{@code
 * CallBoard board = CallBoard.over(buffer, true, prevRank); // the receiver's view of its file
 * board.post(call);
 * VarHandle.fullFence();
 * CollectiveCall theirs = board.differingFrom(call); // null: absent or the same
 * }</pre>
 */
public final class CallBoard {
  /** Calls per half. */
  public static final int RECORDS = 256;

  private static final int STRIDE = 32;
  private static final int CALL_AT = 8;

  /** Bytes of a board: two halves. */
  public static final int BYTES = 2 * RECORDS * STRIDE;

  private static final VarHandle LONGS =
      MethodHandles.byteBufferViewVarHandle(long[].class, ByteOrder.nativeOrder());

  private final ByteBuffer mine;
  private final ByteBuffer theirs;
  private final int peer;

  private CallBoard(ByteBuffer mine, ByteBuffer theirs, int peer) {
    this.mine = mine;
    this.theirs = theirs;
    this.peer = peer;
  }

  /**
   * The board in {@code region} ({@link #BYTES} bytes, zero when made), as one end sees it: the
   * receiver of the edge posts on the first half, the sender on the second.
   *
   * @param peer the rank at the other end
   */
  public static CallBoard over(ByteBuffer region, boolean receiver, int peer) {
    ByteBuffer first = region.slice(0, RECORDS * STRIDE);
    ByteBuffer second = region.slice(RECORDS * STRIDE, RECORDS * STRIDE);
    return receiver ? new CallBoard(first, second, peer) : new CallBoard(second, first, peer);
  }

  /** The rank at the other end. */
  public int peer() {
    return peer;
  }

  /** Posts this rank's call; allocates nothing. */
  public void post(CollectiveCall call) {
    int at = at(call.seq());
    LONGS.setOpaque(mine, at, 0L);
    VarHandle.storeStoreFence(); // a reader sees 0, or the new call's number only once it is whole
    call.encode(mine, at + CALL_AT);
    LONGS.setRelease(mine, at, call.seq());
  }

  /**
   * The other end's call of {@code mine}'s number when it posted one and it differs, else null (not
   * posted yet, or overwritten while read: the other end then checks). Allocates only when the
   * calls differ.
   */
  public CollectiveCall differingFrom(CollectiveCall mine) {
    long seq = mine.seq();
    int at = at(seq);
    if ((long) LONGS.getAcquire(theirs, at) != seq || mine.isEncodedAt(theirs, at + CALL_AT)) {
      return null;
    }
    CollectiveCall call = CollectiveCall.decode(theirs, at + CALL_AT);
    VarHandle.acquireFence();
    boolean whole = (long) LONGS.getVolatile(theirs, at) == seq;
    return whole && call != null && call.seq() == seq ? call : null;
  }

  private static int at(long seq) {
    return (int) Math.floorMod(seq, (long) RECORDS) * STRIDE;
  }
}
