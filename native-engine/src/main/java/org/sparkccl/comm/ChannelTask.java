package org.sparkccl.comm;

import org.sparkccl.CclException;
import org.sparkccl.kernel.ChannelWork;
import org.sparkccl.kernel.KernelTask;

/**
 * One channel's share of a collective on its kernel thread. It does not start once the communicator
 * has failed, and it always reports back to its {@link Collective}: after it ran, after it failed,
 * or (if the kernel thread stopped first) when cancelled.
 */
final class ChannelTask implements KernelTask {
  private final CommContext ctx;
  private final Lifecycle lifecycle;
  private final CommChannel ch;
  private Collective coll;
  private final Runnable work;
  private final ChannelWork ringWork;

  ChannelTask(
      CommContext ctx, Lifecycle lifecycle, CommChannel ch, Collective coll, Runnable work) {
    this.ctx = ctx;
    this.lifecycle = lifecycle;
    this.ch = ch;
    this.coll = coll;
    this.work = work;
    this.ringWork = null;
  }

  /** The channel's kernel runs {@code ringWork} (a ring's share; no lambda to make per launch). */
  ChannelTask(
      CommContext ctx, Lifecycle lifecycle, CommChannel ch, Collective coll, ChannelWork ringWork) {
    this.ctx = ctx;
    this.lifecycle = lifecycle;
    this.ch = ch;
    this.coll = coll;
    this.work = null;
    this.ringWork = ringWork;
  }

  /**
   * Makes this task run its work again, for {@code next}: a reused plan's task ({@link PeerPlan}),
   * once the collective it ran for has completed, so it is no longer queued or running.
   */
  void reuseFor(Collective next) {
    this.coll = next;
  }

  /** Whether the collective it last ran for has completed: it is no longer queued or running. */
  boolean finished() {
    return coll.future.isDone();
  }

  /** The ring's work it runs, or null for another task. */
  ChannelWork ringWork() {
    return ringWork;
  }

  @Override
  public void run() {
    ch.current = coll;
    try {
      CclException f = ctx.failure.get();
      if (f != null) {
        // A failure from another thread (a peer's notice, a proxy's error) does not take the
        // launch lock: its drop can come between the launch's check and its queueing, and the
        // operations queued after it would stay counted (a proxy over UCX then polled for them
        // until close) and could still move into this collective's buffers.
        dropProxyOperations();
        coll.channelDone(ctx.failure.aborted(coll.what(), f));
        return;
      }
      if (ringWork != null) {
        ch.kernel.run(ringWork);
      } else {
        work.run();
      }
      coll.channelDone(null);
    } catch (RuntimeException | Error e) {
      // Errors too (an OutOfMemoryError in a reduction): the kernel thread must live on and
      // the caller must get an answer, or the collective would never complete.
      CclException err = ctx.failure.asCcl(e, coll.what());
      lifecycle.fail(err);
      // dropping again covers a failure another thread recorded but has not yet spread
      dropProxyOperations();
      coll.channelDone(err);
    } finally {
      ch.current = null;
    }
  }

  /**
   * Drops the proxy's operations and waits for any pass that may still move one. Over sockets the
   * proxy may be reading a step straight into this collective's output (or writing one from its
   * input): the buffers go back to the caller, who may free them, only once no such pass is left.
   */
  private void dropProxyOperations() {
    ctx.proxy.dropAll();
    ctx.proxy.runExclusive(() -> {});
  }

  @Override
  public void cancel() {
    CclException f = ctx.failure.get();
    coll.channelDone(
        ctx.failure.aborted(coll.what(), f != null ? f : new CclException("communicator closed")));
  }
}
