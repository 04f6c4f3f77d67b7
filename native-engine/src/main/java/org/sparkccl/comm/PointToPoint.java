package org.sparkccl.comm;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.sparkccl.CclException;
import org.sparkccl.DataType;
import org.sparkccl.device.DeviceBuffer;
import org.sparkccl.device.HostBuffer;
import org.sparkccl.device.HostDevice;
import org.sparkccl.kernel.HostP2pKernel;
import org.sparkccl.proxy.RecvProxyOp;
import org.sparkccl.proxy.SendProxyOp;

/**
 * Sends, receives and groups of them, like NCCL's {@code ncclSend}/{@code ncclRecv} inside {@code
 * ncclGroupStart}/{@code ncclGroupEnd}: calls recorded in a group start together at its outermost
 * end, as one task on channel 0's kernel thread over the point-to-point links.
 */
public final class PointToPoint {
  /** One send or receive, as recorded. */
  private record PeerCall(
      boolean send,
      DeviceBuffer buf,
      long count,
      DataType dtype,
      int peer,
      CompletableFuture<Void> done) {}

  private final CommContext ctx;
  private final CollectiveLauncher launcher;
  private final List<PeerCall> group = new ArrayList<>();
  private int groupDepth;
  private long groups;

  PointToPoint(CommContext ctx, CollectiveLauncher launcher) {
    this.ctx = ctx;
    this.launcher = launcher;
  }

  /** Starts recording sends and receives. */
  public void groupStart() {
    synchronized (ctx.launchLock) {
      ctx.failure.checkUsable();
      groupDepth++;
    }
  }

  /**
   * Ends a group: launches its transfers; the future completes when all are done. {@code blocking}:
   * the caller waits for it at once, and may run the transfers itself ({@link
   * CollectiveLauncher#runInline}).
   */
  public CompletableFuture<Void> groupEnd(boolean blocking) {
    Launched launched;
    synchronized (ctx.launchLock) {
      if (groupDepth == 0) {
        throw new IllegalStateException("groupEnd without groupStart");
      }
      if (--groupDepth > 0) {
        return CompletableFuture.completedFuture(null);
      }
      List<PeerCall> calls = List.copyOf(group);
      group.clear();
      launched = launch(calls, blocking);
    }
    launcher.runInline(launched.inline());
    return launched.future();
  }

  /** A send ({@code send}) or receive of {@code count} elements with {@code peer}. */
  public CompletableFuture<Void> call(
      boolean send, DeviceBuffer buf, long count, DataType dtype, int peer) {
    return call(send, buf, count, dtype, peer, false);
  }

  /**
   * {@link #call}, for a caller that will wait for the future ({@code blocking}): refused inside a
   * group, where the future completes only at the group's end, which the waiting thread would never
   * reach.
   */
  public CompletableFuture<Void> call(
      boolean send, DeviceBuffer buf, long count, DataType dtype, int peer, boolean blocking) {
    Arguments.checkDtype(dtype);
    if (peer < 0 || peer >= ctx.nRanks || peer == ctx.rank) {
      throw new IllegalArgumentException(
          "peer="
              + peer
              + " is invalid; expected another rank in 0.."
              + (ctx.nRanks - 1)
              + " (this is rank "
              + ctx.rank
              + ")");
    }
    DeviceBuffer b = Arguments.buffer(send ? "send" : "recv", buf, count, dtype, ctx.device);
    Launched launched;
    synchronized (ctx.launchLock) {
      ctx.failure.checkUsable();
      if (blocking && groupDepth > 0) {
        String name = send ? "send" : "recv";
        throw new IllegalStateException(
            "rank "
                + ctx.rank
                + ": a blocking "
                + name
                + " inside a group would wait for the group's end for ever; inside groupStart()"
                + "/groupEnd() (or comm.group()) call "
                + name
                + "Async, and wait once the group has ended");
      }
      PeerCall call = new PeerCall(send, b, count, dtype, peer, new CompletableFuture<>());
      if (groupDepth > 0) {
        group.add(call);
        return call.done();
      }
      launched = launch(List.of(call), blocking);
    }
    launcher.runInline(launched.inline());
    return launched.future();
  }

  /**
   * A launch's future, and its collective (null when nothing was launched), which {@link
   * CollectiveLauncher#runInline} runs on a blocking caller's thread if it queued its task for it.
   */
  private record Launched(CompletableFuture<Void> future, Collective inline) {}

  /** One transfer whose link is connected and whose host memory is ready. */
  private record Prepared(PeerCall call, PeerLinks.Link link, HostBuffer host) {}

