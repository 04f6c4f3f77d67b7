package org.sparkccl.algorithm;

/**
 * One primitive over {@code bytes} bytes at byte {@code srcOffset} of the source and {@code
 * dstOffset} of the destination. The kernel moves it slice by slice, one FIFO slot ({@code
 * stepSize} bytes) per slice.
 */
public record PrimitiveCall(Primitive kind, long srcOffset, long dstOffset, long bytes) {
  /** FIFO steps this call takes: one per slice. */
  public long steps(int stepSize) {
    return (bytes + stepSize - 1) / stepSize;
  }
}
