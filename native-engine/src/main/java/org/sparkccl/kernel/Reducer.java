package org.sparkccl.kernel;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.DoubleBuffer;
import java.nio.FloatBuffer;
import java.nio.IntBuffer;
import java.nio.LongBuffer;
import java.nio.ShortBuffer;
import java.util.function.LongBinaryOperator;
import org.sparkccl.DataType;
import org.sparkccl.ReduceOp;

/**
 * Element-wise reductions over host memory: {@code out[i] = a[i] op b[i]} for every data type and
 * operator. Offsets are in bytes, counts in elements; buffers are native order. {@code AVG} reduces
 * as {@code SUM}; the final division is {@link #divide}. Half-precision types are computed in
 * float32 and rounded once per operation, as a GPU's half adds do.
 */
public final class Reducer {
  private Reducer() {}

  public static void reduce(
      DataType type,
      ReduceOp op,
      ByteBuffer a,
      int ao,
      ByteBuffer b,
      int bo,
      ByteBuffer out,
      int oo,
      int count) {
    reduce(type, op, a, ao, b, bo, out, oo, count, false);
  }

  /**
   * {@link #reduce}, then every NaN of the result rewritten as the one canonical quiet NaN ({@link
   * NanBits}), for ranks that each compute a sum themselves. Float and double results are checked
   * block by block right after each block is written, while it is in the cache, by a bulk copy of
   * its bits and a vectorised integer scan; only a block that holds a NaN is looked at element by
   * element (the pass over every element's bits through the buffer cost as much as the sum: {@code
   * java bench/micro/NanPassCost.java}).
   */
  public static void reduceCanonical(
      DataType type,
      ReduceOp op,
      ByteBuffer a,
      int ao,
      ByteBuffer b,
      int bo,
      ByteBuffer out,
      int oo,
      int count) {
    reduce(type, op, a, ao, b, bo, out, oo, count, true);
  }

  private static void reduce(
      DataType type,
      ReduceOp op,
      ByteBuffer a,
      int ao,
      ByteBuffer b,
      int bo,
      ByteBuffer out,
      int oo,
      int count,
      boolean canonical) {
    switch (type) {
      case FLOAT32 -> float32(op, a, ao, b, bo, out, oo, count, canonical);
      case FLOAT64 -> float64(op, a, ao, b, bo, out, oo, count, canonical);
      case FLOAT16, BFLOAT16 -> half(type, op, a, ao, b, bo, out, oo, count);
      default -> integer(type, op, a, ao, b, bo, out, oo, count);
    }
    boolean inBlocks = type == DataType.FLOAT32 || type == DataType.FLOAT64;
    if (canonical && !inBlocks) {
      NanBits.canonicalize(type, out, oo, count);
    }
  }

  /**
   * Reductions of more than {@link #SCALAR_MAX} elements, of every type, go through small on-heap
   * blocks: bulk copies in and out run at memcpy speed and the loop over arrays is one C2
   * vectorises (for float32 about 1.35x faster than element accessors on direct buffers; the
   * others' conversions or operator functions made theirs 7-20x slower). The copies go through
   * typed views of the buffers, cached per thread ({@link BufferViews}): made per call they were
   * six objects, about 230-290 bytes, and a 4 KiB sum took 0.34-0.42 us against 0.20-0.21 with them
   * cached ({@code bench/micro/ReduceSpeed.java} on a 2-core machine). A block is 4 KiB of elements
   * (1,024 floats, 512 doubles), so that both blocks and the lines streaming through stay in the
   * first-level cache: blocks of 16 KiB (float32) and 32 KiB (float64) took 1.3-1.6x the time of 4
   * KiB ones for a 256 KiB or 4 MiB sum on the same machine.
   */
  private static final int BLOCK_BYTES = 4096;

  private static final int FLOAT_BLOCK = BLOCK_BYTES / Float.BYTES;
  private static final int DOUBLE_BLOCK = BLOCK_BYTES / Double.BYTES;
  private static final int HALF_BLOCK = BLOCK_BYTES / Short.BYTES;

  private static final ThreadLocal<Workspace> WORKSPACE = ThreadLocal.withInitial(Workspace::new);

