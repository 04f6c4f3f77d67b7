package org.sparkccl.device.cuda;

import org.sparkccl.algorithm.ChannelPlan;
import org.sparkccl.algorithm.PrimitiveCall;

/**
 * A channel plan as the CUDA channel kernel reads it: per call four int64 words, {@code kind} (the
 * {@link org.sparkccl.algorithm.Primitive} ordinal), source byte offset, destination byte offset
 * and byte count ({@code struct Call} in {@code sparkccl_kernels.cu}).
 */
public final class PlanEncoding {
  /** int64 words per call. */
  public static final int WORDS = 4;

  private PlanEncoding() {}

  public static long[] encode(ChannelPlan plan) {
    long[] out = new long[plan.calls().size() * WORDS];
    int i = 0;
    for (PrimitiveCall c : plan.calls()) {
      out[i++] = c.kind().ordinal();
      out[i++] = c.srcOffset();
      out[i++] = c.dstOffset();
      out[i++] = c.bytes();
    }
    return out;
  }
}
