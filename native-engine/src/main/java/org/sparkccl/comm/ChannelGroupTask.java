package org.sparkccl.comm;

import org.sparkccl.CclException;
import org.sparkccl.kernel.ChannelWork;
import org.sparkccl.kernel.KernelTask;
import org.sparkccl.kernel.PolledChannelKernel;

/**
 * Every channel's share of a ring collective, driven by one kernel thread (channel 0's) where every
 * channel's kernel can be polled: GPU resident kernels on direct edges, which need no proxy. It
 * starts the channels back to back and polls them all, where a task per channel woke a thread per
 * channel and staggered their starts; it reports each channel to the {@link Collective} as that
 * channel ends, like {@link ChannelTask} does, failures and cancellation included.
 */
final class ChannelGroupTask implements KernelTask {
  /** Empty polling passes before the thread yields its core. */
  private static final int SPINS = 64;

  private final CommContext ctx;
  private final Lifecycle lifecycle;
  private final Collective coll;
  private final ChannelWork[] works;

  /** {@code works[c]} is channel {@code c}'s share; at most 64 channels. */
  ChannelGroupTask(CommContext ctx, Lifecycle lifecycle, Collective coll, ChannelWork[] works) {
    if (works.length > Long.SIZE) {
      throw new IllegalArgumentException(works.length + " channels: expected at most 64");
    }
    this.ctx = ctx;
    this.lifecycle = lifecycle;
    this.coll = coll;
    this.works = works;
  }

  /** Whether channels {@code 0 .. used-1} can all be driven by one group task. */
  static boolean applies(CommChannel[] channels, int used) {
    if (used < 2) {
      return false;
    }
    for (int c = 0; c < used; c++) {
      CommChannel ch = channels[c];
      if (!ch.directSend
          || !ch.directRecv
          || !(ch.kernel instanceof PolledChannelKernel k)
          || !k.pollable()) {
        return false;
      }
    }
    return true;
  }

  @Override
  public void run() {
    int n = works.length;
    CclException f = ctx.failure.get();
    if (f != null) {
      CclException a = ctx.failure.aborted(coll.what(), f);
      for (int c = 0; c < n; c++) {
        coll.channelDone(a);
      }
      return;
    }
    long running = 0;
    for (int c = 0; c < n; c++) {
      ctx.channels[c].current = coll;
      try {
        kernel(c).start(works[c]);
        running |= 1L << c;
      } catch (RuntimeException | Error e) {
        fail(c, e);
      }
    }
    int idle = 0;
    while (running != 0) {
      boolean ended = false;
      for (long left = running; left != 0; left &= left - 1) {
        int c = Long.numberOfTrailingZeros(left);
        try {
          if (kernel(c).poll()) {
            running &= ~(1L << c);
            ended = true;
            ctx.channels[c].current = null;
            coll.channelDone(null);
          }
        } catch (RuntimeException | Error e) {
          // Errors too (as ChannelTask): the thread must live on and the caller get an answer
          running &= ~(1L << c);
          ended = true;
          fail(c, e);
        }
      }
      if (ended) {
        idle = 0;
      } else if (++idle < SPINS) {
        Thread.onSpinWait();
      } else {
        idle = 0;
        Thread.yield();
      }
    }
  }

  private PolledChannelKernel kernel(int c) {
    return (PolledChannelKernel) ctx.channels[c].kernel;
  }

  private void fail(int c, Throwable e) {
    ctx.channels[c].current = null;
    CclException err = ctx.failure.asCcl(e, coll.what());
    lifecycle.fail(err);
    coll.channelDone(err);
  }

  @Override
  public void cancel() {
    CclException f = ctx.failure.get();
    CclException a =
        ctx.failure.aborted(coll.what(), f != null ? f : new CclException("communicator closed"));
    for (int c = 0; c < works.length; c++) {
      coll.channelDone(a);
    }
  }
}
