package org.sparkccl.transport.socket;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;

/**
 * How a connection's bytes meet its socket: as they are ({@link PlainWire}) or sealed ({@link
 * SealedWire}). The socket's non-blocking contract holds for both: a read or write moves what it
 * can now and says how many of the caller's bytes it moved; a buffer is done when it has nothing
 * remaining. A sealed wire may hold bytes the caller has not taken yet, so callers read again
 * whenever they want more, not only when the selector reports the socket.
 */
interface Wire {
  /** The socket underneath, for the selector and for closing. */
  SocketChannel channel();

  /** Reads into {@code dst}; returns the bytes moved, or -1 at the end of the stream. */
  int read(ByteBuffer dst) throws IOException;

  /** Writes from {@code src}; returns the bytes that are now on their way. */
  int write(ByteBuffer src) throws IOException;

  /** Writes from {@code srcs} in order; returns the bytes that are now on their way. */
  long write(ByteBuffer[] srcs) throws IOException;
}