  /**
   * One thread's blocks and cached views ({@link BufferViews}); the blocks of a type are made when
   * the thread first reduces that type.
   */
  private static final class Workspace {
    final BufferViews<FloatBuffer> floats = new BufferViews<>(ByteBuffer::asFloatBuffer);
    final BufferViews<DoubleBuffer> doubles = new BufferViews<>(ByteBuffer::asDoubleBuffer);
    final BufferViews<IntBuffer> ints = new BufferViews<>(ByteBuffer::asIntBuffer);
    final BufferViews<LongBuffer> longs = new BufferViews<>(ByteBuffer::asLongBuffer);
    final BufferViews<ShortBuffer> shorts = new BufferViews<>(ByteBuffer::asShortBuffer);
    float[] floatX;
    float[] floatY;
    int[] floatBits;
    double[] doubleX;
    double[] doubleY;
    long[] doubleBits;
    short[] halfX;
    short[] halfY;
    byte[] byteX;
    byte[] byteY;
    int[] intX;
    int[] intY;
    long[] longX;
    long[] longY;

    void floatBlocks() {
      if (floatX == null) {
        floatX = new float[FLOAT_BLOCK];
        floatY = new float[FLOAT_BLOCK];
        floatBits = new int[FLOAT_BLOCK];
      }
    }

    void doubleBlocks() {
      if (doubleX == null) {
        doubleX = new double[DOUBLE_BLOCK];
        doubleY = new double[DOUBLE_BLOCK];
        doubleBits = new long[DOUBLE_BLOCK];
      }
    }

    void halfBlocks() {
      if (halfX == null) {
        halfX = new short[HALF_BLOCK];
        halfY = new short[HALF_BLOCK];
      }
    }

    void byteBlocks() {
      if (byteX == null) {
        byteX = new byte[BLOCK_BYTES];
        byteY = new byte[BLOCK_BYTES];
      }
    }

    void intBlocks() {
      if (intX == null) {
        intX = new int[FLOAT_BLOCK];
        intY = new int[FLOAT_BLOCK];
      }
    }

    void longBlocks() {
      if (longX == null) {
        longX = new long[DOUBLE_BLOCK];
        longY = new long[DOUBLE_BLOCK];
      }
    }
  }

  /**
   * Up to this many elements are reduced one by one through the buffers themselves, the path small
   * collectives were measured with; the block path (a thread's workspace, three view lookups, three
   * bulk copies) is made for larger slices.
   */
  static final int SCALAR_MAX = 64;

  private static boolean scalar(int n, ByteBuffer a, ByteBuffer b, ByteBuffer o) {
    ByteOrder nat = ByteOrder.nativeOrder();
    return n <= SCALAR_MAX && a.order() == nat && b.order() == nat && o.order() == nat;
  }

  private static float apply(ReduceOp op, float x, float y) {
    return switch (op) {
      case SUM, AVG -> x + y;
      case PROD -> x * y;
      case MIN -> Math.min(x, y);
      case MAX -> Math.max(x, y);
    };
  }

  private static double apply(ReduceOp op, double x, double y) {
    return switch (op) {
      case SUM, AVG -> x + y;
      case PROD -> x * y;
      case MIN -> Math.min(x, y);
      case MAX -> Math.max(x, y);
    };
  }

  private static void float32(
      ReduceOp op,
      ByteBuffer a,
      int ao,
      ByteBuffer b,
      int bo,
      ByteBuffer o,
      int oo,
      int n,
      boolean canonical) {
    if (scalar(n, a, b, o)) {
      for (int i = 0; i < 4 * n; i += 4) {
        o.putFloat(oo + i, apply(op, a.getFloat(ao + i), b.getFloat(bo + i)));
      }
      if (canonical) {
        NanBits.canonicalize(DataType.FLOAT32, o, oo, n);
      }
      return;
    }
    Workspace ws = WORKSPACE.get();
    ws.floatBlocks();
    float[] x = ws.floatX;
    float[] y = ws.floatY;
    FloatBuffer fa = ws.floats.of(a, ao, 4 * n, 4);
    FloatBuffer fb = ws.floats.of(b, bo, 4 * n, 4);
    FloatBuffer fo = ws.floats.of(o, oo, 4 * n, 4);
    IntBuffer bits = canonical ? ws.ints.of(o, oo, 4 * n, 4) : null;
    int ai = BufferViews.first(ao, 4);
    int bi = BufferViews.first(bo, 4);
    int oi = BufferViews.first(oo, 4);
    for (int base = 0; base < n; base += FLOAT_BLOCK) {
      int len = Math.min(FLOAT_BLOCK, n - base);
      fa.get(ai + base, x, 0, len);
      fb.get(bi + base, y, 0, len);
      switch (op) {
        case SUM, AVG -> {
          for (int i = 0; i < len; i++) {
            x[i] += y[i];
          }
        }
        case PROD -> {
          for (int i = 0; i < len; i++) {
            x[i] *= y[i];
          }
        }
        case MIN -> {
          for (int i = 0; i < len; i++) {
            x[i] = Math.min(x[i], y[i]);
          }
        }
        case MAX -> {
          for (int i = 0; i < len; i++) {
            x[i] = Math.max(x[i], y[i]);
          }
        }
      }
      fo.put(oi + base, x, 0, len);
      if (canonical) {
        NanBits.canonicalize(bits, oi + base, ws.floatBits, len);
      }
    }
  }

