package org.sparkccl.spark.worker;

import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import org.sparkccl.util.WireLimits;

/**
 * Frames on the channel between a Python worker and its executor: a 4-byte big-endian length, then
 * that many bytes. Every length read is checked before anything is read or allocated for it, and
 * requests are small (the data travels through shared memory), so a frame holds at most {@link
 * #MAX_FRAME} bytes. The buffers are the session's own and reused: a steady state allocates none.
 */
final class ChannelWire {
  /** The largest frame either side sends. */
  static final int MAX_FRAME = 64 * 1024;

  /** The longest string in a request (a segment name, a dtype, an op). */
  static final int MAX_STRING = 255;

  private final SocketChannel channel;
  private final ByteBuffer in = ByteBuffer.allocate(4 + MAX_FRAME).order(ByteOrder.BIG_ENDIAN);
  private final ByteBuffer out = ByteBuffer.allocate(4 + MAX_FRAME).order(ByteOrder.BIG_ENDIAN);
  private final ByteBuffer wakeIn = ByteBuffer.allocate(64);
  private final ByteBuffer wakeOut = ByteBuffer.wrap(new byte[] {ChannelProtocol.WAKE});

  ChannelWire(SocketChannel channel) {
    this.channel = channel;
  }

  /** Reads exactly {@code n} bytes into a fresh array (the handshake's fixed-size fields). */
  byte[] readExactly(int n) throws IOException {
    ByteBuffer b = ByteBuffer.allocate(n);
    fill(b);
    return b.array();
  }

  /** Writes {@code bytes} as they are (the handshake). */
  void writeRaw(byte[] bytes) throws IOException {
    ByteBuffer b = ByteBuffer.wrap(bytes);
    while (b.hasRemaining()) {
      channel.write(b);
    }
  }

  /**
   * Reads one frame; the returned buffer (positioned at the body) is valid until the next call. A
   * worker sends its next request only after the reply to the last one, so the length and the body
   * are read together, in one system call where they arrived together.
   *
   * @throws EOFException when the worker closed the connection between frames
   * @throws WireLimits.LengthRefused when the length is out of bounds
   * @throws IOException when more than one request arrived at once
   */
  ByteBuffer readFrame() throws IOException {
    in.clear();
    if (!readAtLeast(4, true)) {
      throw new EOFException("the worker closed the channel");
    }
    int length = WireLimits.checkLength(in.getInt(0), MAX_FRAME, "a Python worker's request");
    readAtLeast(4 + length, false);
    if (in.position() > 4 + length) {
      throw new IOException(
          "a Python worker sent its next request before the reply to the last one");
    }
    in.flip().position(4);
    return in;
  }

  /** The buffer to write the next frame's body into, empty. */
  ByteBuffer startFrame() {
    out.clear().position(4);
    return out;
  }

  /** Sends the frame begun with {@link #startFrame()}. */
  void sendFrame() throws IOException {
    out.putInt(0, out.position() - 4).flip();
    while (out.hasRemaining()) {
      channel.write(out);
    }
  }

  /** The request the worker left in {@code box}; as {@link #readFrame()}. */
  ByteBuffer readFrame(CallBox box) throws IOException {
    box.copyRequest(in);
    return in;
  }

  /** Puts the frame begun with {@link #startFrame()} in {@code box} as the reply to {@code seq}. */
  void sendFrame(CallBox box, long seq) {
    out.putInt(0, out.position() - 4).flip();
    box.publishReply(out, seq);
  }

  /** Wakes a worker that sleeps on the socket (one byte). */
  void wake() throws IOException {
    wakeOut.clear();
    while (wakeOut.hasRemaining()) {
      channel.write(wakeOut);
    }
  }

  /**
   * Sleeps until the worker writes to the socket (a wake-up: its bytes carry nothing).
   *
   * @throws EOFException when the worker closed the connection
   */
  void awaitWake() throws IOException {
    wakeIn.clear();
    if (channel.read(wakeIn) < 0) {
      throw new EOFException("the worker closed the channel");
    }
  }

  /** A string of at most {@link #MAX_STRING} bytes: a 2-byte length and UTF-8. */
  static String getString(ByteBuffer b) throws IOException {
    int n = WireLimits.checkLength(b.getShort() & 0xffff, MAX_STRING, "a string in a request");
    byte[] s = new byte[n];
    b.get(s);
    return new String(s, StandardCharsets.UTF_8);
  }

  /** An error message: a 4-byte length and UTF-8, cut to fit a frame. */
  static void putMessage(ByteBuffer b, String message) {
    byte[] s = message.getBytes(StandardCharsets.UTF_8);
    int n = Math.min(s.length, b.remaining() - 4);
    b.putInt(n).put(s, 0, n);
  }

  private void fill(ByteBuffer b) throws IOException {
    int start = b.position();
    while (b.hasRemaining()) {
      if (channel.read(b) < 0) {
        throw new EOFException(
            "the worker closed the channel after "
                + (b.position() - start)
                + " of "
                + (b.limit() - start)
                + " bytes");
      }
    }
  }

  /**
   * Reads into {@link #in} until it holds at least {@code n} bytes; false when the stream ended
   * before the first byte and {@code eofAllowed}.
   */
  private boolean readAtLeast(int n, boolean eofAllowed) throws IOException {
    while (in.position() < n) {
      if (channel.read(in) < 0) {
        if (eofAllowed && in.position() == 0) {
          return false;
        }
        throw new EOFException(
            "the worker closed the channel after " + in.position() + " of " + n + " bytes");
      }
    }
    return true;
  }
}
