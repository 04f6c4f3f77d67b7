package org.sparkccl.kernel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.sparkccl.DataType;
import org.sparkccl.ReduceOp;

@DisplayName("buffer views")
class BufferViewsTest {
  private static ByteBuffer randomFloats(boolean direct, int floats, SplittableRandom rnd) {
    ByteBuffer b =
        (direct ? ByteBuffer.allocateDirect(4 * floats) : ByteBuffer.allocate(4 * floats))
            .order(ByteOrder.nativeOrder());
    for (int i = 0; i < floats; i++) {
      b.putFloat(4 * i, (float) rnd.nextDouble(-100, 100));
    }
    return b;
  }

  @Test
  @DisplayName(
      "buffers whose identities pick one entry each keep a view, up to the entries searched")
  void collidingBuffersKeepTheirViews() {
    SplittableRandom rnd = new SplittableRandom(5);
    // every buffer starts its search at entry 7: the worst case of the identity hash
    BufferViews<FloatBuffer> views = new BufferViews<>(ByteBuffer::asFloatBuffer, b -> 7);
    List<ByteBuffer> buffers = new ArrayList<>();
    List<FloatBuffer> first = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      ByteBuffer b = randomFloats(i % 2 == 0, 1 + rnd.nextInt(64), rnd);
      buffers.add(b);
      first.add(views.of(b, 0, b.capacity(), 4));
    }
    for (int pass = 0; pass < 3; pass++) {
      for (int i = 0; i < buffers.size(); i++) {
        assertSame(first.get(i), views.of(buffers.get(i), 0, 4, 4), "buffer " + i);
      }
    }
    // a fifth takes the first one's entry; from then on each is right, made again or not
    buffers.add(randomFloats(true, 16, rnd));
    for (int pass = 0; pass < 3; pass++) {
      for (int i = 0; i < buffers.size(); i++) {
        ByteBuffer b = buffers.get(i);
        int k = rnd.nextInt(b.capacity() / 4);
        FloatBuffer v = views.of(b, 4 * k, b.capacity() - 4 * k, 4);
        assertEquals(b.getFloat(4 * k), v.get(BufferViews.first(4 * k, 4)), 0f, "buffer " + i);
      }
    }
  }

  @Test
  @DisplayName("an offset that is no multiple of the element size gets a view from that byte")
  void offsetsBetweenElementsGetTheirOwnView() {
    ByteBuffer b = ByteBuffer.allocateDirect(64).order(ByteOrder.nativeOrder());
    b.putFloat(6, 1.5f);
    BufferViews<FloatBuffer> views = new BufferViews<>(ByteBuffer::asFloatBuffer);
    FloatBuffer v = views.of(b, 6, 40, 4);
    assertEquals(0, BufferViews.first(6, 4));
    assertEquals(1.5f, v.get(0), 0f);
    assertEquals(10, v.capacity());
  }

  @Test
  @DisplayName("a buffer's position and a slice's start do not move its view")
  void positionsAndSlicesKeepTheirByteZero() {
    SplittableRandom rnd = new SplittableRandom(9);
    ByteBuffer whole = randomFloats(true, 32, rnd);
    ByteBuffer slice = whole.slice(16, 64).order(ByteOrder.nativeOrder());
    whole.position(12);
    slice.position(8);
    BufferViews<FloatBuffer> views = new BufferViews<>(ByteBuffer::asFloatBuffer);
    assertEquals(whole.getFloat(20), views.of(whole, 20, 8, 4).get(5), 0f);
    assertEquals(whole.getFloat(36), views.of(slice, 20, 8, 4).get(5), 0f);
  }

  @Test
  @DisplayName("the reducer is right on buffers it saw before, at other offsets, aligned or not")
  void reducerReusesViewsAtOtherOffsets() {
    SplittableRandom rnd = new SplittableRandom(13);
    int n = 1000; // past Reducer.SCALAR_MAX: the block path
    ByteBuffer a = randomFloats(true, n + 8, rnd);
    ByteBuffer b = randomFloats(false, n + 8, rnd);
    ByteBuffer out = ByteBuffer.allocateDirect(4 * (n + 8)).order(ByteOrder.nativeOrder());
    int[][] offsets = {{0, 4, 8}, {8, 0, 4}, {2, 6, 3}, {4, 8, 0}};
    for (int[] o : offsets) {
      Reducer.reduce(DataType.FLOAT32, ReduceOp.SUM, a, o[0], b, o[1], out, o[2], n);
      for (int i = 0; i < n; i++) {
        float expected = a.getFloat(o[0] + 4 * i) + b.getFloat(o[1] + 4 * i);
        assertEquals(
            expected,
            out.getFloat(o[2] + 4 * i),
            0f,
            "offsets " + o[0] + ", " + o[1] + ", " + o[2] + ": element " + i);
      }
    }
  }
}