  private static void float64(
      ReduceOp op,
      ByteBuffer a,
      int ao,
      ByteBuffer b,
      int bo,
      ByteBuffer o,
      int oo,
      int n,
      boolean canonical) {
    if (scalar(n, a, b, o)) {
      for (int i = 0; i < 8 * n; i += 8) {
        o.putDouble(oo + i, apply(op, a.getDouble(ao + i), b.getDouble(bo + i)));
      }
      if (canonical) {
        NanBits.canonicalize(DataType.FLOAT64, o, oo, n);
      }
      return;
    }
    Workspace ws = WORKSPACE.get();
    ws.doubleBlocks();
    double[] x = ws.doubleX;
    double[] y = ws.doubleY;
    DoubleBuffer fa = ws.doubles.of(a, ao, 8 * n, 8);
    DoubleBuffer fb = ws.doubles.of(b, bo, 8 * n, 8);
    DoubleBuffer fo = ws.doubles.of(o, oo, 8 * n, 8);
    LongBuffer bits = canonical ? ws.longs.of(o, oo, 8 * n, 8) : null;
    int ai = BufferViews.first(ao, 8);
    int bi = BufferViews.first(bo, 8);
    int oi = BufferViews.first(oo, 8);
    for (int base = 0; base < n; base += DOUBLE_BLOCK) {
      int len = Math.min(DOUBLE_BLOCK, n - base);
      fa.get(ai + base, x, 0, len);
      fb.get(bi + base, y, 0, len);
      switch (op) {
        case SUM, AVG -> {
          for (int i = 0; i < len; i++) {
            x[i] += y[i];
          }
        }
        case PROD -> {
          for (int i = 0; i < len; i++) {
            x[i] *= y[i];
          }
        }
        case MIN -> {
          for (int i = 0; i < len; i++) {
            x[i] = Math.min(x[i], y[i]);
          }
        }
        case MAX -> {
          for (int i = 0; i < len; i++) {
            x[i] = Math.max(x[i], y[i]);
          }
        }
      }
      fo.put(oi + base, x, 0, len);
      if (canonical) {
        NanBits.canonicalize(bits, oi + base, ws.doubleBits, len);
      }
    }
  }

  /**
   * Half-precision elements through blocks of shorts: bulk copies in and out, and a loop over
   * arrays in between (element by element through the buffers, a 256 KiB sum took 1,682 us in
   * float16 and 286 in bfloat16 against 18 in float32 on a 2-core machine: {@code
   * bench/micro/ReduceTypes.java}).
   */
  private static void half(
      DataType type,
      ReduceOp op,
      ByteBuffer a,
      int ao,
      ByteBuffer b,
      int bo,
      ByteBuffer o,
      int oo,
      int n) {
    boolean bf = type == DataType.BFLOAT16;
    if (scalar(n, a, b, o)) {
      for (int i = 0; i < 2 * n; i += 2) {
        float x = toFloat(bf, a.getShort(ao + i));
        float y = toFloat(bf, b.getShort(bo + i));
        o.putShort(oo + i, fromFloat(bf, apply(op, x, y)));
      }
      return;
    }
    Workspace ws = WORKSPACE.get();
    ws.halfBlocks();
    short[] x = ws.halfX;
    short[] y = ws.halfY;
    ShortBuffer sa = ws.shorts.of(a, ao, 2 * n, 2);
    ShortBuffer sb = ws.shorts.of(b, bo, 2 * n, 2);
    ShortBuffer so = ws.shorts.of(o, oo, 2 * n, 2);
    int ai = BufferViews.first(ao, 2);
    int bi = BufferViews.first(bo, 2);
    int oi = BufferViews.first(oo, 2);
    for (int base = 0; base < n; base += HALF_BLOCK) {
      int len = Math.min(HALF_BLOCK, n - base);
      sa.get(ai + base, x, 0, len);
      sb.get(bi + base, y, 0, len);
      if (bf) {
        bfloat16Block(op, x, y, len);
      } else {
        float16Block(op, x, y, len);
      }
      so.put(oi + base, x, 0, len);
    }
  }

