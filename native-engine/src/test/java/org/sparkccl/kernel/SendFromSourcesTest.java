package org.sparkccl.kernel;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.sparkccl.DataType;
import org.sparkccl.ReduceOp;
import org.sparkccl.TestBytes;
import org.sparkccl.algorithm.ChannelPlan;
import org.sparkccl.algorithm.Primitive;
import org.sparkccl.algorithm.PrimitiveCall;
import org.sparkccl.comm.CollectiveCall;
import org.sparkccl.device.HostBuffer;
import org.sparkccl.fifo.Fifo;
import org.sparkccl.idle.IdleStrategies;

/**
 * A host kernel whose send connection reads any memory publishes large steps from the collective's
 * buffers, not copies in its slots, and returns only once the consumer has released every one of
 * them: the caller may change its buffers as soon as the collective ends.
 */
class SendFromSourcesTest {
  private static final int STEP = 128 << 10;

  /** Three full steps (from the buffer) and a small last one (below the minimum: copied). */
  private static final int BYTES = 3 * STEP + 1000;

  private static final KernelGuard GUARD = KernelTestWaits.guard("a ring kernel in a test");

  @Test
  void largeStepsLeaveFromTheBufferAndTheKernelWaitsForThem() throws Exception {
    try (Fifo send = new Fifo(STEP);
        Fifo recv = new Fifo(STEP)) {
      HostChannelKernel kernel = kernel(send, recv, true);
      byte[] input = TestBytes.random(BYTES, 11);
      HostBuffer src = buffer(input);
      HostBuffer dst = buffer(new byte[BYTES]);
      CompletableFuture<Void> ran = CompletableFuture.runAsync(() -> kernel.run(work(src, dst)));
      for (int step = 0; step < 4; step++) {
        KernelTestWaits.awaitFilled(send, step);
        ByteBuffer sent = send.bytesOf(step);
        int len = send.size(step);
        if (step < 3) {
          assertNotSame(send.slot(step), sent, "step " + step + " should leave from the buffer");
        } else {
          assertSame(send.slot(step), sent, "a step below the minimum is copied into its slot");
        }
        assertArrayEquals(
            TestBytes.slice(input, step * STEP, len), TestBytes.bytes(sent, len), "step " + step);
      }
      // every step published and none released: the collective has not ended
      assertFalse(
          KernelTestWaits.ended(ran), "the kernel returned before its sends left the buffers");
      for (int step = 0; step < 3; step++) {
        send.release(step);
      }
      assertFalse(KernelTestWaits.ended(ran), "the kernel returned with a send still in its slot");
      send.release(3);
      ran.get(30, TimeUnit.SECONDS);
      assertArrayEquals(input, TestBytes.bytes(dst.memory(), BYTES), "the copy into the output");
      assertSame(send.slot(0), send.bytesOf(0), "a released step forgets the buffer");
    }
  }

  @Test
  void withoutTheConnectionsLeaveEveryStepIsCopied() throws Exception {
    try (Fifo send = new Fifo(STEP);
        Fifo recv = new Fifo(STEP)) {
      HostChannelKernel kernel = kernel(send, recv, false);
      byte[] input = TestBytes.random(BYTES, 12);
      CompletableFuture<Void> ran =
          CompletableFuture.runAsync(
              () -> kernel.run(work(buffer(input), buffer(new byte[BYTES]))));
      for (int step = 0; step < 4; step++) {
        KernelTestWaits.awaitFilled(send, step);
        assertSame(send.slot(step), send.bytesOf(step), "step " + step);
        assertArrayEquals(
            TestBytes.slice(input, step * STEP, send.size(step)),
            TestBytes.bytes(send.slot(step), send.size(step)),
            "step " + step);
      }
      // copied steps need nothing more from the kernel: it ends without waiting for the consumer
      ran.get(30, TimeUnit.SECONDS);
      assertEquals(0, send.head(), "nothing was released");
    }
  }

  private static HostChannelKernel kernel(Fifo send, Fifo recv, boolean fromSources) {
    HostChannelKernel kernel =
        new HostChannelKernel(send, recv, new KernelWaiter(IdleStrategies.defaults()), GUARD);
    kernel.sendFromSources(fromSources);
    return kernel;
  }

  private static ChannelWork work(HostBuffer src, HostBuffer dst) {
    ChannelPlan plan =
        ChannelPlan.of(0, List.of(new PrimitiveCall(Primitive.COPY_SEND, 0, 0, BYTES)), STEP);
    CollectiveCall call =
        new CollectiveCall(
            CollectiveCall.Kind.ALL_GATHER, 1, BYTES, DataType.INT8, ReduceOp.SUM, -1);
    return new ChannelWork(plan, src, dst, 2, call);
  }

  private static HostBuffer buffer(byte[] content) {
    ByteBuffer memory = ByteBuffer.allocateDirect(content.length).order(ByteOrder.nativeOrder());
    memory.put(0, content);
    return HostBuffer.wrap(memory);
  }
}
