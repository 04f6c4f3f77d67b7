package org.sparkccl.transport.ucx;

import java.nio.ByteBuffer;
import org.sparkccl.CclException;

/**
 * What one rank publishes through the bootstrap for the UCX transport: its worker address and, per
 * channel, where its receive FIFO slots and its side area ({@link UcxLayout}) are, with their
 * packed remote keys.
 */
record UcxRankInfo(byte[] workerAddress, Region[] recvSlots, Region[] sideAreas) {
  /** A registered memory region: its address in the owner's process and its packed rkey. */
  record Region(long address, byte[] rkey) {}

  byte[] encode() {
    int bytes = 8 + workerAddress.length;
    for (int c = 0; c < recvSlots.length; c++) {
      bytes += 24 + recvSlots[c].rkey().length + sideAreas[c].rkey().length;
    }
    ByteBuffer b = ByteBuffer.allocate(bytes);
    b.putInt(workerAddress.length).put(workerAddress).putInt(recvSlots.length);
    for (int c = 0; c < recvSlots.length; c++) {
      put(b, recvSlots[c]);
      put(b, sideAreas[c]);
    }
    return b.array();
  }

  private static void put(ByteBuffer b, Region r) {
    b.putLong(r.address()).putInt(r.rkey().length).put(r.rkey());
  }

  static UcxRankInfo decode(byte[] bytes, int rank) {
    try {
      ByteBuffer b = ByteBuffer.wrap(bytes);
      byte[] address = new byte[length(b, 1)];
      b.get(address);
      int n = length(b, 2 * (8 + 4));
      Region[] slots = new Region[n];
      Region[] sides = new Region[n];
      for (int c = 0; c < n; c++) {
        slots[c] = region(b);
        sides[c] = region(b);
      }
      return new UcxRankInfo(address, slots, sides);
    } catch (RuntimeException e) {
      throw new CclException("the UCX details rank " + rank + " published are malformed: " + e);
    }
  }

  private static Region region(ByteBuffer b) {
    long address = b.getLong();
    byte[] rkey = new byte[length(b, 1)];
    b.get(rkey);
    return new Region(address, rkey);
  }

  /**
   * A count of items of at least {@code minBytes} each, checked against what is left before
   * anything is allocated for it.
   */
  private static int length(ByteBuffer b, int minBytes) {
    int n = b.getInt();
    if (n < 0 || n > b.remaining() / minBytes) {
      throw new IllegalArgumentException(
          "a count of " + n + " with " + b.remaining() + " bytes left");
    }
    return n;
  }
}