  /** {@code x[i] = x[i] op y[i]} for bfloat16 bits, the sum in its own loop. */
  private static void bfloat16Block(ReduceOp op, short[] x, short[] y, int len) {
    if (op == ReduceOp.SUM || op == ReduceOp.AVG) {
      for (int i = 0; i < len; i++) {
        // a short shifted left by 16 keeps exactly its 16 bits, sign extension shifted out
        float sum = Float.intBitsToFloat(x[i] << 16) + Float.intBitsToFloat(y[i] << 16);
        x[i] = HalfFloats.floatToBfloat16(sum);
      }
      return;
    }
    for (int i = 0; i < len; i++) {
      float r = apply(op, Float.intBitsToFloat(x[i] << 16), Float.intBitsToFloat(y[i] << 16));
      x[i] = HalfFloats.floatToBfloat16(r);
    }
  }

  /** {@code x[i] = x[i] op y[i]} for float16 bits, the sum in its own loop. */
  private static void float16Block(ReduceOp op, short[] x, short[] y, int len) {
    if (op == ReduceOp.SUM || op == ReduceOp.AVG) {
      for (int i = 0; i < len; i++) {
        x[i] = HalfFloats.floatToHalf(HalfFloats.halfToFloat(x[i]) + HalfFloats.halfToFloat(y[i]));
      }
      return;
    }
    for (int i = 0; i < len; i++) {
      float r = apply(op, HalfFloats.halfToFloat(x[i]), HalfFloats.halfToFloat(y[i]));
      x[i] = HalfFloats.floatToHalf(r);
    }
  }

  private static float toFloat(boolean bf, short s) {
    return bf ? HalfFloats.bfloat16ToFloat(s) : HalfFloats.halfToFloat(s);
  }

  private static short fromFloat(boolean bf, float f) {
    return bf ? HalfFloats.floatToBfloat16(f) : HalfFloats.floatToHalf(f);
  }

  /** Integer types computed in 64 bits, extended by signedness, truncated on store. */
  private static void integer(
      DataType type,
      ReduceOp op,
      ByteBuffer a,
      int ao,
      ByteBuffer b,
      int bo,
      ByteBuffer o,
      int oo,
      int n) {
    LongBinaryOperator f = integerOp(type, op);
    boolean signed = type.isSigned();
    switch (type.size()) {
      case 1 -> {
        if (n > SCALAR_MAX) {
          int8(op, signed, a, ao, b, bo, o, oo, n);
          return;
        }
        for (int i = 0; i < n; i++) {
          long x = signed ? a.get(ao + i) : a.get(ao + i) & 0xffL;
          long y = signed ? b.get(bo + i) : b.get(bo + i) & 0xffL;
          o.put(oo + i, (byte) f.applyAsLong(x, y));
        }
      }
      case 4 -> {
        if (!scalar(n, a, b, o)) {
          int32(op, signed, a, ao, b, bo, o, oo, n);
          return;
        }
        for (int i = 0; i < 4 * n; i += 4) {
          long x = signed ? a.getInt(ao + i) : a.getInt(ao + i) & 0xffffffffL;
          long y = signed ? b.getInt(bo + i) : b.getInt(bo + i) & 0xffffffffL;
          o.putInt(oo + i, (int) f.applyAsLong(x, y));
        }
      }
      default -> {
        if (!scalar(n, a, b, o)) {
          int64(op, signed, a, ao, b, bo, o, oo, n);
          return;
        }
        for (int i = 0; i < 8 * n; i += 8) {
          o.putLong(oo + i, f.applyAsLong(a.getLong(ao + i), b.getLong(bo + i)));
        }
      }
    }
  }

