package org.sparkccl.memory;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * The check on every host {@link ByteBuffer} a device buffer copies from or to. The engine moves
 * bytes and reads them in the machine's order; a buffer in another order ({@code ByteBuffer}'s
 * default is big-endian, and {@code duplicate()}, {@code slice()} and {@code wrap()} return
 * big-endian buffers) holds numbers whose bytes are reversed, and a sum of them is garbage with no
 * error. The order is refused instead of guessed: a byte copy cannot know the element size.
 */
public final class HostOrder {
  private HostOrder() {}

  /**
   * Refuses {@code b} unless it is in the machine's order.
   *
   * @throws IllegalArgumentException when {@code b} is not in the machine's order
   */
  public static void check(ByteBuffer b, String what) {
    if (b.order() != ByteOrder.nativeOrder()) {
      throw new IllegalArgumentException(
          what
              + " is a "
              + b.order()
              + " ByteBuffer, but the engine reads and writes the machine's order ("
              + ByteOrder.nativeOrder()
              + "), so its numbers would come out wrong; call .order(ByteOrder.nativeOrder()) on"
              + " it (duplicate(), slice() and wrap() return BIG_ENDIAN buffers), or use the"
              + " typed copies such as copyFromHost(float[], long)");
    }
  }
}
