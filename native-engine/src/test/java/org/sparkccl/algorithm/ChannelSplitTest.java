package org.sparkccl.algorithm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.SplittableRandom;
import java.util.stream.IntStream;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * How a collective's elements are divided among channels: the parts must be disjoint and cover
 * every element, since each channel's kernel touches only its own part and nothing else covers the
 * rest; and a channel is added only when each carries {@link ChannelSplit#MIN_BYTES_PER_CHANNEL}.
 */
@DisplayName("channel split")
class ChannelSplitTest {
  private static final long MIN = ChannelSplit.MIN_BYTES_PER_CHANNEL;

  static IntStream channelCounts() {
    return IntStream.rangeClosed(1, 16);
  }

  /** Counts around multiples of the channel count, and random ones up to a terabyte of bytes. */
  private static long[] counts(int channels, SplittableRandom rnd) {
    long[] fixed = {0, 1, channels - 1, channels, channels + 1, 7L * channels - 1, 1000003};
    long[] all = new long[fixed.length + 20];
    System.arraycopy(fixed, 0, all, 0, fixed.length);
    for (int i = fixed.length; i < all.length; i++) {
      all[i] = i % 2 == 0 ? rnd.nextLong(10_000) : rnd.nextLong(1L << 40);
    }
    return all;
  }

  @ParameterizedTest(name = "{0} channel(s)")
  @MethodSource("channelCounts")
  @DisplayName(
      "the parts are contiguous, disjoint, in channel order, cover [0, count) and start on"
          + " aligned bytes")
  void partsCoverTheCountExactlyOnce(int channels) {
    SplittableRandom rnd = new SplittableRandom(channels);
    for (int elemSize : new int[] {1, 2, 4, 8}) {
      for (long count : counts(channels, rnd)) {
        if (count < 0) {
          continue;
        }
        long next = 0;
        long largest = 0;
        for (int c = 0; c < channels; c++) {
          long start = ChannelSplit.start(count, elemSize, channels, c);
          long len = ChannelSplit.length(count, elemSize, channels, c);
          String where =
              "count " + count + " of " + elemSize + " B, channel " + c + " of " + channels;
          assertEquals(next, start, where + ": starts where the previous part ended");
          assertTrue(len >= 0, where + ": length " + len);
          if (start < count) { // an empty part sits at the end
            assertEquals(
                0, start * elemSize % ChannelSplit.ALIGN_BYTES, where + ": starts at " + start);
          }
          next = start + len;
          largest = Math.max(largest, len);
        }
        assertEquals(
            count, next, "count " + count + ", " + channels + " channels: end of the parts");
        // no part is longer than its share rounded up to the alignment
        long unit = ChannelSplit.ALIGN_BYTES / elemSize;
        long share = ((count + channels - 1) / channels + unit - 1) / unit * unit;
        assertTrue(largest <= share, "count " + count + ": largest part " + largest);
      }
    }
  }

  @Test
  @DisplayName(
      "the channel count stays within [1, max], grows with the count, and each channel gets at"
          + " least the minimum bytes unless one channel is all there is")
  void channelCountFollowsTheMinimumBytes() {
    SplittableRandom rnd = new SplittableRandom(42);
    for (int elemSize : new int[] {1, 2, 4, 8}) {
      for (int max = 1; max <= 16; max++) {
        int previous = 1;
        long count = 0;
        for (int i = 0; i < 400; i++) {
          count += 1 + rnd.nextLong(MIN / elemSize);
          int c = ChannelSplit.channels(count, elemSize, max);
          long bytes = count * elemSize;
          String where = count + " elements of " + elemSize + " bytes, at most " + max + ": ";
          assertTrue(c >= 1 && c <= max, where + c + " channels");
          assertTrue(c >= previous, where + c + " channels, fewer than for a smaller count");
          assertTrue(c == 1 || bytes >= c * MIN, where + c + " channels for " + bytes + " bytes");
          assertTrue(
              c == max || bytes < (c + 1) * MIN,
              where + "only " + c + " channels for " + bytes + " bytes");
          for (int ch = 0; ch < c; ch++) {
            // the last part is shorter than the others by less than the alignment per channel
            long part = ChannelSplit.length(count, elemSize, c, ch) * elemSize;
            assertTrue(
                c == 1 || part >= MIN - (long) c * ChannelSplit.ALIGN_BYTES,
                where + "channel " + ch + " of " + c + " gets " + part + " bytes");
          }
          previous = c;
        }
      }
    }
  }
}
