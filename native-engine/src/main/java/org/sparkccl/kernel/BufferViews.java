package org.sparkccl.kernel;

import java.lang.ref.WeakReference;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.function.Function;
import java.util.function.ToIntFunction;

/**
 * Native-order views of whole byte buffers ({@code FloatBuffer}, {@code IntBuffer}, ...), kept
 * across calls for the buffers a thread reduces again and again: a training loop's inputs and
 * outputs, a plan's scratch, a FIFO's slots. A view of a slice costs two objects, and a mid-size
 * reduction made three or four of them per received slice (about 350 bytes; {@link Reducer}).
 *
 * <p>Found by the buffer's identity. Both the buffer and its view are held weakly: the cache pins
 * no memory, and a view the collector took is made again at the next miss. One cache belongs to one
 * thread.
 *
 * @param <V> the kind of view
 */
final class BufferViews<V> {
  /**
   * Entries; a power of two. A call touches at most three buffers, a kernel a few dozen slots. A
   * buffer may sit in any of {@link #PROBES} entries from the one its identity picks: with one
   * entry each, two buffers that met there took turns being made again on every call.
   */
  private static final int ENTRIES = 256;

  private static final int PROBES = 4;

  private final Function<ByteBuffer, V> view;
  private final ToIntFunction<Object> home;

  private final WeakReference<?>[] buffers = new WeakReference<?>[ENTRIES];

  /** The view of {@code buffers[i]}'s buffer, a {@code V}. */
  private final WeakReference<?>[] views = new WeakReference<?>[ENTRIES];

  /**
   * @param view makes the view of a whole native-order buffer (for example {@code
   *     ByteBuffer::asFloatBuffer})
   */
  BufferViews(Function<ByteBuffer, V> view) {
    this(view, System::identityHashCode);
  }

  /** A cache whose buffers start their search at {@code home}'s entry (tests choose collisions). */
  BufferViews(Function<ByteBuffer, V> view, ToIntFunction<Object> home) {
    this.view = view;
    this.home = home;
  }

  /**
   * A view in which bytes {@code [offset, offset + bytes)} of {@code buf} start at element {@link
   * #first}{@code (offset, size)}, for elements of {@code size} bytes: the cached view of the whole
   * buffer where {@code offset} is a multiple of {@code size}, else a new view of just those bytes.
   */
  @SuppressWarnings("unchecked") // views[] holds only views this cache made
  V of(ByteBuffer buf, int offset, int bytes, int size) {
    if (offset % size != 0) {
      return view.apply(buf.slice(offset, bytes).order(ByteOrder.nativeOrder()));
    }
    int first = home.applyAsInt(buf) & (ENTRIES - 1);
    int free = -1;
    for (int probe = 0; probe < PROBES; probe++) {
      int at = (first + probe) & (ENTRIES - 1);
      Object cached = views[at] == null ? null : views[at].get();
      if (cached == null) {
        free = free < 0 ? at : free;
      } else if (buffers[at].get() == buf) {
        return (V) cached;
      }
    }
    int at = free < 0 ? first : free;
    V v = view.apply(buf.slice(0, buf.capacity()).order(ByteOrder.nativeOrder()));
    buffers[at] = new WeakReference<>(buf);
    views[at] = new WeakReference<>(v);
    return v;
  }

  /** The element of {@link #of}'s view at which byte {@code offset} lies. */
  static int first(int offset, int size) {
    return offset % size == 0 ? offset / size : 0;
  }
}