  /**
   * 8-bit integers through blocks, as {@link #int32}; bytes need no view (byte order does not
   * apply), the bulk copies are the buffers' own.
   */
  private static void int8(
      ReduceOp op,
      boolean signed,
      ByteBuffer a,
      int ao,
      ByteBuffer b,
      int bo,
      ByteBuffer o,
      int oo,
      int n) {
    Workspace ws = WORKSPACE.get();
    ws.byteBlocks();
    byte[] x = ws.byteX;
    byte[] y = ws.byteY;
    int flip = signed ? 0 : Byte.MIN_VALUE;
    for (int base = 0; base < n; base += BLOCK_BYTES) {
      int len = Math.min(BLOCK_BYTES, n - base);
      a.get(ao + base, x, 0, len);
      b.get(bo + base, y, 0, len);
      switch (op) {
        case SUM, AVG -> {
          for (int i = 0; i < len; i++) {
            x[i] += y[i];
          }
        }
        case PROD -> {
          for (int i = 0; i < len; i++) {
            x[i] *= y[i];
          }
        }
        case MIN -> {
          for (int i = 0; i < len; i++) {
            x[i] = (byte) (Math.min((byte) (x[i] ^ flip), (byte) (y[i] ^ flip)) ^ flip);
          }
        }
        case MAX -> {
          for (int i = 0; i < len; i++) {
            x[i] = (byte) (Math.max((byte) (x[i] ^ flip), (byte) (y[i] ^ flip)) ^ flip);
          }
        }
      }
      o.put(oo + base, x, 0, len);
    }
  }

  /**
   * 32-bit integers through blocks, one loop per operator: through the buffers with the operator a
   * function, int32 sums ran at 2.3 GB/s on a 2-core machine. Sums and products keep the low 32
   * bits whatever the signedness; unsigned order is signed order with the sign bit flipped.
   */
  private static void int32(
      ReduceOp op,
      boolean signed,
      ByteBuffer a,
      int ao,
      ByteBuffer b,
      int bo,
      ByteBuffer o,
      int oo,
      int n) {
    Workspace ws = WORKSPACE.get();
    ws.intBlocks();
    int[] x = ws.intX;
    int[] y = ws.intY;
    IntBuffer ia = ws.ints.of(a, ao, 4 * n, 4);
    IntBuffer ib = ws.ints.of(b, bo, 4 * n, 4);
    IntBuffer io = ws.ints.of(o, oo, 4 * n, 4);
    int ai = BufferViews.first(ao, 4);
    int bi = BufferViews.first(bo, 4);
    int oi = BufferViews.first(oo, 4);
    int flip = signed ? 0 : Integer.MIN_VALUE;
    for (int base = 0; base < n; base += FLOAT_BLOCK) {
      int len = Math.min(FLOAT_BLOCK, n - base);
      ia.get(ai + base, x, 0, len);
      ib.get(bi + base, y, 0, len);
      switch (op) {
        case SUM, AVG -> {
          for (int i = 0; i < len; i++) {
            x[i] += y[i];
          }
        }
        case PROD -> {
          for (int i = 0; i < len; i++) {
            x[i] *= y[i];
          }
        }
        case MIN -> {
          for (int i = 0; i < len; i++) {
            x[i] = Math.min(x[i] ^ flip, y[i] ^ flip) ^ flip;
          }
        }
        case MAX -> {
          for (int i = 0; i < len; i++) {
            x[i] = Math.max(x[i] ^ flip, y[i] ^ flip) ^ flip;
          }
        }
      }
      io.put(oi + base, x, 0, len);
    }
  }

