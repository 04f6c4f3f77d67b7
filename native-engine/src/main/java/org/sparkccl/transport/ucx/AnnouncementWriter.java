package org.sparkccl.transport.ucx;

import static org.sparkccl.transport.ucx.UcxLayout.LONGS;

import java.nio.ByteBuffer;
import org.sparkccl.comm.CollectiveCall;
import org.sparkccl.transport.AnnouncementQueue;

/**
 * The calls this rank announces to its ring predecessor over UCX (the mismatch check), put into the
 * board in the predecessor's side area ({@link UcxLayout}, CALLS). They used to travel as signed
 * tag messages, one notice per batch: the predecessor's proxy then took each message from UCX and
 * checked its MAC, and 8 B broadcasts and reduces over UCX took 1.4-2.6x their time without the
 * check on a 16-core host. A put needs nothing of the predecessor until it reads the board, a look
 * at one word per proxy pass, and no MAC: only holders of the side area's remote key, which ranks
 * exchange over the authenticated bootstrap, can write there, as for the data.
 *
 * <p>A launch queues its call ({@link AnnouncementQueue}) and the proxy writes every queued call
 * that has room, in as few puts as the board's wrap allows, once the oldest has waited {@link
 * #BATCH_NANOS} ({@link #due}), or at once when asked to ({@link #flush} from a task: a stalled
 * rank, a closing end). A proxy that polls while data flows passes many times a call: writing on
 * every pass made a put per call, and the predecessor's proxy a read per call. Announcement {@code
 * k} goes into slot {@code k % CALL_SLOTS} only once the predecessor has read announcement {@code k
 * - CALL_SLOTS} (its count in this rank's CALLS_READ); a broadcast's root or a reduce's leaf can
 * run thousands of calls ahead, and what does not fit waits in the queue, {@link #blocked()}, for
 * the proxy's next passes. Proxy thread, except {@link #add}.
 *
 * <pre>{@code
 * writer.add(call);     // the launching thread
 * if (writer.due()) {    // the proxy, on every pass
 *   writer.flush(put);
 * }
 * }</pre>
 */
final class AnnouncementWriter {

  /**
   * How long a queued announcement may wait for the proxy's next pass to write it with the ones
   * queued after it: half an idle proxy's look while announcements move (1 ms), so that most calls
   * queued between two looks are due at the second. A leaf of 8 B reduces launches every 5-20 us,
   * so a put carries 25 to 100 calls; nothing waits for an announcement unless a mismatch stalls a
   * rank, and a stalled rank's announcement is written at once.
   */
  static final long BATCH_NANOS = 500_000L;

  private final AnnouncementQueue queue = new AnnouncementQueue();
  private final CollectiveCall[] taken = new CollectiveCall[UcxLayout.CALL_SLOTS / 4];
  private final ByteBuffer side;
  private long written;
  private boolean blocked;

  /** When the first call of the batch now queued was added (the launching thread writes it). */
  private volatile long batchStartNanos;

  /**
   * @param side this rank's side area of channel 0
   */
  AnnouncementWriter(ByteBuffer side) {
    this.side = side;
  }

  /** Queues {@code call}; any thread. The proxy writes it on a later pass ({@link #due}). */
  void add(CollectiveCall call) {
    // the proxy looks at the queue on every pass: no task; the first call after a take starts a
    // batch (a stamp older than the oldest call only makes the write come sooner)
    if (queue.add(call)) {
      batchStartNanos = System.nanoTime();
    }
  }

  /** Whether calls wait to be written: queued, or {@link #blocked()}. */
  boolean pending() {
    return !queue.isEmpty();
  }

  /**
   * Whether the proxy should write now: calls are queued and the oldest has waited {@link
   * #BATCH_NANOS}, or calls wait for room in the board (each look for room reads one word). An
   * empty queue costs one read, no clock.
   */
  boolean due() {
    return blocked || (pending() && System.nanoTime() - batchStartNanos >= BATCH_NANOS);
  }

  /**
   * Writes queued calls into the board, oldest first, as far as it has room. Returns whether it
   * wrote any.
   */
  boolean flush(SidePut put) {
    boolean any = false;
    while (true) {
      long read = (long) LONGS.getAcquire(side, UcxLayout.CALLS_READ_OFFSET);
      int room = (int) Math.min(taken.length, UcxLayout.CALL_SLOTS - (written - read));
      int n = queue.take(taken, Math.max(room, 0));
      if (n == 0) {
        blocked = room <= 0 && !queue.isEmpty();
        return any;
      }
      long first = written;
      for (int i = 0; i < n; i++) {
        int at = UcxLayout.outCall(written);
        side.putLong(at + UcxLayout.CALL_SEQ, written + 1);
        taken[i].encode(side, at + UcxLayout.CALL_CALL);
        side.putLong(at + UcxLayout.CALL_SEQ_END, written + 1);
        taken[i] = null;
        written++;
      }
      int run = Math.min(n, UcxLayout.CALL_SLOTS - UcxLayout.callSlot(first));
      put.put(UcxLayout.outCall(first), run * UcxLayout.CALL_BYTES, UcxLayout.call(first));
      if (run < n) {
        long rest = first + run;
        put.put(UcxLayout.outCall(rest), (n - run) * UcxLayout.CALL_BYTES, UcxLayout.call(rest));
      }
      any = true;
    }
  }

  /**
   * Whether calls wait for room: the proxy must call {@link #flush} again on a later pass, and must
   * not wait for UCX events meanwhile (the predecessor's count arrives by a put, which raises
   * none).
   */
  boolean blocked() {
    return blocked;
  }

  /** Whether any call was written: its puts must land before this end says it closed. */
  boolean wroteAny() {
    return written > 0;
  }
}
