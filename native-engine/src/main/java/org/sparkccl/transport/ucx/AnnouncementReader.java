package org.sparkccl.transport.ucx;

import static org.sparkccl.transport.ucx.UcxLayout.LONGS;

import java.nio.ByteBuffer;
import java.util.function.Consumer;
import org.sparkccl.CclException;
import org.sparkccl.comm.CollectiveCall;

/**
 * Reads the calls the next rank in the ring announces to this one from the board in this rank's
 * side area ({@link AnnouncementWriter} writes them), in order, and tells the writer how far it has
 * read every quarter of the board, so that the writer can reuse those slots. Proxy thread only.
 *
 * <pre>{@code
 * reader.read(checker::onAnnounce, put); // on every proxy pass: one word looked at when idle
 * }</pre>
 */
final class AnnouncementReader {

  private final ByteBuffer side;
  private final String description;
  private long read;
  private long told;

  /** Where announcement {@link #read} will lie: a look when nothing is new reads one word. */
  private int next = UcxLayout.call(0);

  /**
   * @param side this rank's side area of channel 0
   * @param description the connection, for errors
   */
  AnnouncementReader(ByteBuffer side, String description) {
    this.side = side;
    this.description = description;
  }

  /**
   * Hands every whole announcement written since the last call to {@code to}, in order; returns how
   * many.
   *
   * @throws CclException when a slot holds no call (a writer that does not follow this layout)
   */
  int read(Consumer<CollectiveCall> to, SidePut put) {
    int n = 0;
    while (true) {
      int at = next;
      long k = read + 1;
      // the closing number first: a slot being rewritten never shows both numbers of one call
      if ((long) LONGS.getAcquire(side, at + UcxLayout.CALL_SEQ_END) != k
          || (long) LONGS.getAcquire(side, at + UcxLayout.CALL_SEQ) != k) {
        break;
      }
      CollectiveCall call = CollectiveCall.decode(side, at + UcxLayout.CALL_CALL);
      if (call == null) {
        throw new CclException(
            description + ": protocol error: announcement " + k + " holds no collective call");
      }
      read = k;
      next = UcxLayout.call(k);
      n++;
      if (read - told >= UcxLayout.CALL_SLOTS / 4) {
        tell(put);
      }
      to.accept(call);
    }
    return n;
  }

  /** Announcements read so far. */
  long count() {
    return read;
  }

  private void tell(SidePut put) {
    LONGS.setRelease(side, UcxLayout.OUT_CALLS_READ_OFFSET, read);
    put.put(UcxLayout.OUT_CALLS_READ_OFFSET, Long.BYTES, UcxLayout.CALLS_READ_OFFSET);
    told = read;
  }
}
