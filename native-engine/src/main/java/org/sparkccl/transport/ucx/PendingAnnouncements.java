package org.sparkccl.transport.ucx;

import java.nio.ByteBuffer;
import java.util.function.Consumer;
import org.sparkccl.comm.CollectiveCall;
import org.sparkccl.transport.AnnouncementQueue;

/**
 * The calls this rank announced to its ring predecessor over UCX that the proxy has not sent yet,
 * and the notice body that carries several of them. A broadcast's root (a reduce's leaves) runs
 * thousands of calls ahead and announces each; one notice per call meant one hand-off to the proxy
 * (a wake-up), one signed tagged send and one checked receive per call, and made 8 B broadcasts and
 * reduces over UCX 6.6-9.8x slower with the check on. Now a launch queues its call and hands the
 * proxy one task only when none is waiting; that task sends every queued call, oldest first, in as
 * few notices as {@link #MAX_CALLS} allows. The receiver gets each call, in order, as before.
 *
 * <pre>{@code
 * if (pending.add(call)) {
 *   proxy.execute(() -> { for (byte[] b; (b = pending.takeBody()) != null; ) send(b); });
 * }
 * }</pre>
 */
final class PendingAnnouncements {
  /**
   * Calls in one notice body: 32 (768 bytes), as many as the longest body a notice carries ({@link
   * ControlInbox#SENT_MAX_BODY}), which UCX sends eagerly. With 256 calls (6 KiB) UCX 1.16 sent
   * some by rendezvous, which registers the buffer and completes only when the peer fetches it; a
   * rank that closed with one still outstanding crashed in UCX's clean-up (an assertion on a
   * registration still in use) in 2 of 6 runs on an H200 host, and in none of 6 with 16 calls or
   * with rendezvous switched off.
   */
  static final int MAX_CALLS = ControlInbox.SENT_MAX_BODY / CollectiveCall.BYTES;

  private final AnnouncementQueue calls = new AnnouncementQueue();

  /** The calls of the body being built (proxy thread). */
  private final CollectiveCall[] taken = new CollectiveCall[MAX_CALLS];

  /**
   * Queues {@code call}; any thread. Returns true when the caller must hand the proxy a task that
   * sends (no task is waiting that would see this call).
   */
  boolean add(CollectiveCall call) {
    return calls.add(call);
  }

  /**
   * The body of the next notice: up to {@link #MAX_CALLS} queued calls, oldest first, each as
   * {@link CollectiveCall#encode} writes it; null when none is queued. The first take of a task
   * lets a later {@link #add} schedule another, so that no call added after this task's last take
   * is left behind. Proxy thread only.
   */
  byte[] takeBody() {
    int n = calls.take(taken);
    if (n == 0) {
      return null;
    }
    ByteBuffer body = ByteBuffer.allocate(n * CollectiveCall.BYTES);
    for (int i = 0; i < n; i++) {
      taken[i].encode(body, i * CollectiveCall.BYTES);
      taken[i] = null;
    }
    return body.array();
  }

  /**
   * Hands each call of a notice body to {@code to}, in order. Returns false, handing over nothing,
   * when the body is not a whole number of valid calls.
   */
  static boolean decode(byte[] body, Consumer<CollectiveCall> to) {
    if (body.length == 0 || body.length % CollectiveCall.BYTES != 0) {
      return false;
    }
    ByteBuffer in = ByteBuffer.wrap(body);
    int n = body.length / CollectiveCall.BYTES;
    CollectiveCall[] decoded = new CollectiveCall[n];
    for (int i = 0; i < n; i++) {
      decoded[i] = CollectiveCall.decode(in, i * CollectiveCall.BYTES);
      if (decoded[i] == null) {
        return false;
      }
    }
    for (CollectiveCall c : decoded) {
      to.accept(c);
    }
    return true;
  }
}
