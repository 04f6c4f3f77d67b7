package org.sparkccl.transport.ucx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.sparkccl.CclException;
import org.sparkccl.NeedsUcx;
import org.sparkccl.transport.RecvConnection;
import org.sparkccl.transport.SendConnection;

/**
 * A rank closing its UCX transport after a failure frees its side area, into which the rank it
 * sends to puts its entries. Ranks that are threads of one JVM share the address space and a
 * shared-memory put is a plain copy, so an entry posted after the free damaged the heap (the
 * process died in malloc: docs/reliability.md). The close must wait for that receiver to say it
 * stopped, as it waits for its sender.
 */
@DisplayName("a UCX transport closing after a failure")
class UcxCloseAfterFailureTest {
  private static final long SILENT_MS = 300;

  /** Below the close's 1 s wait for a silent peer. */
  private static final long WAIT_BOUND_MS = 900;

  @Test
  @Timeout(60)
  @DisplayName("keeps its memory until the rank it sends to has said it stopped")
  void waitsForTheRankItSendsTo() throws Exception {
    NeedsUcx.assume("UcxCloseAfterFailureTest");
    long liveBefore = UcxTransport.liveObjects();
    try (UcxEnds ends = UcxEnds.connect(7)) {
      UcxTransport sender = ends.rank0();
      UcxTransport receiver = ends.rank1();
      SendConnection out = (SendConnection) ends.out();
      RecvConnection in = (RecvConnection) ends.in();
      ExecutorService closer = Executors.newSingleThreadExecutor();
      try {
        // rank 0 fails and tells rank 1, which has not looked yet, then closes
        out.notifyFailure("rank 0: failed for the test");
        long[] closedAt = new long[1];
        long start = System.nanoTime();
        Future<?> closed =
            closer.submit(
                () -> {
                  sender.close(true);
                  closedAt[0] = System.nanoTime();
                });
        Thread.sleep(SILENT_MS);

        // rank 1 hears of the failure and answers, as its proxy would
        CclException heard = null;
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (heard == null && System.nanoTime() < until) {
          try {
            receiver.poll();
          } catch (CclException e) {
            heard = e;
          }
        }
        assertTrue(
            heard != null && heard.getMessage().contains("failed for the test"),
            "rank 1 heard of the failure: " + heard);
        long answeredAt = System.nanoTime();
        in.notifyPeer(true, "rank 1: stopped for the test");
        while (!closed.isDone() && System.nanoTime() < until) {
          receiver.poll();
          Thread.sleep(1);
        }
        closed.get(10, TimeUnit.SECONDS);
        long answeredMs = TimeUnit.NANOSECONDS.toMillis(answeredAt - start);
        if (answeredMs >= WAIT_BOUND_MS) {
          // the close may rightly have given up on a silent peer by then: nothing to tell
          String why = "rank 1 answered only " + answeredMs + " ms after rank 0 began to close";
          System.out.println("SKIPPED UcxCloseAfterFailureTest: " + why);
          Assumptions.abort(why);
        }
        assertTrue(
            closedAt[0] - answeredAt > 0,
            "rank 0 closed, freeing its side area, "
                + TimeUnit.NANOSECONDS.toMillis(answeredAt - closedAt[0])
                + " ms before rank 1 (which puts its entries there) said it stopped");
      } finally {
        // what runs there ends within its own deadline; the transports are closed only after it
        closer.shutdown();
        assertTrue(closer.awaitTermination(40, TimeUnit.SECONDS), "the closing thread ended");
        receiver.close(true); // it heard of the failure (the ends' close then finds both closed)
      }
    }
    assertEquals(liveBefore, UcxTransport.liveObjects(), "UCX objects left after close");
  }
}
