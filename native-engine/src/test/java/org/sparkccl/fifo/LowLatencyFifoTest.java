package org.sparkccl.fifo;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.sparkccl.memory.DirectMemory;

/**
 * The LL FIFO: its flag shares the first data's cache line, zeroed memory is an empty FIFO, flags
 * of an earlier lap never look filled, and two threads move many messages of random sizes through
 * it in order and intact.
 */
@DisplayName("LL FIFO")
class LowLatencyFifoTest {
  private static final int CAPACITY = 1000;

  @Test
  @DisplayName("a small message shares the flag's cache line; slots are whole cache lines")
  void layout() {
    assertEquals(48, LowLatencyFifo.FIRST_LINE_DATA);
    assertEquals(LowLatencyFifo.FLAG_AT / 64, LowLatencyFifo.DATA_AT / 64);
    assertEquals(64, LowLatencyFifo.slotBytes(1));
    assertEquals(64, LowLatencyFifo.slotBytes(48));
    assertEquals(128, LowLatencyFifo.slotBytes(49));
    assertEquals(0, LowLatencyFifo.SLOTS_OFFSET % 128, "slots start on a line of their own");
    assertEquals(128 + 8 * 1024, LowLatencyFifo.bytes(CAPACITY), "8 slots of 16 lines each");
  }

  @Test
  @DisplayName("zeroed memory is empty with room for 8 steps; a lap's old flags never look filled")
  void emptyAndLaps() {
    ByteBuffer memory = DirectMemory.allocate((int) LowLatencyFifo.bytes(CAPACITY));
    try {
      LowLatencyFifo f = new LowLatencyFifo(memory, CAPACITY);
      for (long s = 0; s < FifoLayout.STEPS; s++) {
        assertTrue(f.hasRoomFor(s), "room for step " + s);
        assertFalse(f.isFilled(s), "step " + s + " filled in a new FIFO");
      }
      assertFalse(f.hasRoomFor(FifoLayout.STEPS), "a ninth step before any release");
      for (long s = 0; s < FifoLayout.STEPS; s++) {
        f.slot(s).putLong(0, s * 31);
        f.stampFingerprint(s, (int) s + 7);
        f.publish(s, 8);
      }
      for (long s = 0; s < FifoLayout.STEPS; s++) {
        assertTrue(f.isFilled(s));
        assertEquals(8, f.size(s));
        assertEquals((int) s + 7, f.fingerprint(s));
        assertEquals(s * 31, f.slot(s).getLong(0));
        assertFalse(f.isFilled(s + FifoLayout.STEPS), "step " + s + "'s flag read a lap later");
        f.release(s);
      }
      assertTrue(f.hasRoomFor(2L * FifoLayout.STEPS - 1));
      assertFalse(f.hasRoomFor(2L * FifoLayout.STEPS));
    } finally {
      DirectMemory.free(memory);
    }
  }

  @Test
  @DisplayName("bad sizes and capacities are refused with what was expected")
  void refusals() {
    ByteBuffer memory = DirectMemory.allocate((int) LowLatencyFifo.bytes(CAPACITY));
    try {
      LowLatencyFifo f = new LowLatencyFifo(memory, CAPACITY);
      IllegalArgumentException e =
          assertThrows(IllegalArgumentException.class, () -> f.publish(0, CAPACITY + 1));
      assertTrue(e.getMessage().contains("do not fit a slot of 1000 bytes"), e.getMessage());
      e =
          assertThrows(
              IllegalArgumentException.class, () -> new LowLatencyFifo(memory, CAPACITY * 2));
      assertTrue(e.getMessage().contains("too small"), e.getMessage());
      e = assertThrows(IllegalArgumentException.class, () -> new LowLatencyFifo(memory, 0));
      assertTrue(e.getMessage().contains("expected 1.."), e.getMessage());
    } finally {
      DirectMemory.free(memory);
    }
  }

  @Test
  @DisplayName("two threads move 200,000 messages of random sizes through it, in order and intact")
  void producerAndConsumer() throws Exception {
    ByteBuffer memory = DirectMemory.allocate((int) LowLatencyFifo.bytes(CAPACITY));
    int messages = 200_000;
    long seed = 0x11_5EEDL;
    try {
      LowLatencyFifo producerSide = new LowLatencyFifo(memory, CAPACITY);
      LowLatencyFifo consumerSide = new LowLatencyFifo(memory, CAPACITY);
      CompletableFuture<Void> producer =
          CompletableFuture.runAsync(
              () -> {
                SplittableRandom rnd = new SplittableRandom(seed);
                for (long s = 0; s < messages; s++) {
                  byte[] data = message(rnd);
                  while (!producerSide.hasRoomFor(s)) {
                    Thread.onSpinWait();
                  }
                  producerSide.slot(s).put(0, data);
                  producerSide.stampFingerprint(s, (int) (s * 0x9E3779B9L));
                  producerSide.publish(s, data.length);
                }
              });
      SplittableRandom rnd = new SplittableRandom(seed);
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      for (long s = 0; s < messages; s++) {
        byte[] expected = message(rnd);
        while (!consumerSide.isFilled(s)) {
          assertTrue(System.nanoTime() < deadline, "step " + s + " never arrived");
          Thread.onSpinWait();
        }
        assertEquals(expected.length, consumerSide.size(s), "size of step " + s);
        assertEquals((int) (s * 0x9E3779B9L), consumerSide.fingerprint(s), "step " + s);
        byte[] got = new byte[expected.length];
        consumerSide.slot(s).get(0, got);
        assertArrayEquals(expected, got, "data of step " + s);
        consumerSide.release(s);
      }
      producer.get(60, TimeUnit.SECONDS);
    } finally {
      DirectMemory.free(memory);
    }
  }

  /** Random bytes, mostly fitting the first line, at times up to the capacity. */
  private static byte[] message(SplittableRandom rnd) {
    int len =
        rnd.nextInt(4) == 0
            ? rnd.nextInt(CAPACITY + 1)
            : rnd.nextInt(LowLatencyFifo.FIRST_LINE_DATA + 1);
    byte[] b = new byte[len];
    rnd.nextBytes(b);
    return b;
  }
}
