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
 * A tree broadcast over edges whose connections send from any memory sends a large slice to each
 * child from the collective's buffers (an interior rank from its output, once its parent's slice is
 * copied there; the root from its input), not from copies in the children's slots, and returns only
 * once every child's slice has left; a small slice is copied into each slot as before. The test
 * plays the parent, the children and the proxy.
 */
class TreeSendFromBufferTest {
  private static final int STEP = 512 << 10;

  private static final KernelGuard GUARD = KernelTestWaits.guard("a tree broadcast in a test");

  @Test
  void anInteriorRankSendsFromItsOutputAndReturnsOnlyOnceEverySliceLeft() throws Exception {
    int count = 8 << 10; // 32 KiB of floats: one slice, above the minimum
    try (Fifo parent = new Fifo(STEP);
        Fifo child1 = new Fifo(STEP);
        Fifo child2 = new Fifo(STEP)) {
      float[] data = randomFloats(count, 51);
      ByteBuffer dst = floats(randomFloats(count, 52));
      CompletableFuture<Void> ran =
          run(parent, new Fifo[] {child1, child2}, floats(randomFloats(count, 53)), dst, count);
      parent.slot(0).put(0, floats(data), 0, 4 * count);
      parent.publish(0, 4 * count);

      for (Fifo child : new Fifo[] {child1, child2}) {
        KernelTestWaits.awaitFilled(child, 0);
        ByteBuffer sent = child.bytesOf(0);
        assertNotSame(child.slot(0), sent, "a 32 KiB slice should leave from the output");
        assertArrayEquals(data, toFloats(sent, count), "the slice published to a child");
      }
      assertArrayEquals(data, toFloats(dst, count), "the output");
      assertEquals(1, parent.head(), "the parent's slice released once copied out");
      child1.release(0);
      assertFalse(KernelTestWaits.ended(ran), "returned while a child's slice was still leaving");
      child2.release(0);
      ran.get(30, TimeUnit.SECONDS);
    }
  }

  @Test
  void theRootSendsFromItsInput() throws Exception {
    int count = 8 << 10;
    try (Fifo child = new Fifo(STEP)) {
      float[] data = randomFloats(count, 61);
      ByteBuffer src = floats(data);
      ByteBuffer dst = floats(randomFloats(count, 62));
      CompletableFuture<Void> ran = run(null, new Fifo[] {child}, src, dst, count);
      KernelTestWaits.awaitFilled(child, 0);
      assertNotSame(child.slot(0), child.bytesOf(0), "a 32 KiB slice should leave from the input");
      assertArrayEquals(data, toFloats(child.bytesOf(0), count), "the slice published");
      assertFalse(KernelTestWaits.ended(ran), "returned while the slice was still leaving");
      child.release(0);
      ran.get(30, TimeUnit.SECONDS);
      assertArrayEquals(data, toFloats(dst, count), "the root's output");
    }
  }

  @Test
  void aSmallSliceIsCopiedIntoEachChildsSlot() throws Exception {
    int count = 1000; // 4000 bytes: below the minimum
    try (Fifo parent = new Fifo(STEP);
        Fifo child = new Fifo(STEP)) {
      float[] data = randomFloats(count, 71);
      ByteBuffer dst = floats(randomFloats(count, 72));
      CompletableFuture<Void> ran =
          run(parent, new Fifo[] {child}, floats(randomFloats(count, 73)), dst, count);
      parent.slot(0).put(0, floats(data), 0, 4 * count);
      parent.publish(0, 4 * count);
      ran.get(30, TimeUnit.SECONDS);
      assertSame(child.slot(0), child.bytesOf(0), "a small slice is copied into its slot");
      assertArrayEquals(data, toFloats(child.slot(0), count));
      assertArrayEquals(data, toFloats(dst, count), "the output");
      assertEquals(0, child.head(), "nothing was released: the copy needs no wait");
    }
  }

  /**
   * A broadcast of {@code count} floats from {@code parent} (null: this rank is the root) to {@code
   * children}, whose connections send from any memory.
   */
  private static CompletableFuture<Void> run(
      Fifo parent, Fifo[] children, ByteBuffer src, ByteBuffer dst, int count) {
    PeerEdge fromParent = null;
    if (parent != null) {
      fromParent = new PeerEdge(0);
      fromParent.restart(parent, 0, null, null, null);
    }
    PeerEdge[] toChildren = new PeerEdge[children.length];
    for (int i = 0; i < children.length; i++) {
      toChildren[i] = new PeerEdge(i + 1);
      toChildren[i].restart(children[i], 0, null, null, null);
      toChildren[i].sendFromSources(children[i]);
    }
    HostTreeKernel.Work work =
        new HostTreeKernel.Work(
            false,
            true,
            null,
            fromParent,
            new PeerEdge[0],
            toChildren,
            4L * count,
            DataType.FLOAT32,
            children.length + 1,
            STEP);
    HostOperands o = new HostOperands();
    o.set(src, 0, dst, 0, null, ReduceOp.SUM, () -> "broadcast in a test");
    KernelWaiter waiter = new KernelWaiter(IdleStrategies.defaults());
    return CompletableFuture.runAsync(() -> HostTreeKernel.run(work, o, waiter, GUARD));
  }
}
