package org.sparkccl.transport.ucx;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.sparkccl.CclException;
import org.sparkccl.comm.CollectiveCall;
import org.sparkccl.comm.RandomCalls;

/**
 * The announcement board between two ring neighbours, over plain memory: each rank's side area a
 * buffer, a put a copy from one into the other. Every call must arrive once, in order, however far
 * the writer runs ahead of the reader, and the writer must never overwrite a slot not yet read.
 */
@DisplayName("UCX announcement board")
class AnnouncementBoardTest {
  /** The announcing rank's side area and its predecessor's. */
  private final ByteBuffer writerSide = side();

  private final ByteBuffer readerSide = side();
  private final SidePut intoReader = copy(writerSide, readerSide);
  private final SidePut intoWriter = copy(readerSide, writerSide);
  private final AnnouncementWriter writer = new AnnouncementWriter(writerSide);
  private final AnnouncementReader reader = new AnnouncementReader(readerSide, "rank 0 -> rank 1");

  @Test
  @DisplayName("calls far ahead of the reader wait for room, then arrive once and in order")
  void callsWaitForRoomAndArriveInOrder() {
    Random random = new Random(20261205);
    int n = 5 * UcxLayout.CALL_SLOTS + 17;
    CollectiveCall[] calls = new CollectiveCall[n];
    assertFalse(writer.pending(), "nothing queued yet");
    for (int i = 0; i < n; i++) {
      calls[i] = RandomCalls.next(random, i + 1, 8);
      writer.add(calls[i]);
    }
    assertTrue(writer.pending(), "calls queued: the proxy's pass must write");
    assertTrue(writer.flush(intoReader));
    assertTrue(writer.pending(), "what did not fit is still pending");
    assertTrue(writer.blocked(), "a whole board unread: the rest waits");
    assertFalse(writer.flush(intoReader), "no room, nothing written");
    List<CollectiveCall> received = new ArrayList<>();
    int rounds = 0;
    while (received.size() < n) {
      // the reader reads what is there, the writer then fills what that freed
      int before = received.size();
      reader.read(received::add, intoWriter);
      assertTrue(received.size() > before, "a blocked writer had nothing read");
      writer.flush(intoReader);
      assertTrue(++rounds <= n / UcxLayout.CALL_SLOTS + 1, "rounds: " + rounds);
    }
    assertArrayEquals(calls, received.toArray(), "the calls as announced, in order");
    assertFalse(writer.blocked());
    assertFalse(writer.pending(), "every call written");
    assertEquals(0, reader.read(received::add, intoWriter), "nothing read twice");
    writer.add(RandomCalls.next(random, n + 1, 8));
    assertTrue(writer.pending(), "a call queued after the queue emptied is pending again");
  }

  @Test
  @DisplayName("a reader behind by less than a board never blocks the writer")
  void aReaderWithinABoardNeverBlocks() {
    Random random = new Random(7);
    List<CollectiveCall> received = new ArrayList<>();
    for (int i = 0; i < 20 * UcxLayout.CALL_SLOTS; i++) {
      writer.add(RandomCalls.next(random, i + 1, 8));
      writer.flush(intoReader);
      assertFalse(writer.blocked(), "blocked at call " + i);
      if (i % (UcxLayout.CALL_SLOTS / 2) == 0) {
        reader.read(received::add, intoWriter);
      }
    }
    reader.read(received::add, intoWriter);
    assertEquals(20 * UcxLayout.CALL_SLOTS, received.size());
  }

