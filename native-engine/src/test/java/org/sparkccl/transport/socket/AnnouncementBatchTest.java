package org.sparkccl.transport.socket;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.sparkccl.DataType;
import org.sparkccl.ReduceOp;
import org.sparkccl.comm.CollectiveCall;
import org.sparkccl.config.IdleMode;
import org.sparkccl.idle.IdleStrategies;
import org.sparkccl.proxy.ProxyThread;
import org.sparkccl.transport.RecvConnection;
import org.sparkccl.transport.SendConnection;

/**
 * Announcements over a ring socket go out through the proxy thread, several frames a write: every
 * call reaches the predecessor once and in order, and a close notice written right after the last
 * announcement does not overtake the ones still queued for the proxy.
 */
@DisplayName("announcements written by the proxy thread")
class AnnouncementBatchTest {

  /**
   * Ranks hand their announcements to the proxy, which writes them a moment later: a spinning proxy
   * finds them on a pass, one that backs off shortens its wait to their time.
   */
  @ParameterizedTest(name = "idle={0}")
  @EnumSource(
      value = IdleMode.class,
      names = {"SPIN", "BACKOFF"})
  @Timeout(60)
  @DisplayName(
      "3,000 random calls announced while the proxy is busy reach the peer in order, before the"
          + " close notice that follows them")
  void everyCallArrivesInOrderBeforeTheClose(IdleMode mode) throws Exception {
    AtomicReference<RuntimeException> proxyError = new AtomicReference<>();
    ProxyThread proxy =
        new ProxyThread(
            "sparkccl-test-proxy",
            new IdleStrategies(mode, 50_000),
            e -> proxyError.compareAndSet(null, e));
    proxy.start();
    try (SocketEnds ends = SocketEnds.connect(proxy::executeOutsidePassesLater)) {
      SendConnection out = ends.out();
      RecvConnection in = ends.in();
      assertFalse(
          ((SocketSendConnection) out).handler().runsInPass(),
          "a ring connection's notices are read outside the proxy's passes");
      List<CollectiveCall> heard = new CopyOnWriteArrayList<>();
      out.onAnnounce(heard::add);

      List<CollectiveCall> announced = randomCalls(3_000, new SplittableRandom(77));
      // the proxy is busy when the calls are announced, so they queue for it, and the close is
      // written (by this thread) while most of them still wait there
      proxy.execute(() -> LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50)));
      for (CollectiveCall c : announced) {
        in.announce(c);
      }
      in.notifyPeer(false, "rank 1 closed its communicator");

      SocketSendConnection reader = (SocketSendConnection) out;
      long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
      while (!reader.peerHasClosed() && System.nanoTime() < end) {
        reader.readNotice(); // stops at the close notice: nothing after it is read
        LockSupport.parkNanos(200_000);
      }
      assertTrue(reader.peerHasClosed(), "the close notice arrived");
      assertEquals(
          announced.size(),
          heard.size(),
          "calls heard before the close notice (a close that overtook queued announcements"
              + " leaves some unheard)");
      assertEquals(announced, new ArrayList<>(heard), "the calls, in the order announced");
      assertNull(proxyError.get(), "the proxy reported an error");
    } finally {
      proxy.close(10_000);
    }
  }

  /** Calls of increasing sequence numbers with random kinds, sizes, types and roots. */
  private static List<CollectiveCall> randomCalls(int n, SplittableRandom rnd) {
    CollectiveCall.Kind[] kinds = {
      CollectiveCall.Kind.BROADCAST, CollectiveCall.Kind.REDUCE, CollectiveCall.Kind.ALL_REDUCE
    };
    DataType[] types = {DataType.FLOAT32, DataType.FLOAT64, DataType.INT32};
    List<CollectiveCall> calls = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      CollectiveCall.Kind kind = kinds[rnd.nextInt(kinds.length)];
      calls.add(
          new CollectiveCall(
              kind,
              i + 1,
              1 + rnd.nextInt(1 << 20),
              types[rnd.nextInt(types.length)],
              kind == CollectiveCall.Kind.BROADCAST ? null : ReduceOp.SUM,
              rnd.nextInt(8)));
    }
    return calls;
  }
}
