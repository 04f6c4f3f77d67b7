package org.sparkccl.transport.ucx;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.sparkccl.auth.ChallengeResponse;
import org.sparkccl.comm.CollectiveCall;
import org.sparkccl.comm.RandomCalls;

/**
 * Announcements queued for the proxy: a rank that runs ahead must hand the proxy one task, not one
 * per call, and its peer must still receive every call once, in order.
 */
@DisplayName("pending UCX announcements")
class PendingAnnouncementsTest {
  @Test
  @DisplayName("calls queued while no send ran leave in one task, in few notices, in order")
  void queuedCallsLeaveTogether() {
    Random random = new Random(20261203);
    PendingAnnouncements pending = new PendingAnnouncements();
    int n = 1_000;
    CollectiveCall[] calls = new CollectiveCall[n];
    int tasks = 0;
    for (int i = 0; i < n; i++) {
      calls[i] = randomCall(random, i + 1);
      tasks += pending.add(calls[i]) ? 1 : 0;
    }
    assertEquals(1, tasks, "tasks handed to the proxy for 1,000 calls queued at once");
    List<CollectiveCall> received = new ArrayList<>();
    int notices = 0;
    for (byte[] body; (body = pending.takeBody()) != null; notices++) {
      assertTrue(body.length <= PendingAnnouncements.MAX_CALLS * CollectiveCall.BYTES);
      assertTrue(PendingAnnouncements.decode(body, received::add));
    }
    assertEquals(
        (n + PendingAnnouncements.MAX_CALLS - 1) / PendingAnnouncements.MAX_CALLS, notices);
    assertArrayEquals(calls, received.toArray(), "the calls as announced, in order");
    assertTrue(pending.add(randomCall(random, n + 1)), "after a send, the next call needs a task");
    assertFalse(pending.add(randomCall(random, n + 2)), "and the one after it shares that task");
  }

  @Test
  @Timeout(60)
  @DisplayName("two announcing threads and a sending one: every call arrives once, none is left")
  void concurrentAnnouncersLoseNothing() throws Exception {
    PendingAnnouncements pending = new PendingAnnouncements();
    ConcurrentLinkedQueue<Runnable> proxy = new ConcurrentLinkedQueue<>();
    List<CollectiveCall> received = new ArrayList<>();
    AtomicInteger tasks = new AtomicInteger();
    int perThread = 20_000;
    Runnable send =
        () -> {
          for (byte[] body; (body = pending.takeBody()) != null; ) {
            assertTrue(PendingAnnouncements.decode(body, received::add));
          }
        };
    Thread[] announcers = new Thread[2];
    for (int t = 0; t < announcers.length; t++) {
      int thread = t;
      announcers[t] =
          new Thread(
              () -> {
                Random random = new Random(thread);
                for (int i = 0; i < perThread; i++) {
                  // thread t announces numbers t, t + 2, t + 4, ... so each keeps its own order
                  if (pending.add(randomCall(random, 2L * i + thread))) {
                    tasks.incrementAndGet();
                    proxy.add(send);
                  }
                }
              });
      announcers[t].start();
    }
    while (announcers[0].isAlive() || announcers[1].isAlive() || !proxy.isEmpty()) {
      Runnable task = proxy.poll();
      if (task != null) {
        task.run();
      }
    }
    for (Thread t : announcers) {
      t.join(TimeUnit.SECONDS.toMillis(30));
    }
    for (Runnable task; (task = proxy.poll()) != null; ) {
      task.run();
    }
    assertEquals(2 * perThread, received.size(), "calls received (" + tasks + " tasks ran)");
    long[] next = {0, 1};
    for (CollectiveCall c : received) {
      int thread = (int) (c.seq() % 2);
      assertEquals(next[thread], c.seq(), "thread " + thread + "'s calls out of order");
      next[thread] += 2;
    }
    assertNull(pending.takeBody(), "nothing left behind");
  }

  @Test
  @DisplayName("a body that is not whole valid calls hands over nothing")
  void malformedBodiesAreRefused() {
    Random random = new Random(3);
    PendingAnnouncements pending = new PendingAnnouncements();
    pending.add(randomCall(random, 1));
    pending.add(randomCall(random, 2));
    byte[] body = pending.takeBody();
    List<CollectiveCall> received = new ArrayList<>();
    assertFalse(PendingAnnouncements.decode(java.util.Arrays.copyOf(body, 25), received::add));
    byte[] badKind = body.clone();
    badKind[CollectiveCall.BYTES + 16] = 99; // the second call's kind
    assertFalse(PendingAnnouncements.decode(badKind, received::add));
    assertFalse(PendingAnnouncements.decode(new byte[0], received::add));
    assertTrue(received.isEmpty(), "nothing handed over from a bad body: " + received);
    assertTrue(PendingAnnouncements.decode(body, received::add));
    assertEquals(2, received.size());
  }

  @Test
  @DisplayName("a full batch and a long failure message both leave in a notice UCX sends eagerly")
  void noticesStaySmall() {
    Random random = new Random(5);
    PendingAnnouncements pending = new PendingAnnouncements();
    for (int i = 0; i < 3 * PendingAnnouncements.MAX_CALLS; i++) {
      pending.add(randomCall(random, i + 1));
    }
    byte[] secret = new byte[ChallengeResponse.SECRET_BYTES];
    random.nextBytes(secret);
    NoticeMac mac = new NoticeMac(secret, 1, 0, 0, true);
    int limit = ControlInbox.HEADER_BYTES + ControlInbox.SENT_MAX_BODY + NoticeMac.BYTES;
    byte[] batch = pending.takeBody();
    assertEquals(PendingAnnouncements.MAX_CALLS * CollectiveCall.BYTES, batch.length);
    assertEquals(
        limit, ControlInbox.notice(ControlInbox.ANNOUNCE, 1, 0, false, 1, batch, mac).remaining());
    byte[] text = "rank 1 failed: ".repeat(1000).getBytes(StandardCharsets.UTF_8);
    ByteBuffer fail = ControlInbox.notice(ControlInbox.FAIL, 1, 0, false, 2, text, mac);
    assertEquals(limit, fail.remaining(), "a long failure message is cut");
    assertTrue(limit <= 1024, "at most 1 KiB a notice: " + limit);
  }

  private static CollectiveCall randomCall(Random random, long seq) {
    return RandomCalls.next(random, seq, 8);
  }
}
