package org.sparkccl.comm;

import org.sparkccl.CclException;
import org.sparkccl.kernel.KernelGuard;

/** What channel {@code channel}'s kernel checks while it waits: abort, deadline, messages. */
final class ChannelGuard implements KernelGuard {
  private final CommContext ctx;
  private final int channel;

  ChannelGuard(CommContext ctx, int channel) {
    this.ctx = ctx;
    this.channel = channel;
  }

  @Override
  public void checkAbort() {
    CclException f = ctx.failure.get();
    if (f != null) {
      throw ctx.failure.aborted(ctx.channels[channel].currentOp(), f);
    }
  }

  @Override
  public long timeoutNanos() {
    return ctx.timeoutNanos;
  }

  @Override
  public String describe(boolean sending) {
    String peer =
        sending
            ? "waiting for rank " + (ctx.rank + 1) % ctx.nRanks + " to take data"
            : "waiting for data from rank " + (ctx.rank - 1 + ctx.nRanks) % ctx.nRanks;
    return "rank "
        + ctx.rank
        + ": "
        + ctx.channels[channel].currentOp()
        + ": "
        + peer
        + " (channel "
        + channel
        + ")";
  }
}
