package org.sparkccl.transport.socket;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.sparkccl.CclMismatchException;
import org.sparkccl.DataType;
import org.sparkccl.ReduceOp;
import org.sparkccl.TestBytes;
import org.sparkccl.comm.CollectiveCall;
import org.sparkccl.fifo.Fifo;
import org.sparkccl.proxy.RecvProxyOp;

/**
 * A receive over a real socket tells its FIFO how much of a step has landed before the step is
 * published ({@link Fifo#arrived}), exactly the bytes that arrived and in place, and tells nothing
 * of a step whose header names another call. The test writes the frame on the sending end's socket
 * in two parts and drives the receiving operation by hand, as proxy passes would.
 */
@DisplayName("what a socket receive says has landed")
class ArrivedPrefixTest {
  private static final int STEP = 256 << 10;
  private static final int BYTES = 200_000;
  private static final int FIRST_PART = 70_001;
  private static final long TIMEOUT = TimeUnit.SECONDS.toNanos(30);
  private static final CollectiveCall CALL =
      new CollectiveCall(
          CollectiveCall.Kind.ALL_REDUCE, 4, BYTES / 4, DataType.FLOAT32, ReduceOp.SUM, -1);

  @Test
  @DisplayName("the first part is told as it lands, the step published once whole")
  void partsAreToldInOrder() throws Exception {
    byte[] payload = TestBytes.random(BYTES, 7);
    try (SocketEnds ends = SocketEnds.connect(null);
        Fifo fifo = new Fifo(STEP)) {
      RecvProxyOp op = receive(ends, fifo);
      Wire wire = ((SocketSendConnection) ends.out()).wire();
      write(wire, frame(CALL, payload, 0, FIRST_PART));
      passUntil(op, () -> fifo.arrived(0) >= FIRST_PART);
      assertEquals(FIRST_PART, fifo.arrived(0), "told more than was written");
      assertFalse(fifo.isFilled(0), "published before the whole step arrived");
      assertArrayEquals(
          TestBytes.slice(payload, 0, FIRST_PART), TestBytes.bytes(fifo.slot(0), FIRST_PART));

      write(wire, ByteBuffer.wrap(payload, FIRST_PART, BYTES - FIRST_PART));
      passUntil(op, () -> fifo.isFilled(0));
      assertEquals(BYTES, fifo.size(0));
      assertArrayEquals(payload, TestBytes.bytes(fifo.bytesOf(0), BYTES));
      fifo.release(0);
      assertEquals(0, fifo.arrived(8), "the slot's next step starts with nothing landed");
    }
  }

  @Test
  @DisplayName("nothing of a mismatched call is told; the step fails once it has arrived")
  void mismatchedCallIsNotTold() throws Exception {
    byte[] payload = TestBytes.random(BYTES, 8);
    CollectiveCall other =
        new CollectiveCall(
            CollectiveCall.Kind.ALL_REDUCE, 4, BYTES / 4, DataType.INT32, ReduceOp.SUM, -1);
    try (SocketEnds ends = SocketEnds.connect(null);
        Fifo fifo = new Fifo(STEP)) {
      RecvProxyOp op = receive(ends, fifo);
      Wire wire = ((SocketSendConnection) ends.out()).wire();
      write(wire, frame(other, payload, 0, FIRST_PART));
      long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(200);
      while (System.nanoTime() < until) {
        op.progress(System.nanoTime());
      }
      assertEquals(0, fifo.arrived(0), "bytes of another call were told to the kernel");

      write(wire, ByteBuffer.wrap(payload, FIRST_PART, BYTES - FIRST_PART));
      assertThrows(
          CclMismatchException.class, () -> passUntil(op, () -> fifo.isFilled(0)), "the step");
      assertFalse(fifo.isFilled(0));
    }
  }

  private static RecvProxyOp receive(SocketEnds ends, Fifo fifo) {
    return new RecvProxyOp(ends.in(), fifo, 0, 1, CALL, true, 1, TIMEOUT, "a receive in a test");
  }

  /** The data frame of step 0 for {@code call}: its header, then {@code payload[from, to)}. */
  private static ByteBuffer frame(CollectiveCall call, byte[] payload, int from, int to) {
    ByteBuffer f =
        ByteBuffer.allocate(SocketRequest.HEADER_BYTES + to - from).order(ByteOrder.BIG_ENDIAN);
    f.putLong(0, 0).putInt(8, BYTES).putInt(12, SocketRequest.FLAG_DATA);
    call.encode(f, SocketRequest.CALL_OFFSET);
    f.put(SocketRequest.HEADER_BYTES, payload, from, to - from);
    return f;
  }

  private static void write(Wire wire, ByteBuffer bytes) {
    assertTrue(SocketConnection.writeFrame(wire, bytes, TIMEOUT), "the bytes went out");
  }

  private static void passUntil(RecvProxyOp op, BooleanSupplier done) {
    long deadline = System.nanoTime() + TIMEOUT;
    while (!done.getAsBoolean()) {
      assertTrue(System.nanoTime() < deadline, "not within 30 s");
      op.progress(System.nanoTime());
    }
  }
}
