package org.sparkccl.transport.socket;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.LockSupport;
import org.apache.logging.log4j.Logger;
import org.sparkccl.CclException;
import org.sparkccl.fifo.FifoLayout;
import org.sparkccl.idle.IdleStrategies;
import org.sparkccl.proxy.ProxyThread;
import org.sparkccl.util.EngineLog;

/**
 * What the two ends of a socket connection share (NCCL's net_socket comm): a control socket the
 * proxy thread drives without blocking, and {@code nThreads x nSocksPerThread} data sockets owned
 * by helper threads. Messages below {@link #MIN_CHUNK} bytes, and all messages when there are no
 * data sockets, travel inline on the control socket; larger ones are cut into chunks of at least
 * {@link #MIN_CHUNK} bytes, chunk {@code i} on data socket {@code i % nSocks}.
 */
abstract class SocketConnection {
  private static final Logger LOG = EngineLog.logger(SocketConnection.class);

  /** NCCL's MIN_CHUNKSIZE for its socket transport. */
  static final int MIN_CHUNK = 64 << 10;

  /**
   * How long a frame may wait for buffer space: a peer that reads nothing this long has stopped.
   */
  private static final long FRAME_WRITE_NANOS = 5_000_000_000L;

  /** The pause between writes to a full buffer (a full reverse direction is rare). */
  private static final long FULL_BUFFER_PAUSE_NANOS = 50_000L;

  protected final SocketChannel control;

  /** The control socket's bytes: the socket itself, or sealed. */
  protected final Wire wire;

  protected final SelectionKey controlKey;
  protected final SocketChannel[] data;
  protected final SocketHelperThread[] helpers;
  protected final ArrayDeque<SocketRequest> queue = new ArrayDeque<>();
  private final SocketRequest[] requests = new SocketRequest[FifoLayout.STEPS];
  protected final String description;
  private final int peer;
  private boolean closed;

  /**
   * The other half of a socket that carries data both ways (a point-to-point pair: this rank's
   * sending and receiving ends with one peer share one socket, so that each direction's
   * acknowledgements ride on the other's data); null where the socket carries one direction.
   */
  protected volatile SocketConnection partner;

  /** The interest this half's requests want; the key's is the union of both halves'. */
  private volatile int wantedOps;

  /**
   * A connection over {@code control} and {@code data}; with a {@code partner}, the other half of a
   * point-to-point pair over the same socket.
   */
  SocketConnection(
      String description,
      int peer,
      Wire control,
      Wire[] data,
      int nThreads,
      IdleStrategies idle,
      Selector proxySelector,
      Runnable wakeProxy,
      SocketConnection partner)
      throws IOException {
    this.partner = partner;
    this.description = description;
    this.peer = peer;
    this.wire = control;
    this.control = control.channel();
    this.data = new SocketChannel[data.length];
    for (int i = 0; i < data.length; i++) {
      this.data[i] = data[i].channel();
    }
    this.control.configureBlocking(false);
    if (partner != null) {
      // one key per socket and selector: the halves share it. A pair is read only by its receiving
      // half's requests, never while idle (an idle reader woke the proxy for data that came before
      // its receive was posted), so the key has no handler and no idle interest.
      this.controlKey = partner.controlKey;
      partner.partner = this;
      controlKey.attach(null);
      controlKey.interestOps(partner.wantedOps);
    } else {
      this.controlKey = this.control.register(proxySelector, idleInterest(), handler());
    }
    this.helpers = new SocketHelperThread[nThreads];
    int perThread = nThreads == 0 ? 0 : data.length / nThreads;
    for (int t = 0; t < nThreads; t++) {
      helpers[t] =
          new SocketHelperThread(
              "sparkccl-socket-" + description.replace(' ', '-') + "-t" + t,
              idle.onEvents(),
              wakeProxy,
              i -> description + " (data socket " + i + ")");
      for (int s = t * perThread; s < (t + 1) * perThread; s++) {
        helpers[t].own(data[s], s);
      }
    }
    for (SocketHelperThread h : helpers) {
      h.start();
    }
  }

  public int peer() {
    return peer;
  }

  /** The request of {@code step}, reused from the step {@link FifoLayout#STEPS} before it. */
  protected SocketRequest request(ByteBuffer slot, long step) {
    int i = FifoLayout.slotOf(step);
    SocketRequest r = requests[i];
    if (r == null) {
      r = new SocketRequest(this);
      requests[i] = r;
    }
    return r.reuse(slot, step);
  }

  /** Whether a payload of {@code size} bytes travels on the control socket. */
  protected boolean isInline(int size) {
    return data.length == 0 || size < MIN_CHUNK;
  }

