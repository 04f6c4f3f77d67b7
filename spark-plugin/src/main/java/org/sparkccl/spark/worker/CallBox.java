package org.sparkccl.spark.worker;

import java.io.IOException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.sparkccl.util.WireLimits;

/**
 * Requests and replies of one Python worker in a shared segment both processes poll, for workers
 * whose communicators spin ({@code idle} settled to {@code spin}: the host has a core for every
 * polling thread). Over the socket each small collective cost two thread wake-ups, the worker's and
 * the session's, which took longer than the collective; here the worker writes its request and
 * bumps a number, the session thread, polling, runs it and bumps another, and neither sleeps while
 * calls keep coming. {@code python-shim/sparkccl/_channel.py} holds the same layout.
 *
 * <p>Layout, numbers in the machine's byte order: the request's number at 0 (the worker's), the
 * reply's number at 64 (the executor's), "the executor sleeps" at 128 and "the worker sleeps" at
 * 192 (4 bytes each), the request frame at {@link #REQUEST_AT} and the reply frame at {@link
 * #REPLY_AT}, each a 4-byte big-endian length and the same bytes a socket frame holds.
 *
 * <p>A side that stops polling says so in its flag and then sleeps on the socket, and the other
 * writes one byte there to wake it. The flags are hints: a worker that finds no reply after it
 * polled a while sends the byte anyway, and a sleeping worker wakes every millisecond to look, so a
 * flag read a moment too early costs at most that, never a hang.
 */
final class CallBox {
  static final int REQUEST_SEQ = 0;
  static final int REPLY_SEQ = 64;
  static final int EXECUTOR_SLEEPS = 128;
  static final int WORKER_SLEEPS = 192;
  static final int REQUEST_AT = 4096;

  /** A frame's room: 4 + {@link ChannelWire#MAX_FRAME} bytes, rounded up to pages. */
  static final int AREA = 4096 + ChannelWire.MAX_FRAME;

  /** Page-aligned: the worker reads a plain OK's length and status as one word. */
  static final int REPLY_AT = REQUEST_AT + AREA;

  /** The segment's smallest size. */
  static final int BYTES = REPLY_AT + AREA;

  private static final VarHandle LONGS =
      MethodHandles.byteBufferViewVarHandle(long[].class, ByteOrder.nativeOrder());
  private static final VarHandle INTS =
      MethodHandles.byteBufferViewVarHandle(int[].class, ByteOrder.nativeOrder());

  private final ByteBuffer memory;

  /**
   * @param memory the worker's segment, at least {@link #BYTES} bytes
   */
  CallBox(ByteBuffer memory) {
    if (memory.capacity() < BYTES) {
      throw new IllegalArgumentException(
          "a call box of " + memory.capacity() + " bytes; expected at least " + BYTES);
    }
    this.memory = memory.duplicate().order(ByteOrder.BIG_ENDIAN);
  }

  /** The number of the worker's latest request. */
  long requested() {
    return (long) LONGS.getAcquire(memory, REQUEST_SEQ);
  }

  /** The number of the latest request answered. */
  long replied() {
    return (long) LONGS.getAcquire(memory, REPLY_SEQ);
  }

  /**
   * Copies the request frame into {@code into} (cleared; then positioned at the body): the worker
   * could change the shared bytes while the executor reads them, a private copy cannot change.
   */
  void copyRequest(ByteBuffer into) throws IOException {
    int length =
        WireLimits.checkLength(
            memory.getInt(REQUEST_AT), ChannelWire.MAX_FRAME, "a Python worker's boxed request");
    into.clear();
    into.put(memory.slice(REQUEST_AT, 4 + length));
    into.flip().position(4);
  }

  /**
   * Publishes the reply frame {@code frame} (flipped: length and body) as the answer to {@code
   * seq}.
   */
  void publishReply(ByteBuffer frame, long seq) {
    memory.put(REPLY_AT, frame, 0, frame.limit());
    LONGS.setRelease(memory, REPLY_SEQ, seq);
    VarHandle.fullFence(); // the number before the read of the worker's flag
  }

  boolean workerSleeps() {
    return (int) INTS.getVolatile(memory, WORKER_SLEEPS) != 0;
  }

  /** Says whether the session thread is about to sleep on the socket (then looks again). */
  void executorSleeps(boolean sleeps) {
    INTS.setVolatile(memory, EXECUTOR_SLEEPS, sleeps ? 1 : 0);
  }
}