  @Test
  @Timeout(60)
  @DisplayName("two announcing threads and a writing one: every call arrives once, none is left")
  void concurrentAnnouncersLoseNothing() throws Exception {
    List<CollectiveCall> received = new ArrayList<>();
    int perThread = 20_000;
    Thread[] announcers = new Thread[2];
    for (int t = 0; t < announcers.length; t++) {
      int thread = t;
      announcers[t] =
          new Thread(
              () -> {
                Random random = new Random(thread);
                for (int i = 0; i < perThread; i++) {
                  // thread t announces numbers t, t + 2, t + 4, ... so each keeps its own order
                  writer.add(RandomCalls.next(random, 2L * i + thread, 8));
                }
              });
      announcers[t].start();
    }
    // the proxy's passes: the writer's flush where calls are pending, and the reader's look
    while (announcers[0].isAlive() || announcers[1].isAlive() || writer.pending()) {
      if (writer.pending()) {
        writer.flush(intoReader);
      }
      reader.read(received::add, intoWriter);
    }
    for (Thread t : announcers) {
      t.join(TimeUnit.SECONDS.toMillis(30));
    }
    reader.read(received::add, intoWriter);
    assertEquals(2 * perThread, received.size(), "calls received");
    long[] next = {0, 1};
    for (CollectiveCall c : received) {
      int thread = (int) (c.seq() % 2);
      assertEquals(next[thread], c.seq(), "thread " + thread + "'s calls out of order");
      next[thread] += 2;
    }
  }

  @Test
  @Timeout(60)
  @DisplayName("a proxy that passes often writes a batch once its oldest call has waited")
  void callsAreDueOnlyOnceTheBatchHasWaited() {
    Random random = new Random(20261205);
    assertFalse(writer.due(), "nothing queued");
    long seq = 0;
    for (int batch = 0; batch < 5; batch++) {
      long start = System.nanoTime();
      int queued = 1 + random.nextInt(40);
      for (int i = 0; i < queued; i++) {
        writer.add(RandomCalls.next(random, ++seq, 8));
      }
      List<CollectiveCall> received = new ArrayList<>();
      int passes = 0;
      while (!writer.due()) {
        passes++;
        reader.read(received::add, intoWriter);
        assertTrue(received.isEmpty(), "a call arrived before the batch was written");
      }
      long waited = System.nanoTime() - start;
      assertTrue(
          waited >= AnnouncementWriter.BATCH_NANOS,
          "batch " + batch + " due after " + waited + " ns, " + passes + " passes");
      assertTrue(writer.flush(intoReader));
      assertFalse(writer.due(), "batch " + batch + ": nothing left after the write");
      reader.read(received::add, intoWriter);
      assertEquals(queued, received.size(), "batch " + batch + ": one write carried them all");
    }
  }

  @Test
  @DisplayName("calls waiting for room are due on every pass")
  void blockedCallsAreAlwaysDue() {
    Random random = new Random(11);
    for (int i = 0; i <= UcxLayout.CALL_SLOTS; i++) {
      writer.add(RandomCalls.next(random, i + 1, 8));
    }
    writer.flush(intoReader);
    assertTrue(writer.blocked(), "a board and one call written, none read");
    assertTrue(writer.due(), "the call left over looks for room at once");
    reader.read(c -> {}, intoWriter);
    assertTrue(writer.flush(intoReader), "room once the reader has told how far it read");
    assertFalse(writer.due());
  }

  @Test
  @DisplayName("a slot whose numbers match but which holds no call is a protocol error")
  void aSlotWithoutACallFails() {
    writer.add(RandomCalls.next(new Random(3), 1, 8));
    writer.flush(intoReader);
    readerSide.put(UcxLayout.call(0) + UcxLayout.CALL_CALL + 16, (byte) 99); // the call's kind
    CclException e = assertThrows(CclException.class, () -> reader.read(c -> {}, intoWriter));
    assertTrue(e.getMessage().contains("rank 0 -> rank 1"), e.getMessage());
    assertTrue(e.getMessage().contains("announcement 1"), e.getMessage());
  }

  private static ByteBuffer side() {
    return ByteBuffer.allocateDirect(UcxLayout.BYTES).order(ByteOrder.nativeOrder());
  }

  private static SidePut copy(ByteBuffer from, ByteBuffer to) {
    return (local, length, remote) -> to.put(remote, from, local, length);
  }
}