  /** Cuts {@code payload} into chunk tasks and hands them to the helper threads. */
  protected ChunkTask[] dispatchChunks(ByteBuffer payload, int size, boolean send) {
    int nSocks = data.length;
    int chunk = Math.max(MIN_CHUNK, (size + nSocks - 1) / nSocks);
    chunk = (chunk + 63) & ~63;
    List<ChunkTask> tasks = new ArrayList<>();
    for (int i = 0, off = 0; off < size; i++, off += chunk) {
      int len = Math.min(chunk, size - off);
      int socket = i % nSocks;
      ChunkTask t = new ChunkTask(data[socket], payload.slice(off, len), send);
      tasks.add(t);
      helpers[socket / (nSocks / helpers.length)].submit(t);
    }
    return tasks.toArray(new ChunkTask[0]);
  }

  /** Moves queued requests along on the control socket; proxy thread only. */
  abstract void progress();

  /** What the proxy's selector watches on the control socket when no request needs it. */
  protected int idleInterest() {
    return 0;
  }

  /** Called when the control socket is ready while no request waits on it; null for none. */
  protected org.sparkccl.proxy.ReadyHandler handler() {
    return null;
  }

  /**
   * Sets the selector's interest to {@code ops} plus the idle interest. Only the proxy thread adds
   * interest; a kernel that assists the proxy may only take it away. The assisting kernel polls the
   * socket itself, and interest it armed would wake the proxy for data the kernel is about to read,
   * only for the proxy to block on the progress lock the kernel holds, and the kernel to pay for
   * waking it again. A kernel that stops assisting wakes the proxy while operations are left, and
   * the proxy's own pass arms what it waits for.
   */
  protected void interest(int ops) {
    if (!controlKey.isValid()) {
      return;
    }
    wantedOps = ops;
    int all = ops | idleInterest();
    SocketConnection other = partner;
    if (other != null) {
      all |= other.wantedOps; // a pair's halves have no idle interest
    }
    int current = controlKey.interestOps();
    int next = ProxyThread.onProxyThread() ? all : current & all;
    if (next != current) {
      controlKey.interestOps(next);
    }
  }

  /**
   * Writes a notice frame (header with {@code flags}, then the text) without blocking for long:
   * best effort, for failures and closes only.
   */
  protected static void writeFrame(Wire channel, int flags, String message) {
    byte[] text = message.getBytes(java.nio.charset.StandardCharsets.UTF_8);
    ByteBuffer frame = ByteBuffer.allocate(SocketRequest.HEADER_BYTES + text.length);
    frame.putLong(0, -1).putInt(8, text.length).putInt(12, flags);
    frame.put(SocketRequest.HEADER_BYTES, text);
    writeFrame(channel, frame);
  }

  /**
   * Writes a whole frame (the reverse direction is nearly always empty).
   *
   * @return whether the frame went out whole; when it did not, the socket is closed
   */
  protected static boolean writeFrame(Wire channel, ByteBuffer frame) {
    return writeFrame(channel, frame, FRAME_WRITE_NANOS);
  }

  /** As {@link #writeFrame(Wire, ByteBuffer)}, waiting at most {@code timeoutNanos} for room. */
  static boolean writeFrame(Wire channel, ByteBuffer frame, long timeoutNanos) {
    // Frames of different threads (announcements, notices) must not interleave.
    synchronized (channel.channel()) {
      try {
        if (writeWhole(channel, frame, timeoutNanos)) {
          return true;
        }
        // A frame cut short would garble the stream; a closed socket is a clear failure instead.
        LOG.warn(
            "the peer read nothing for {} ms; closing the socket rather than leave a frame cut short",
            timeoutNanos / 1_000_000);
      } catch (IOException e) {
        LOG.debug("a frame did not reach the peer: {}", e.toString());
      }
      closeQuietly(channel.channel());
      return false;
    }
  }

  /** Writes until the frame is out or {@code timeoutNanos} pass without progress. */
  private static boolean writeWhole(Wire channel, ByteBuffer frame, long timeoutNanos)
      throws IOException {
    long deadline = System.nanoTime() + timeoutNanos;
    while (frame.hasRemaining()) {
      if (channel.write(frame) > 0) {
        deadline = System.nanoTime() + timeoutNanos; // a slow reader is not a stopped one
        continue;
      }
      if (System.nanoTime() - deadline > 0) {
        return false;
      }
      LockSupport.parkNanos(FULL_BUFFER_PAUSE_NANOS);
    }
    return true;
  }

  protected CclException failure(String what, Exception e) {
    return new CclException(description + ": " + what + (e == null ? "" : ": " + e.getMessage()));
  }

  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    controlKey.cancel();
    closeQuietly(control);
    for (SocketChannel c : data) {
      closeQuietly(c);
    }
    for (SocketHelperThread h : helpers) {
      h.close();
    }
  }

  private static void closeQuietly(SocketChannel c) {
    try {
      c.close();
    } catch (IOException e) {
      LOG.debug("closing a socket", e);
    }
  }

  @Override
  public String toString() {
    return description;
  }
}
