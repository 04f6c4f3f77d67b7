package org.sparkccl.transport.ucx;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.ByteBuffer;
import java.util.SplittableRandom;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.sparkccl.CclException;

/**
 * A rank's UCX details come from the bootstrap exchange: whatever the bytes, decoding gives the
 * details back or a {@link CclException}, and never allocates what a length field claims.
 */
@DisplayName("UCX rank details: round trip, and malformed bytes refused")
class UcxRankInfoTest {
  private final SplittableRandom random = new SplittableRandom();

  @Test
  void aRoundTripGivesTheSameDetails() {
    int channels = random.nextInt(1, 5);
    UcxRankInfo.Region[] slots = new UcxRankInfo.Region[channels];
    UcxRankInfo.Region[] sides = new UcxRankInfo.Region[channels];
    for (int c = 0; c < channels; c++) {
      slots[c] = new UcxRankInfo.Region(random.nextLong(), bytes(random.nextInt(0, 200)));
      sides[c] = new UcxRankInfo.Region(random.nextLong(), bytes(random.nextInt(0, 200)));
    }
    byte[] address = bytes(random.nextInt(1, 300));
    UcxRankInfo back = UcxRankInfo.decode(new UcxRankInfo(address, slots, sides).encode(), 3);
    assertArrayEquals(address, back.workerAddress());
    assertEquals(channels, back.recvSlots().length);
    for (int c = 0; c < channels; c++) {
      assertEquals(slots[c].address(), back.recvSlots()[c].address());
      assertArrayEquals(slots[c].rkey(), back.recvSlots()[c].rkey());
      assertArrayEquals(sides[c].rkey(), back.sideAreas()[c].rkey());
    }
  }

  @Test
  void lengthsBeyondTheBytesAreRefusedBeforeAllocating() {
    for (int bad : new int[] {-1, Integer.MIN_VALUE, Integer.MAX_VALUE, 1 << 30}) {
      byte[] address = ByteBuffer.allocate(8).putInt(bad).array();
      assertThrows(CclException.class, () -> UcxRankInfo.decode(address, 1));
      byte[] count = ByteBuffer.allocate(12).putInt(0).putInt(bad).array();
      assertThrows(CclException.class, () -> UcxRankInfo.decode(count, 1));
      byte[] rkey = ByteBuffer.allocate(24).putInt(0).putInt(1).putLong(7).putInt(bad).array();
      assertThrows(CclException.class, () -> UcxRankInfo.decode(rkey, 1));
    }
  }

  @Test
  void randomBytesGiveDetailsOrACclExceptionOnly() {
    for (int i = 0; i < 5_000; i++) {
      byte[] junk = bytes(random.nextInt(0, 64));
      try {
        UcxRankInfo.decode(junk, 2);
      } catch (CclException expected) {
        // refused, as it should be; any other throwable fails the test
      }
    }
  }

  private byte[] bytes(int n) {
    byte[] b = new byte[n];
    random.nextBytes(b);
    return b;
  }
}
