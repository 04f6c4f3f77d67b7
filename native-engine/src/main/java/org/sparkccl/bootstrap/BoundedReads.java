package org.sparkccl.bootstrap;

import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.util.concurrent.TimeUnit;

/**
 * Blocking reads of a bootstrap socket under one deadline for the whole message: a per-read timeout
 * alone would let a peer that trickles a byte at a time hold the socket for ever.
 */
final class BoundedReads {
  private BoundedReads() {}

  static void readFully(Socket s, InputStream in, byte[] b, long deadlineNanos) throws IOException {
    int off = 0;
    while (off < b.length) {
      long left = TimeUnit.NANOSECONDS.toMillis(deadlineNanos - System.nanoTime());
      if (left <= 0) {
        throw new SocketTimeoutException(
            "the deadline passed with " + off + " of " + b.length + " bytes read");
      }
      s.setSoTimeout((int) Math.min(Integer.MAX_VALUE, left));
      int n = in.read(b, off, b.length - off);
      if (n < 0) {
        throw new IOException("the connection closed after " + off + " of " + b.length + " bytes");
      }
      off += n;
    }
  }

  static int readInt(Socket s, InputStream in, long deadlineNanos) throws IOException {
    byte[] b = new byte[4];
    readFully(s, in, b, deadlineNanos);
    return (b[0] & 0xff) << 24 | (b[1] & 0xff) << 16 | (b[2] & 0xff) << 8 | (b[3] & 0xff);
  }
}
