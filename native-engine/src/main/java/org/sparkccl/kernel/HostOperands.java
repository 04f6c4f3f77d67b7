package org.sparkccl.kernel;

import java.nio.ByteBuffer;
import java.util.function.Supplier;
import org.sparkccl.ReduceOp;

/**
 * What one launch of a host tree or doubling kernel works on: its buffers, its operation and the
 * text that names it in an error. Apart from the kernel's {@code Work}, which depends only on the
 * collective's shape, so that a training loop's launches reuse one work and its edges and set only
 * these. Set by the launching thread before the kernel's task is queued or run; read by the thread
 * that runs it.
 */
public final class HostOperands {
  ByteBuffer src;

  /**
   * Where the kernel's byte offsets lie in {@code src}: offset {@code x} is {@code src}'s byte
   * {@code x - srcShift}. Zero but for an allGather, whose input holds only this rank's block.
   */
  int srcShift;

  ByteBuffer dst;

  /**
   * Where the kernel's byte offsets lie in {@code dst}: offset {@code x} is {@code dst}'s byte
   * {@code x - dstShift}. Zero but for a reduceScatter into a buffer that holds only this rank's
   * block.
   */
  int dstShift;

  /** Working memory laid out as the kernel's offsets, for rounds before the result; or null. */
  ByteBuffer scratch;

  ReduceOp op;
  Supplier<String> what;

  /** Sets the operands of the next launch. */
  public void set(
      ByteBuffer src,
      int srcShift,
      ByteBuffer dst,
      int dstShift,
      ByteBuffer scratch,
      ReduceOp op,
      Supplier<String> what) {
    this.src = src;
    this.srcShift = srcShift;
    this.dst = dst;
    this.dstShift = dstShift;
    this.scratch = scratch;
    this.op = op;
    this.what = what;
  }
}
