package org.sparkccl.fifo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.sparkccl.config.CclConfig;
import org.sparkccl.memory.DirectMemory;

/** The FIFO layout contract and a producer/consumer pair moving many steps through one FIFO. */
@DisplayName("FIFO")
class FifoTest {

  @Test
  @DisplayName("the layout has 8 slots and keeps head, tail and abort on separate 128-byte lines")
  void layoutConstants() {
    assertEquals(8, FifoLayout.STEPS);
    assertEquals(
        (4 << 20) / 8, CclConfig.builder().build().stepSize(), "a slot is 1/8 of the default FIFO");
    assertEquals(128, FifoLayout.LINE);
    int[] counters = {FifoLayout.HEAD_OFFSET, FifoLayout.TAIL_OFFSET, FifoLayout.ABORT_OFFSET};
    for (int i = 0; i < counters.length; i++) {
      assertEquals(0, counters[i] % 8, "counter " + i + " is 8-byte aligned");
      for (int j = i + 1; j < counters.length; j++) {
        assertNotEquals(
            counters[i] / 128, counters[j] / 128, "counters " + i + " and " + j + " share a line");
      }
    }
    assertEquals(0, FifoLayout.HEAD_OFFSET);
    assertEquals(128, FifoLayout.TAIL_OFFSET);
    assertEquals(256, FifoLayout.ABORT_OFFSET);
    assertEquals(384, FifoLayout.SIZES_OFFSET);
    assertTrue(
        FifoLayout.sizeOffset(FifoLayout.STEPS - 1) + 4 <= FifoLayout.CONTROL_BYTES,
        "sizes fit in the control block");
    assertTrue(FifoLayout.SIZES_OFFSET / 128 > FifoLayout.ABORT_OFFSET / 128);
    assertEquals(-1, FifoLayout.EMPTY);
    assertEquals(3, FifoLayout.slotOf(11));
    assertEquals(7, FifoLayout.slotOf(7));
    assertEquals(0, FifoLayout.slotOf(1L << 40));
  }

  @Test
  @DisplayName(
      "a new FIFO is empty: sizes -1, counters 0, room for exactly 8 steps; close frees it")
  void newFifoIsEmpty() {
    long before = DirectMemory.outstandingBytes();
    Fifo f = new Fifo(1024);
    try {
      assertEquals(
          FifoLayout.CONTROL_BYTES + 8 * 1024L,
          DirectMemory.outstandingBytes() - before,
          "a FIFO allocates its control block and 8 slots");
      assertEquals(0, f.head());
      assertEquals(0, f.tail());
      for (int s = 0; s < 8; s++) {
        assertEquals(-1, f.size(s), "size of slot " + s);
        assertTrue(f.hasRoomFor(s), "room for step " + s);
        assertFalse(f.isFilled(s), "step " + s + " is filled before publish");
        assertEquals(1024, f.slot(s).capacity());
      }
      assertFalse(f.hasRoomFor(8), "a 9th step must wait for the consumer");
      assertFalse(f.isAborted());
      f.publish(0, 100);
      assertTrue(f.isFilled(0));
      assertEquals(100, f.size(0));
      f.release(0);
      assertEquals(-1, f.size(0), "release empties the slot");
      assertTrue(f.hasRoomFor(8));
      AtomicLong woken = new AtomicLong();
      f.onPublish(woken::incrementAndGet);
      f.onRelease(woken::incrementAndGet);
      f.abort();
      assertTrue(f.isAborted());
      assertEquals(2, woken.get(), "abort wakes both sides");
    } finally {
      f.close();
      f.close(); // idempotent
    }
    assertEquals(before, DirectMemory.outstandingBytes(), "close frees the FIFO's memory");
  }

  /** Spins, then yields, until {@code ready}; fails at the deadline. */
  private static void waitFor(BooleanSupplier ready, long deadline, String what) {
    int spins = 0;
    while (!ready.getAsBoolean()) {
      if (++spins > 100) {
        Thread.yield();
        if (System.nanoTime() > deadline) {
          throw new AssertionError("timed out waiting for " + what);
        }
      } else {
        Thread.onSpinWait();
      }
    }
  }

  private static int lengthOf(long step, int stepSize) {
    return 8 + (int) (((step * 2654435761L) >>> 7) % (stepSize - 7)); // 8..stepSize
  }

  private static byte byteOf(long step, int i) {
    return (byte) (step * 31 + i * 7L);
  }

  @Test
  @DisplayName("100,000 steps from a producer thread reach a consumer thread intact and in order")
  void producerConsumerMoveEveryStepIntact() throws InterruptedException {
    int stepSize = 256;
    long steps = 100_000;
    long deadline = System.nanoTime() + 60_000_000_000L;
    Fifo fifo = new Fifo(stepSize);
    AtomicLong publishWakes = new AtomicLong();
    AtomicLong releaseWakes = new AtomicLong();
    fifo.onPublish(publishWakes::incrementAndGet);
    fifo.onRelease(releaseWakes::incrementAndGet);
    AtomicReference<Throwable> error = new AtomicReference<>();
    Thread producer =
        new Thread(
            () -> {
              try {
                for (long s = 0; s < steps; s++) {
                  long step = s;
                  waitFor(() -> fifo.hasRoomFor(step), deadline, "room for step " + step);
                  assertEquals(-1, fifo.size(step), "slot of step " + step + " is not empty");
                  ByteBuffer slot = fifo.slot(step);
                  int len = lengthOf(step, stepSize);
                  slot.putLong(0, step);
                  for (int i = 8; i < len; i++) {
                    slot.put(i, byteOf(step, i));
                  }
                  fifo.publish(step, len);
                }
              } catch (Throwable t) {
                error.compareAndSet(null, t);
              }
            },
            "fifo-producer");
    Thread consumer =
        new Thread(
            () -> {
              try {
                for (long s = 0; s < steps; s++) {
                  long step = s;
                  waitFor(() -> fifo.isFilled(step), deadline, "step " + step);
                  int len = fifo.size(step);
                  assertEquals(lengthOf(step, stepSize), len, "size of step " + step);
                  ByteBuffer slot = fifo.slot(step);
                  assertEquals(step, slot.getLong(0), "slot carries the wrong step");
                  for (int i = 8; i < len; i++) {
                    if (slot.get(i) != byteOf(step, i)) {
                      throw new AssertionError("step " + step + ": byte " + i + " is wrong");
                    }
                  }
                  fifo.release(step);
                }
              } catch (Throwable t) {
                error.compareAndSet(null, t);
              }
            },
            "fifo-consumer");
    producer.setDaemon(true);
    consumer.setDaemon(true);
    try {
      producer.start();
      consumer.start();
      producer.join(65_000);
      consumer.join(Math.max(1, (deadline - System.nanoTime()) / 1_000_000 + 5_000));
      assertFalse(producer.isAlive() || consumer.isAlive(), "producer or consumer still running");
      assertNull(error.get(), () -> "failed: " + error.get());
      assertEquals(steps, fifo.tail());
      assertEquals(steps, fifo.head());
      assertEquals(steps, publishWakes.get(), "every publish wakes the consumer");
      assertEquals(steps, releaseWakes.get(), "every release wakes the producer");
    } finally {
      if (!producer.isAlive() && !consumer.isAlive()) {
        fifo.close();
      }
    }
  }
}
