package org.sparkccl.kernel;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.sparkccl.kernel.KernelTestFloats.floats;
import static org.sparkccl.kernel.KernelTestFloats.randomFloats;
import static org.sparkccl.kernel.KernelTestFloats.toFloats;

import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.sparkccl.DataType;
import org.sparkccl.ReduceOp;
import org.sparkccl.fifo.Fifo;
import org.sparkccl.idle.IdleStrategies;

/**
 * A recursive doubling exchange over an edge whose connection sends from any memory leaves a large
 * slice in the collective's buffer, not in a copy in the slot, and, in place, reduces into that
 * buffer only once the slice has left (the consumer released its step), even when the partner's
 * slice is already there; a small slice is copied into the slot as before. The test plays the
 * partner and the proxy: it reads the published step and fills the receiving FIFO.
 */
class DoublingSendFromBufferTest {
  private static final int STEP = 512 << 10;

  private static final KernelGuard GUARD = KernelTestWaits.guard("a doubling exchange in a test");

  @Test
  void anInPlaceExchangeReducesOnlyOnceItsSliceHasLeft() throws Exception {
    int count = 8 << 10; // 32 KiB of floats: one slice, above the minimum
    try (Fifo send = new Fifo(STEP);
        Fifo recv = new Fifo(STEP)) {
      float[] mine = randomFloats(count, 21);
      float[] theirs = randomFloats(count, 22);
      ByteBuffer buf = floats(mine);
      CompletableFuture<Void> ran = run(send, recv, buf, count, true);

      KernelTestWaits.awaitFilled(send, 0);
      ByteBuffer sent = send.bytesOf(0);
      assertNotSame(send.slot(0), sent, "a 32 KiB slice should leave from the buffer");
      assertArrayEquals(mine, toFloats(sent, count), "the published slice");
      // the partner's slice arrives; the kernel must not reduce into the buffer it is sending from
      deliver(recv, theirs);
      assertFalse(
          KernelTestWaits.ended(ran), "the kernel returned before its slice left the buffer");
      assertArrayEquals(mine, toFloats(sent, count), "the buffer changed while it was being sent");

      send.release(0);
      ran.get(30, TimeUnit.SECONDS);
      assertArrayEquals(sums(theirs, mine), toFloats(buf, count), "partner lower: theirs + mine");
      assertEquals(1, recv.head(), "the received slice released");
    }
  }

  @Test
  void aSmallSliceIsCopiedAndNeedsNoRelease() throws Exception {
    int count = 1000; // 4000 bytes: below the minimum
    try (Fifo send = new Fifo(STEP);
        Fifo recv = new Fifo(STEP)) {
      float[] mine = randomFloats(count, 31);
      float[] theirs = randomFloats(count, 32);
      ByteBuffer buf = floats(mine);
      CompletableFuture<Void> ran = run(send, recv, buf, count, true);
      KernelTestWaits.awaitFilled(send, 0);
      assertSame(send.slot(0), send.bytesOf(0), "a small slice is copied into its slot");
      deliver(recv, theirs);
      ran.get(30, TimeUnit.SECONDS);
      assertArrayEquals(sums(theirs, mine), toFloats(buf, count));
      assertEquals(0, send.head(), "nothing was released: the copy needs no wait");
    }
  }

  @Test
  void anEdgeWithoutTheConnectionsLeaveCopies() throws Exception {
    int count = 8 << 10;
    try (Fifo send = new Fifo(STEP);
        Fifo recv = new Fifo(STEP)) {
      float[] mine = randomFloats(count, 41);
      float[] theirs = randomFloats(count, 42);
      ByteBuffer buf = floats(mine);
      CompletableFuture<Void> ran = run(send, recv, buf, count, false);
      KernelTestWaits.awaitFilled(send, 0);
      assertSame(send.slot(0), send.bytesOf(0), "no leave to send from the buffer: copied");
      assertArrayEquals(mine, toFloats(send.slot(0), count));
      deliver(recv, theirs);
      ran.get(30, TimeUnit.SECONDS);
      assertArrayEquals(sums(theirs, mine), toFloats(buf, count));
    }
  }

  /** The partner's slice arriving: its floats in the first slot, published. */
  private static void deliver(Fifo recv, float[] theirs) {
    recv.slot(0).put(0, floats(theirs), 0, 4 * theirs.length);
    recv.publish(0, 4 * theirs.length);
  }

  /**
   * One in-place exchange of {@code count} floats in {@code buf}; the partner is the lower rank.
   */
  private static CompletableFuture<Void> run(
      Fifo send, Fifo recv, ByteBuffer buf, int count, boolean fromBuffer) {
    PeerEdge out = new PeerEdge(0);
    out.restart(send, 0, null, null, null);
    if (fromBuffer) {
      out.sendFromSources(send);
    }
    PeerEdge in = new PeerEdge(0);
    in.restart(recv, 0, null, null, null);
    long bytes = 4L * count;
    HostDoublingKernel.Exchange e =
        new HostDoublingKernel.Exchange(HostDoublingKernel.Kind.EXCHANGE, out, in, true, bytes);
    HostDoublingKernel.Work work =
        new HostDoublingKernel.Work(
            new HostDoublingKernel.Exchange[] {e},
            1,
            0,
            bytes,
            bytes,
            DataType.FLOAT32,
            2,
            STEP,
            0);
    HostOperands o = new HostOperands();
    o.set(buf, 0, buf, 0, null, ReduceOp.SUM, () -> "allReduce in a test");
    KernelWaiter waiter = new KernelWaiter(IdleStrategies.defaults());
    return CompletableFuture.runAsync(() -> HostDoublingKernel.run(work, o, waiter, GUARD));
  }

  /** {@code a[i] + b[i]} in that order, as the kernel adds the lower rank's operand first. */
  private static float[] sums(float[] a, float[] b) {
    float[] s = new float[a.length];
    for (int i = 0; i < a.length; i++) {
      s[i] = a[i] + b[i];
    }
    return s;
  }
}
