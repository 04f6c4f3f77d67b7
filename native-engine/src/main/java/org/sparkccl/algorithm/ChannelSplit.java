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

  /** First element of channel {@code c} of {@code channels}. */
  public static long start(long count, int channels, int c) {
    long per = (count + channels - 1) / channels;
    return Math.min(count, c * per);
  }

  /** Elements of channel {@code c}. */
  public static long length(long count, int channels, int c) {
    return start(count, channels, c + 1) - start(count, channels, c);
  }
}
