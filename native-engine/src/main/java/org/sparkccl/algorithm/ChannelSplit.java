package org.sparkccl.algorithm;

/**
 * How a collective's elements are divided among channels. Small messages use fewer channels: every
 * extra channel adds its own latency to the collective for no bandwidth.
 */
public final class ChannelSplit {
  /** Bytes each channel should carry at least before another channel is worth it. */
  public static final long MIN_BYTES_PER_CHANNEL = 128 << 10;

  private ChannelSplit() {}

  /** Channels to use for {@code count} elements of {@code elemSize} bytes. */
  public static int channels(long count, int elemSize, int maxChannels) {
    long bytes = count * elemSize;
    long wanted = Math.max(1, bytes / MIN_BYTES_PER_CHANNEL);
    return (int) Math.min(maxChannels, wanted);
  }

  /**
   * Every part but the last starts and ends on a multiple of this many bytes: a GPU kernel copies
   * 16-byte vectors only where its buffers are aligned, and fell back to single elements (about a
   * fifth of the bandwidth: 45 against 192 GB/s over NVLink with 24 channels) when 512 MiB was cut
   * into 24 parts that began 8 bytes off.
   */
  public static final int ALIGN_BYTES = 128;

  /** First element of channel {@code c} of {@code channels}. */
  public static long start(long count, int elemSize, int channels, int c) {
    return Math.min(count, c * alignedShare(count, channels, elemSize));
  }

  /** Elements of channel {@code c}. */
  public static long length(long count, int elemSize, int channels, int c) {
    return start(count, elemSize, channels, c + 1) - start(count, elemSize, channels, c);
  }

  /**
   * One of {@code parts} equal shares of {@code count} elements of {@code elemSize} bytes, rounded
   * up to whole {@link #ALIGN_BYTES} (element sizes are powers of two up to 8): the parts cover the
   * count, the last one shorter.
   */
  static long alignedShare(long count, int parts, int elemSize) {
    long unit = Math.max(1, ALIGN_BYTES / elemSize);
    return RingPlanner.ceilDiv(RingPlanner.ceilDiv(count, parts), unit) * unit;
  }
}
