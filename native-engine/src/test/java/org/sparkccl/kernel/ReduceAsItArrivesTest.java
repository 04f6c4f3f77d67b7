package org.sparkccl.kernel;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.sparkccl.DataType;
import org.sparkccl.ReduceOp;
import org.sparkccl.algorithm.ChannelPlan;
import org.sparkccl.algorithm.Primitive;
import org.sparkccl.algorithm.PrimitiveCall;
import org.sparkccl.comm.CollectiveCall;
import org.sparkccl.device.HostBuffer;
import org.sparkccl.fifo.Fifo;
import org.sparkccl.fifo.FifoLayout;
import org.sparkccl.idle.IdleStrategies;

/**
 * A host kernel sums a large received step in pieces as its FIFO says they land ({@link
 * Fifo#arrived}), before the step is published, and the whole result equals a sum computed apart:
 * the test plays the receiving proxy, filling the slot in two parts with a pause between them.
 */
@DisplayName("a received step summed as it arrives")
class ReduceAsItArrivesTest {
  private static final int STEP = 512 << 10;

  /** Not a multiple of a piece or of the reducer's blocks; the first part ends mid-element. */
  private static final int BYTES = 3 * HostChannelKernel.PIECE_BYTES + 4 * 1000;

  private static final int FIRST_PART = HostChannelKernel.PIECE_BYTES + 4 * 25 + 2;

  /** The whole float32 elements of {@link #FIRST_PART}: what the kernel may sum before the rest. */
  private static final int FIRST_ELEMS = FIRST_PART / 4;

  private static final int RANKS = 3;
  private static final KernelGuard GUARD = KernelTestWaits.guard("a ring kernel in a test");

  @Test
  @DisplayName("the final sum (avg) lands in the output piece by piece")
  void finalSumInPieces() throws Exception {
    try (Fifo send = new Fifo(STEP);
        Fifo recv = new Fifo(STEP)) {
      float[] input = random(1);
      float[] received = random(2);
      HostBuffer dst = HostBuffer.wrap(direct(random(3)));
      float[] before = floats(dst.memory());
      CompletableFuture<Void> ran =
          run(send, recv, Primitive.RECV_REDUCE_COPY, input, dst, ReduceOp.AVG);

      land(recv, received, FIRST_PART);
      float[] expected = sums(received, input, RANKS);
      awaitTrue(
          () -> Arrays.equals(floats(dst.memory()), 0, FIRST_ELEMS, expected, 0, FIRST_ELEMS),
          "the first part summed before the step was published");
      float[] now = floats(dst.memory());
      assertArrayEquals(
          Arrays.copyOfRange(before, FIRST_ELEMS, before.length),
          Arrays.copyOfRange(now, FIRST_ELEMS, now.length),
          "nothing past what landed was written");
      assertFalse(KernelTestWaits.ended(ran), "the kernel ended before the step was published");

      publishRest(recv, received);
      ran.get(30, TimeUnit.SECONDS);
      assertArrayEquals(expected, floats(dst.memory()));
      assertEquals(1, recv.head(), "the step was released");
      assertEquals(
          0, recv.arrived(FifoLayout.STEPS), "the slot's next step starts with nothing landed");
    }
  }

  @Test
  @DisplayName("a sum for the next rank goes out whole, after its pieces")
  void sumForTheNextRankInPieces() throws Exception {
    try (Fifo send = new Fifo(STEP);
        Fifo recv = new Fifo(STEP)) {
      float[] input = random(4);
      float[] received = random(5);
      HostBuffer dst = HostBuffer.wrap(direct(new float[input.length]));
      CompletableFuture<Void> ran =
          run(send, recv, Primitive.RECV_REDUCE_SEND, input, dst, ReduceOp.SUM);

      land(recv, received, FIRST_PART);
      float[] expected = sums(received, input, 1);
      awaitTrue(
          () ->
              Arrays.equals(
                  floats(send.slot(0), input.length), 0, FIRST_ELEMS, expected, 0, FIRST_ELEMS),
          "the first part summed into the send slot before the step was published");
      assertFalse(send.isFilled(0), "a partial sum went out");

      publishRest(recv, received);
      ran.get(30, TimeUnit.SECONDS);
      assertTrue(send.isFilled(0));
      assertEquals(BYTES, send.size(0));
      assertArrayEquals(expected, floats(send.slot(0), input.length));
    }
  }

  private static CompletableFuture<Void> run(
      Fifo send, Fifo recv, Primitive kind, float[] input, HostBuffer dst, ReduceOp op) {
    HostChannelKernel kernel =
        new HostChannelKernel(send, recv, new KernelWaiter(IdleStrategies.defaults()), GUARD);
    ChannelPlan plan = ChannelPlan.of(0, List.of(new PrimitiveCall(kind, 0, 0, BYTES)), STEP);
    CollectiveCall call =
        new CollectiveCall(CollectiveCall.Kind.ALL_REDUCE, 1, BYTES / 4, DataType.FLOAT32, op, -1);
    ChannelWork work = new ChannelWork(plan, HostBuffer.wrap(direct(input)), dst, RANKS, call);
    return CompletableFuture.runAsync(() -> kernel.run(work));
  }

  /** {@code (received + input) / divisor}, element by element, as float32 computes it. */
  private static float[] sums(float[] received, float[] input, int divisor) {
    float[] out = new float[input.length];
    for (int i = 0; i < input.length; i++) {
      out[i] = (received[i] + input[i]) / divisor;
    }
    return out;
  }

  /** As a receiving proxy: the first {@code bytes} of the step land in the slot. */
  private static void land(Fifo recv, float[] received, int bytes) {
    ByteBuffer whole = direct(received);
    recv.slot(0).put(0, whole, 0, bytes);
    recv.arrived(0, bytes);
  }

  private static void publishRest(Fifo recv, float[] received) {
    recv.slot(0).put(0, direct(received), 0, BYTES);
    recv.publish(0, BYTES);
  }

  private static void awaitTrue(BooleanSupplier condition, String what) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (!condition.getAsBoolean()) {
      assertTrue(System.nanoTime() < deadline, "not within 30 s: " + what);
      TimeUnit.MILLISECONDS.sleep(1);
    }
  }

  /** Random floats of a few significant bits, none zero. */
  private static float[] random(long seed) {
    SplittableRandom r = new SplittableRandom(seed);
    float[] f = new float[BYTES / 4];
    for (int i = 0; i < f.length; i++) {
      f[i] = r.nextInt(1, 1 << 12) * (r.nextBoolean() ? 0.5f : -0.25f);
    }
    return f;
  }

  private static ByteBuffer direct(float[] f) {
    ByteBuffer b = ByteBuffer.allocateDirect(f.length * 4).order(ByteOrder.nativeOrder());
    b.asFloatBuffer().put(f);
    return b;
  }

  private static float[] floats(ByteBuffer b) {
    return floats(b, b.capacity() / 4);
  }

  private static float[] floats(ByteBuffer b, int n) {
    float[] f = new float[n];
    b.duplicate().order(ByteOrder.nativeOrder()).asFloatBuffer().get(0, f, 0, n);
    return f;
  }
}
