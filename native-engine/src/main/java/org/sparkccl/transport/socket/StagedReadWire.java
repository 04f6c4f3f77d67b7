package org.sparkccl.transport.socket;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;

/**
 * A wire whose small reads go through a buffer of its own, so that a small frame's header and
 * payload arrive in one read call, not one each (a system call costs about a microsecond, a good
 * part of an 8-byte step). Reads of {@link #STAGE_BYTES} or more go straight into the caller's
 * buffer once what is staged is used up, so large payloads are not copied twice. Writes pass
 * through.
 *
 * <p>Like a {@link SealedWire}, this wire may hold bytes the caller has not taken yet; its callers
 * read whenever they want more, not only when the selector reports the socket.
 */
final class StagedReadWire implements Wire {
  /**
   * The staging buffer's size (a small frame and the headers of several that follow it), and from
   * how many bytes wanted a read skips it.
   */
  static final int STAGE_BYTES = 16 << 10;

  private final Wire inner;

  /**
   * Bytes read from {@link #inner} and not yet handed out; always ready to be read from. Direct, so
   * that a read lands here at once: NIO reads into a heap buffer through a temporary direct one and
   * copies, a second copy of up to 16 KiB a frame. Freed by the collector, never explicitly, so a
   * proxy thread that outlived its stop deadline can never read freed memory.
   */
  private final ByteBuffer staged = ByteBuffer.allocateDirect(STAGE_BYTES).limit(0);

  StagedReadWire(Wire inner) {
    this.inner = inner;
  }

  @Override
  public SocketChannel channel() {
    return inner.channel();
  }

  @Override
  public int read(ByteBuffer dst) throws IOException {
    int moved = drainInto(dst);
    if (!dst.hasRemaining()) {
      return moved;
    }
    int n;
    if (dst.remaining() >= STAGE_BYTES) {
      n = inner.read(dst);
      if (n > 0) {
        moved += n;
      }
    } else {
      staged.clear();
      n = inner.read(staged);
      staged.flip();
      moved += drainInto(dst);
    }
    return n < 0 && moved == 0 ? -1 : moved;
  }

  /** Moves what is staged, as much as fits, into {@code dst}. */
  private int drainInto(ByteBuffer dst) {
    int n = Math.min(staged.remaining(), dst.remaining());
    if (n > 0) {
      dst.put(dst.position(), staged, staged.position(), n);
      dst.position(dst.position() + n);
      staged.position(staged.position() + n);
    }
    return n;
  }

  @Override
  public int write(ByteBuffer src) throws IOException {
    return inner.write(src);
  }

  @Override
  public long write(ByteBuffer[] srcs) throws IOException {
    return inner.write(srcs);
  }
}