  /** {@link #int32} for 64-bit integers. */
  private static void int64(
      ReduceOp op,
      boolean signed,
      ByteBuffer a,
      int ao,
      ByteBuffer b,
      int bo,
      ByteBuffer o,
      int oo,
      int n) {
    Workspace ws = WORKSPACE.get();
    ws.longBlocks();
    long[] x = ws.longX;
    long[] y = ws.longY;
    LongBuffer la = ws.longs.of(a, ao, 8 * n, 8);
    LongBuffer lb = ws.longs.of(b, bo, 8 * n, 8);
    LongBuffer lo = ws.longs.of(o, oo, 8 * n, 8);
    int ai = BufferViews.first(ao, 8);
    int bi = BufferViews.first(bo, 8);
    int oi = BufferViews.first(oo, 8);
    long flip = signed ? 0 : Long.MIN_VALUE;
    for (int base = 0; base < n; base += DOUBLE_BLOCK) {
      int len = Math.min(DOUBLE_BLOCK, n - base);
      la.get(ai + base, x, 0, len);
      lb.get(bi + base, y, 0, len);
      switch (op) {
        case SUM, AVG -> {
          for (int i = 0; i < len; i++) {
            x[i] += y[i];
          }
        }
        case PROD -> {
          for (int i = 0; i < len; i++) {
            x[i] *= y[i];
          }
        }
        case MIN -> {
          for (int i = 0; i < len; i++) {
            x[i] = Math.min(x[i] ^ flip, y[i] ^ flip) ^ flip;
          }
        }
        case MAX -> {
          for (int i = 0; i < len; i++) {
            x[i] = Math.max(x[i] ^ flip, y[i] ^ flip) ^ flip;
          }
        }
      }
      lo.put(oi + base, x, 0, len);
    }
  }

  private static LongBinaryOperator integerOp(DataType type, ReduceOp op) {
    boolean unsigned64 = type == DataType.UINT64;
    return switch (op) {
      case SUM, AVG -> Long::sum;
      case PROD -> (x, y) -> x * y;
      case MIN -> unsigned64 ? (x, y) -> Long.compareUnsigned(x, y) <= 0 ? x : y : Math::min;
      case MAX -> unsigned64 ? (x, y) -> Long.compareUnsigned(x, y) >= 0 ? x : y : Math::max;
    };
  }

  /** {@code buf[i] /= divisor} for floating-point types: the last step of {@code AVG}. */
  public static void divide(DataType type, ByteBuffer buf, int off, int count, int divisor) {
    if (divisor == 1) {
      return;
    }
    boolean blocks = count > SCALAR_MAX && buf.order() == ByteOrder.nativeOrder();
    switch (type) {
      case FLOAT32 -> {
        if (blocks) {
          divideFloats(buf, off, count, divisor);
          return;
        }
        for (int i = 0; i < 4 * count; i += 4) {
          buf.putFloat(off + i, buf.getFloat(off + i) / divisor);
        }
      }
      case FLOAT64 -> {
        if (blocks) {
          divideDoubles(buf, off, count, divisor);
          return;
        }
        for (int i = 0; i < 8 * count; i += 8) {
          buf.putDouble(off + i, buf.getDouble(off + i) / divisor);
        }
      }
      case FLOAT16, BFLOAT16 -> {
        boolean bf = type == DataType.BFLOAT16;
        for (int i = 0; i < 2 * count; i += 2) {
          buf.putShort(off + i, fromFloat(bf, toFloat(bf, buf.getShort(off + i)) / divisor));
        }
      }
      default -> throw new IllegalArgumentException("avg is not defined for dtype=" + type);
    }
  }

  /**
   * {@link #divide} of float32 through the thread's blocks, as the sums go: the element loop over a
   * direct buffer ran at about half their speed.
   */
  private static void divideFloats(ByteBuffer buf, int off, int count, int divisor) {
    Workspace ws = WORKSPACE.get();
    ws.floatBlocks();
    float[] x = ws.floatX;
    FloatBuffer view = ws.floats.of(buf, off, 4 * count, 4);
    int first = BufferViews.first(off, 4);
    for (int base = 0; base < count; base += FLOAT_BLOCK) {
      int len = Math.min(FLOAT_BLOCK, count - base);
      view.get(first + base, x, 0, len);
      for (int i = 0; i < len; i++) {
        x[i] /= divisor;
      }
      view.put(first + base, x, 0, len);
    }
  }

  /** {@link #divideFloats} for float64. */
  private static void divideDoubles(ByteBuffer buf, int off, int count, int divisor) {
    Workspace ws = WORKSPACE.get();
    ws.doubleBlocks();
    double[] x = ws.doubleX;
    DoubleBuffer view = ws.doubles.of(buf, off, 8 * count, 8);
    int first = BufferViews.first(off, 8);
    for (int base = 0; base < count; base += DOUBLE_BLOCK) {
      int len = Math.min(DOUBLE_BLOCK, count - base);
      view.get(first + base, x, 0, len);
      for (int i = 0; i < len; i++) {
        x[i] /= divisor;
      }
      view.put(first + base, x, 0, len);
    }
  }
}
