package org.sparkccl.algorithm;

/**
 * One primitive over {@code bytes} bytes at byte {@code offset} of the collective's buffers. The
 * kernel moves it slice by slice, one FIFO slot ({@code stepSize} bytes) per slice.
 */
public record PrimitiveCall(Primitive kind, long offset, long bytes) {
  /** FIFO steps this call takes: one per slice. */
  public long steps(int stepSize) {
    return (bytes + stepSize - 1) / stepSize;
  }
}
