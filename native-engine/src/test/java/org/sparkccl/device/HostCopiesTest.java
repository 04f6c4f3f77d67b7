package org.sparkccl.device;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.SplittableRandom;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.sparkccl.Communicator;
import org.sparkccl.DataType;
import org.sparkccl.RankHarness;
import org.sparkccl.ReduceOp;
import org.sparkccl.TestConfig;
import org.sparkccl.config.Transport;

/**
 * Host copies never hand collectives numbers with reversed bytes: a byte buffer in another order is
 * refused, and the typed copies put every element's bytes where the machine's own order puts them
 * (checked bit by bit against a reference that does not use {@code ByteBuffer}).
 */
@DisplayName("device buffers: byte order and typed copies")
class HostCopiesTest {
  private static final boolean LITTLE = ByteOrder.nativeOrder() == ByteOrder.LITTLE_ENDIAN;
  private final SplittableRandom random = new SplittableRandom();

  @Test
  void aBufferInAnotherOrderIsRefusedAndNothingIsCopied() {
    ByteOrder other = LITTLE ? ByteOrder.BIG_ENDIAN : ByteOrder.LITTLE_ENDIAN;
    try (HostBuffer buf = HostDevice.INSTANCE.allocate(16)) {
      ByteBuffer src = ByteBuffer.allocate(16).order(other);
      src.putFloat(0, 1.5f).putFloat(4, 1.5f);
      IllegalArgumentException e =
          assertThrows(IllegalArgumentException.class, () -> buf.copyFromHost(src, 0));
      assertTrue(e.getMessage().contains(other.toString()), e.getMessage());
      assertTrue(e.getMessage().contains("ByteOrder.nativeOrder()"), e.getMessage());
      assertEquals(0, buf.memory().getLong(0), "nothing was copied");
      ByteBuffer native1 = ByteBuffer.allocate(16).order(ByteOrder.nativeOrder());
      ByteBuffer dupe = native1.duplicate(); // BIG_ENDIAN, the trap this check exists for
      if (!LITTLE) {
        dupe.order(ByteOrder.LITTLE_ENDIAN);
      }
      assertThrows(IllegalArgumentException.class, () -> buf.copyToHost(0, dupe));
      buf.copyFromHost(native1, 0); // the machine's order is accepted
    }
  }

  @Test
  void rangesThatOverflowAreRefused() {
    try (HostBuffer buf = HostDevice.INSTANCE.allocate(64)) {
      ByteBuffer eight = ByteBuffer.allocate(8).order(ByteOrder.nativeOrder());
      for (long offset : new long[] {-1, 57, Long.MAX_VALUE - 4, Long.MIN_VALUE}) {
        assertThrows(IndexOutOfBoundsException.class, () -> buf.copyFromHost(eight, offset));
        assertThrows(IndexOutOfBoundsException.class, () -> buf.copyToHost(offset, eight));
        assertThrows(IndexOutOfBoundsException.class, () -> buf.copyFromHost(new float[2], offset));
        assertThrows(IndexOutOfBoundsException.class, () -> buf.copyToHost(offset, new long[1]));
      }
      assertThrows(IndexOutOfBoundsException.class, () -> buf.copyFrom(buf, Long.MAX_VALUE, 0, 8));
      assertThrows(IndexOutOfBoundsException.class, () -> buf.copyFrom(buf, 0, 8, Long.MAX_VALUE));
    }
  }

  @Test
  void typedCopiesPutEachElementsBytesInTheMachinesOrder() {
    // lengths cross the 1 MiB staging chunk for every element size
    int n = (1 << 20) / 2 + random.nextInt(1, 5000);
    int offset = 8 * random.nextInt(0, 64);
    try (HostBuffer buf = HostDevice.INSTANCE.allocate(offset + 8L * n)) {
      float[] f = new float[n];
      double[] d = new double[n];
      int[] i = new int[n];
      long[] l = new long[n];
      short[] s = new short[n];
      for (int k = 0; k < n; k++) {
        f[k] = Float.intBitsToFloat(random.nextInt());
        d[k] = Double.longBitsToDouble(random.nextLong());
        i[k] = random.nextInt();
        l[k] = random.nextLong();
        s[k] = (short) random.nextInt();
      }
      buf.copyFromHost(f, offset);
      assertBytes(buf, offset, n, 4, k -> Float.floatToRawIntBits(f[k]));
      float[] f2 = new float[n];
      buf.copyToHost(offset, f2);
      assertArrayEquals(bits(f), bits(f2));

      buf.copyFromHost(d, offset);
      assertBytes(buf, offset, n, 8, k -> Double.doubleToRawLongBits(d[k]));
      double[] d2 = new double[n];
      buf.copyToHost(offset, d2);
      for (int k = 0; k < n; k++) {
        assertEquals(Double.doubleToRawLongBits(d[k]), Double.doubleToRawLongBits(d2[k]));
      }

      buf.copyFromHost(i, offset);
      assertBytes(buf, offset, n, 4, k -> i[k]);
      int[] i2 = new int[n];
      buf.copyToHost(offset, i2);
      assertArrayEquals(i, i2);

      buf.copyFromHost(l, offset);
      assertBytes(buf, offset, n, 8, k -> l[k]);
      long[] l2 = new long[n];
      buf.copyToHost(offset, l2);
      assertArrayEquals(l, l2);

      buf.copyFromHost(s, offset);
      assertBytes(buf, offset, n, 2, k -> s[k]);
      short[] s2 = new short[n];
      buf.copyToHost(offset, s2);
      assertArrayEquals(s, s2);
    }
  }

  @Test
  @Timeout(60)
  void theReadmesSumComesOutRight() {
    Communicator[] comms =
        RankHarness.createAll(
            2, TestConfig.builder().transport(Transport.LOCAL).build(), Duration.ofSeconds(30));
    RankHarness.closingAfter(
        comms,
        Duration.ofSeconds(30),
        () ->
            RankHarness.run(
                2,
                Duration.ofSeconds(30),
                rank -> {
                  float[] mine = {1.5f, -2.25f, rank};
                  float[] sum = new float[3];
                  try (DeviceBuffer buf = comms[rank].device().allocate(4L * mine.length)) {
                    buf.copyFromHost(mine, 0);
                    comms[rank].allReduce(buf, buf, mine.length, DataType.FLOAT32, ReduceOp.SUM);
                    buf.copyToHost(0, sum);
                  }
                  assertArrayEquals(new float[] {3.0f, -4.5f, 1.0f}, sum);
                }));
  }

  /** Element {@code k}'s value bits, as a long. */
  private interface Bits {
    long of(int k);
  }

  /** Compares the buffer's bytes with each element's bits laid out by hand in the native order. */
  private static void assertBytes(HostBuffer buf, int offset, int n, int size, Bits bits) {
    ByteBuffer m = buf.memory();
    for (int k = 0; k < n; k++) {
      long v = bits.of(k);
      for (int b = 0; b < size; b++) {
        int shift = 8 * (LITTLE ? b : size - 1 - b);
        byte want = (byte) (v >>> shift);
        byte got = m.get(offset + k * size + b);
        if (want != got) {
          throw new AssertionError(
              "element " + k + " byte " + b + ": " + got + ", expected " + want);
        }
      }
    }
  }

  private static int[] bits(float[] f) {
    int[] b = new int[f.length];
    for (int k = 0; k < f.length; k++) {
      b[k] = Float.floatToRawIntBits(f[k]);
    }
    return b;
  }
}