  /**
   * Launches sends and receives as one kernel task on channel 0's kernel thread. Everything that
   * can fail (a buffer closed since it was recorded, a peer that cannot be reached, staging memory)
   * happens before anything is queued; a failure there releases what was taken and fails the calls'
   * futures, so nothing stays retained and no future waits for ever.
   */
  private Launched launch(List<PeerCall> calls, boolean blocking) {
    ctx.failure.checkUsable();
    List<PeerCall> live = calls.stream().filter(c -> c.count() > 0).toList();
    if (live.isEmpty()) {
      calls.forEach(c -> c.done().complete(null));
      return new Launched(CompletableFuture.completedFuture(null), null);
    }
    // Groups have their own numbering: ranks may run different numbers of them, while the
    // collectives' numbers must agree on every rank for the mismatch check.
    String what = "send/recv group #" + ++groups + " (" + live.size() + " transfers)";
    List<DeviceBuffer> retained = new ArrayList<>();
    List<HostBuffer> staging = new ArrayList<>();
    List<Runnable> copyIn = new ArrayList<>();
    List<Runnable> copyOut = new ArrayList<>();
    List<Prepared> prepared = new ArrayList<>();
    try {
      for (PeerCall c : live) {
        c.buf().retain();
        retained.add(c.buf());
      }
      PeerLinks peers = ctx.links().peers();
      for (PeerCall c : live) {
        PeerLinks.Link link = c.send() ? peers.sendTo(c.peer()) : peers.recvFrom(c.peer());
        long bytes = c.count() * c.dtype().size();
        prepared.add(new Prepared(c, link, hostSide(c, bytes, staging, copyIn, copyOut)));
      }
    } catch (RuntimeException e) {
      retained.forEach(DeviceBuffer::release);
      staging.forEach(HostBuffer::close);
      CclException err =
          e instanceof CclException ce
              ? ce
              : new CclException("rank " + ctx.rank + ": " + what + " cannot start: " + e, e);
      calls.forEach(c -> c.done().completeExceptionally(err));
      return new Launched(CompletableFuture.failedFuture(err), null);
    }
    Collective coll =
        new Collective(
            what,
            1,
            () -> {
              retained.forEach(DeviceBuffer::release);
              staging.forEach(HostBuffer::close);
            });
    ctx.pending.add();
    // The group's future is the stage after the per-call futures completed, so that every one
    // of them is done when groupEnd returns.
    CompletableFuture<Void> all =
        coll.future.whenComplete(
            (v, e) -> {
              ctx.pending.remove();
              for (PeerCall c : calls) {
                if (e == null) {
                  c.done().complete(null);
                } else {
                  c.done().completeExceptionally(e);
                }
              }
            });
    List<HostP2pKernel.Transfer> transfers = new ArrayList<>();
    for (Prepared p : prepared) {
      transfers.add(transfer(p, what));
    }
    CommChannel ch = ctx.channels[0];
    ChannelGuard guard = new ChannelGuard(ctx, 0);
    coll.runsInline = launcher.runsInline(blocking, 1);
    launcher.runOn(
        ch,
        coll,
        () -> {
          copyIn.forEach(Runnable::run);
          HostP2pKernel.run(transfers, ch.waiter, guard);
          copyOut.forEach(Runnable::run);
        });
    return new Launched(all, coll);
  }

  /** Queues the proxy operation of one transfer and describes it for the kernel. */
  private HostP2pKernel.Transfer transfer(Prepared p, String what) {
    PeerCall c = p.call();
    PeerLinks.Link link = p.link();
    long bytes = c.count() * c.dtype().size();
    int stepSize = ctx.config.stepSize();
    long steps = (bytes + stepSize - 1) / stepSize;
    CollectiveCall desc =
        new CollectiveCall(
            CollectiveCall.Kind.SEND_RECV,
            link.nextSeq++,
            c.count(),
            c.dtype(),
            null,
            c.send() ? c.peer() : ctx.rank);
    String prefix = "rank " + ctx.rank + ": " + what + ": ";
    if (c.send()) {
      ctx.proxy.enqueue(
          new SendProxyOp(
              link.send(),
              link.fifo,
              link.nextStep,
              steps,
              desc,
              ctx.timeoutNanos,
              prefix + "sending to rank " + c.peer()));
    } else {
      ctx.proxy.enqueue(
          new RecvProxyOp(
              link.recv(),
              link.fifo,
              link.nextStep,
              steps,
              desc,
              ctx.calls.checks(),
              ctx.rank,
              ctx.timeoutNanos,
              prefix + "receiving from rank " + c.peer()));
    }
    HostP2pKernel.Transfer t =
        new HostP2pKernel.Transfer(
            c.send(),
            link.fifo,
            link.nextStep,
            p.host().memory(),
            0,
            (int) bytes,
            prefix
                + (c.send()
                    ? "waiting for rank " + c.peer() + " to take data"
                    : "waiting for data from rank " + c.peer()));
    link.nextStep += steps;
    return t;
  }

  /**
   * The host memory a point-to-point transfer moves: the buffer itself on the host; for a device
   * buffer a staging copy, filled before the transfer (send) or copied out after it (recv).
   * Collectives have device kernels; sends and receives are staged through the host.
   */
  private static HostBuffer hostSide(
      PeerCall c,
      long bytes,
      List<HostBuffer> staging,
      List<Runnable> copyIn,
      List<Runnable> copyOut) {
    if (c.buf() instanceof HostBuffer h) {
      return h;
    }
    HostBuffer s = HostDevice.INSTANCE.allocate(bytes);
    staging.add(s);
    ByteBuffer region = s.memory().slice(0, (int) bytes);
    if (c.send()) {
      copyIn.add(() -> c.buf().copyToHost(0, region.duplicate().order(ByteOrder.nativeOrder())));
    } else {
      copyOut.add(() -> c.buf().copyFromHost(region.duplicate().order(ByteOrder.nativeOrder()), 0));
    }
    return s;
  }
}
