package org.sparkccl.transport;

import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import org.sparkccl.comm.CollectiveCall;

/**
 * The calls a rank announced to its ring predecessor that the proxy thread has not sent yet. A
 * broadcast's root (a reduce's leaves) runs far ahead and announces every call, so a launch only
 * queues its call and hands the proxy one task while none is waiting; that task takes every queued
 * call, oldest first, and sends them in as few messages as the transport allows.
 *
 * <pre>{@code
 * if (queue.add(call)) {
 *   proxy.execute(() -> { for (int n; (n = queue.take(batch)) > 0; ) send(batch, n); });
 * }
 * }</pre>
 */
public final class AnnouncementQueue {
  private final Queue<CollectiveCall> calls = new ConcurrentLinkedQueue<>();
  private final AtomicBoolean scheduled = new AtomicBoolean();

  /**
   * Queues {@code call}; any thread. Returns true for the first call queued since the last take:
   * where a proxy task sends, the caller must hand the proxy one (no task is waiting that would see
   * this call); where the proxy looks at the queue on every pass, a batch starts here.
   */
  public boolean add(CollectiveCall call) {
    calls.add(call);
    return !scheduled.get() && scheduled.compareAndSet(false, true);
  }

  /**
   * Moves up to {@code into.length} queued calls, oldest first, to the start of {@code into};
   * returns how many (0: none queued). Every take lets a later {@link #add} schedule another task,
   * so that no call added after a task's last take is left behind.
   */
  public int take(CollectiveCall[] into) {
    return take(into, into.length);
  }

  /**
   * As {@link #take(CollectiveCall[])}, at most {@code max} calls (0: none, but a later {@link
   * #add} schedules a task again).
   */
  public int take(CollectiveCall[] into, int max) {
    scheduled.set(false);
    int n = 0;
    for (CollectiveCall c; n < max && (c = calls.poll()) != null; ) {
      into[n++] = c;
    }
    return n;
  }

  /** Whether no call is queued. */
  public boolean isEmpty() {
    return calls.isEmpty();
  }
}
