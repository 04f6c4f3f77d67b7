package org.sparkccl.proxy;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.sparkccl.DataType;
import org.sparkccl.ReduceOp;
import org.sparkccl.comm.CollectiveCall;
import org.sparkccl.fifo.Fifo;
import org.sparkccl.transport.RecvConnection;
import org.sparkccl.transport.SendConnection;
import org.sparkccl.transport.local.LocalPipe;

/**
 * A receive operation told to wait for its kernel ({@link RecvProxyOp#postAfterConsumer}) reads
 * nothing from its connection until the kernel waits for one of its steps, then receives every
 * step; one not told receives as soon as the data is there. Both ends are the in-process
 * transport's, driven by hand as a proxy pass would.
 */
@DisplayName("receive operations that wait for their kernel")
class RecvAfterConsumerTest {
  private static final int STEP = 4096;
  private static final long TIMEOUT = TimeUnit.SECONDS.toNanos(30);
  private static final CollectiveCall CALL =
      new CollectiveCall(
          CollectiveCall.Kind.ALL_REDUCE, 1, 3 * STEP, DataType.INT8, ReduceOp.SUM, -1);

  @Test
  @DisplayName("nothing is read before the kernel waits, every step after")
  void readsOnlyOnceTheKernelWaits() {
    try (Pair p = new Pair(101, true)) {
      byte[][] sent = p.publish(3, 7);
      p.passes(50);
      assertEquals(0, p.recvFifo.tail(), "a step arrived before the kernel waited for one");
      assertEquals(0, p.sendFifo.head(), "the sender's slots were taken before the kernel waited");
      assertFalse(p.recv.isDone());

      assertTrue(p.recvFifo.consumerAt(0), "the first wait raises the mark");
      assertFalse(p.recvFifo.consumerAt(0), "a second wait for the same step does not");
      p.passes(50);
      p.assertReceived(sent);
      assertTrue(p.recv.isDone() && p.send.isDone());
    }
  }

  @Test
  @DisplayName("an operation not told to wait receives at once")
  void withoutTheGateStepsArriveAtOnce() {
    try (Pair p = new Pair(102, false)) {
      byte[][] sent = p.publish(3, 8);
      p.passes(50);
      p.assertReceived(sent);
    }
  }

  /** One pipe, its two FIFOs and the operation on each side. */
  private static final class Pair implements AutoCloseable {
    final Fifo sendFifo = new Fifo(STEP);
    final Fifo recvFifo = new Fifo(STEP);
    final SendConnection sender;
    final RecvConnection receiver;
    final SendProxyOp send;
    final RecvProxyOp recv;

    Pair(long token, boolean afterConsumer) {
      sender = LocalPipe.sender(token, 0, 1, 0, () -> {}, m -> {});
      receiver = LocalPipe.receiver(token, 0, 1, 0, () -> {}, m -> {}, null);
      send = new SendProxyOp(sender, sendFifo, 0, 3, CALL, TIMEOUT, "send in a test");
      recv = new RecvProxyOp(receiver, recvFifo, 0, 3, CALL, true, 1, TIMEOUT, "recv in a test");
      if (afterConsumer) {
        recv.postAfterConsumer();
      }
    }

    /** Fills and publishes {@code n} send steps of random bytes (none zero) and returns them. */
    byte[][] publish(int n, long seed) {
      SplittableRandom random = new SplittableRandom(seed);
      byte[][] steps = new byte[n][];
      for (int s = 0; s < n; s++) {
        steps[s] = new byte[STEP - s * 100];
        for (int i = 0; i < steps[s].length; i++) {
          steps[s][i] = (byte) random.nextInt(1, 256);
        }
        sendFifo.slot(s).put(0, steps[s]);
        sendFifo.publish(s, steps[s].length);
      }
      return steps;
    }

    /** Progress passes over both operations, as the proxy makes them. */
    void passes(int n) {
      for (int i = 0; i < n; i++) {
        long now = System.nanoTime();
        send.progress(now);
        recv.progress(now);
      }
    }

    /** Every step of {@code sent} has arrived, each with its bytes. */
    void assertReceived(byte[][] sent) {
      assertEquals(sent.length, recvFifo.tail(), "steps received");
      for (int s = 0; s < sent.length; s++) {
        byte[] got = new byte[recvFifo.size(s)];
        ByteBuffer bytes = recvFifo.bytesOf(s);
        bytes.get(0, got);
        assertArrayEquals(sent[s], got, "step " + s);
      }
    }

    @Override
    public void close() {
      sender.close();
      receiver.close();
      sendFifo.close();
      recvFifo.close();
    }
  }
}
