package org.sparkccl.kernel;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.SplittableRandom;

/** Float operands for tests that play a kernel's peer: random values, direct buffers and back. */
final class KernelTestFloats {
  private KernelTestFloats() {}

  /** {@code n} floats in [-100, 100) from {@code seed}. */
  static float[] randomFloats(int n, long seed) {
    SplittableRandom r = new SplittableRandom(seed);
    float[] f = new float[n];
    for (int i = 0; i < n; i++) {
      f[i] = (float) (r.nextDouble() * 200 - 100);
    }
    return f;
  }

  /** A direct buffer holding {@code f} in native order, as the engine's host buffers are. */
  static ByteBuffer floats(float[] f) {
    ByteBuffer b = ByteBuffer.allocateDirect(4 * f.length).order(ByteOrder.nativeOrder());
    b.asFloatBuffer().put(f);
    return b;
  }

  /** The first {@code n} floats of {@code b}. */
  static float[] toFloats(ByteBuffer b, int n) {
    float[] f = new float[n];
    b.duplicate().order(ByteOrder.nativeOrder()).asFloatBuffer().get(f);
    return f;
  }
}
