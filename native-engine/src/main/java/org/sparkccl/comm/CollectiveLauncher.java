package org.sparkccl.comm;

import static org.sparkccl.kernel.HostDoublingKernel.Kind.EXCHANGE;
import static org.sparkccl.kernel.HostDoublingKernel.Kind.EXCHANGE_COPY;
import static org.sparkccl.kernel.HostDoublingKernel.Kind.RECEIVE_COPY;
import static org.sparkccl.kernel.HostDoublingKernel.Kind.RECEIVE_REDUCE;
import static org.sparkccl.kernel.HostDoublingKernel.Kind.SEND;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.LongFunction;
import org.sparkccl.CclException;
import org.sparkccl.CclMismatchException;
import org.sparkccl.DataType;
import org.sparkccl.ReduceOp;
import org.sparkccl.algorithm.ChannelPlan;
import org.sparkccl.algorithm.ChannelSplit;
import org.sparkccl.algorithm.RecursiveDoubling;
import org.sparkccl.algorithm.RecursiveHalving;
import org.sparkccl.algorithm.Tree;
import org.sparkccl.algorithm.Tuner;
import org.sparkccl.config.Algorithm;
import org.sparkccl.config.CclConfig;
import org.sparkccl.device.DeviceBuffer;
import org.sparkccl.device.HostBuffer;
import org.sparkccl.device.HostDevice;
import org.sparkccl.fifo.Fifo;
import org.sparkccl.kernel.ChannelWork;
import org.sparkccl.kernel.HostDoublingKernel;
import org.sparkccl.kernel.HostOperands;
import org.sparkccl.kernel.HostTreeKernel;
import org.sparkccl.kernel.KernelTask;
import org.sparkccl.kernel.KernelThread;
import org.sparkccl.kernel.KernelWaiter;
import org.sparkccl.kernel.PeerEdge;
import org.sparkccl.proxy.OpSite;
import org.sparkccl.proxy.RecvProxyOp;
import org.sparkccl.proxy.SendProxyOp;
import org.sparkccl.transport.RecvConnection;
import org.sparkccl.transport.SendConnection;

/**
 * Plans and launches collectives, in call order, like NCCL's enqueue: picks ring, tree, recursive
 * doubling or Rabenseifner, splits the ring's work over the channels, queues each channel's send
 * and receive operations on the proxy and its share of the work on the channel's kernel thread.
 * With one rank a collective is a copy.
 */
public final class CollectiveLauncher {
  private final CommContext ctx;
  private final Lifecycle lifecycle;
  private final Tuner tuner;

  /** The tuner where the communicator's threads spin and not every edge lies in shared memory. */
  private final Tuner spinningTuner;

  /**
   * {@link #spinningTuner} for a ring that moves large steps in place (sockets), with
   * Rabenseifner's cost for exchanges that fit one slot ({@link Tuner#withOneSlotHalving}).
   */
  private final Tuner spinningInPlaceTuner;

  /** The tuner where the ring and every point-to-point edge lie in shared memory. */
  private final Tuner sharedMemoryTuner;

  private final RingSites sites;
  private final PlanCache plans;
  private final PeerPlans peerPlans = new PeerPlans();

  /** Channel 0's guard, for the kernels of trees, doubling and Rabenseifner. */
  private final ChannelGuard guard;

  private final LongFunction<CollectiveCall> launched;

  /** A doubling launch's exchanges while they are listed; used under the launch lock only. */
  private final List<HostDoublingKernel.Exchange> exchanges = new ArrayList<>();

  private long seq;

  CollectiveLauncher(CommContext ctx, Lifecycle lifecycle) {
    this.ctx = ctx;
    this.lifecycle = lifecycle;
    this.sites = new RingSites(ctx.rank, ctx.channels.length);
    this.plans = new PlanCache(ctx.channels.length, ctx.rank, ctx.nRanks, ctx.config.stepSize());
    this.guard = new ChannelGuard(ctx, 0);
    this.launched = ctx.calls::launched;
    this.tuner =
        new Tuner(
            ctx.config.hopLatencyUs(),
            ctx.config.treeHopLatencyUs(),
            ctx.config.linkGBps(),
            ctx.config.algo());
    this.spinningTuner =
        new Tuner(
            ctx.config.spinHopLatencyUs(),
            ctx.config.spinTreeHopLatencyUs(),
            ctx.config.spinLinkGBps(),
            ctx.config.algo());
    this.spinningInPlaceTuner =
        spinningTuner.withRingInPlace().withOneSlotHalving(ctx.config.stepSize());
    this.sharedMemoryTuner =
        Tuner.forSharedMemory(
            ctx.config.shmHopLatencyUs(),
            ctx.config.shmTreeHopLatencyUs(),
            ctx.config.shmLinkGBps(),
            ctx.config.algo());
  }

  /**
   * Launches a collective on the channels. With one rank it is a copy of {@code count} elements
   * from {@code localSrc} to {@code localDst} (element offsets).
   *
   * <p>{@code blocking}: the caller waits for the future at once. A collective of host memory on
   * one channel then runs on the calling thread when its kernel thread has nothing before it
   * ({@link KernelThread#runInline}): no hand-off to the kernel thread and back, which is two
   * thread wake-ups where threads sleep and one spinning thread more per rank where they spin. The
   * future is then done when this returns.
   */
  public CompletableFuture<Void> launch(
      boolean blocking,
      CollectiveCall.Kind kind,
      long count,
      DataType dtype,
      ReduceOp op,
      int root,
      DeviceBuffer src,
      DeviceBuffer dst,
      long localSrc,
      long localDst) {
    Collective coll;
    synchronized (ctx.launchLock) {
      ctx.failure.checkUsable();
      CollectiveCall call = new CollectiveCall(kind, ++seq, count, dtype, op, root);
      CclMismatchException announcedMismatch = ctx.nRanks > 1 ? ctx.calls.recordLaunch(call) : null;
      if (announcedMismatch != null) {
        lifecycle.fail(announcedMismatch);
        ctx.failure.checkUsable();
      }
      NeighbourCalls neighbours = ctx.nRanks > 1 ? ctx.neighbours : null;
      if (neighbours != null) {
        neighbours.post(call);
      }
      if (count == 0) {
        return CompletableFuture.completedFuture(null);
      }
      Algorithm algo = pick(kind, count * dtype.size());
      // over point-to-point links, on channel 0's kernel
      boolean peerToPeer = algo != Algorithm.RING;
      // Tree, doubling and chain collectives can leave two mismatched ranks both waiting to
      // receive; a
      // kernel stalled in one then announces the call to its ring predecessor (see
      // announceStalled). Ring allReduce, allGather and reduceScatter need no announcement:
      // every rank's first step sends to its successor, whose receive checks the header.
      boolean rooted = kind == CollectiveCall.Kind.BROADCAST || kind == CollectiveCall.Kind.REDUCE;
      boolean announce = ctx.calls.checks() && ctx.nRanks > 1 && (peerToPeer || rooted);
      boolean atLaunch = announce && rooted && announcesAtLaunch(algo, kind, call.root());
      boolean treeRank = announce && rooted && algo == Algorithm.TREE;
      if (atLaunch && (neighbours == null || !neighbours.coversPrev())) {
        // A rank that only sends may finish its part without ever waiting, so it could not
        // announce on a stall: it announces at once (one small frame, nobody waits for it). Every
        // other rank reads a header its proxy checks against its own call, or stalls and
        // announces then. The predecessor keeps an announcement until it launches that number.
        ctx.calls.claimAnnouncement(call.seq());
        ctx.channels[0].recv.announce(call);
      }
      if (neighbours != null && (atLaunch || treeRank)) {
        // Where neighbours share memory a posted call is read, not kept for the reader's launch:
        // a rank that only sends finds a neighbour's call only if that one posted first, so every
        // rank of a tree compares at launch too (a fence and two reads), and of two neighbours
        // that both compare, at least one sees the other's call (NeighbourCalls).
        CclMismatchException posted = neighbours.compare(call);
        if (posted != null) {
          lifecycle.fail(posted);
          ctx.failure.checkUsable();
        }
      }
      int used =
          ctx.nRanks == 1 || peerToPeer
              ? 1
              : ChannelSplit.channels(count, dtype.size(), ctx.channels.length);
      src.retain();
      dst.retain();
      coll = new Collective(call, ctx.nRanks, announce, used, src, dst, ctx.pending);
      coll.runsInline = runsInline(blocking, used);
      ctx.pending.add();
      try {
        if (ctx.nRanks == 1) {
          int size = dtype.size();
          launchLocalCopy(src, dst, localSrc * size, localDst * size, count * size, coll);
        } else if (peerToPeer) {
          launchPeerToPeer(algo, src, dst, localSrc, localDst, call, coll);
        } else {
          launchRing(src, dst, call, used, localSrc, localDst, coll);
        }
      } catch (RuntimeException e) {
        // A tree's or doubling's first use of a point-to-point link connects it and can fail: the
        // peers must
        // hear of it, and the collective must still complete and let go of the buffers.
        CclException c = ctx.failure.asCcl(e, "launching " + call.what());
        lifecycle.fail(c);
        coll.launchFailed(used, c);
      }
    }
    runInline(coll);
    return coll.future;
  }

  /**
   * Whether a collective on {@code channels} channels runs on the calling thread when it can: a
   * blocking call on one channel (one task, on channel 0's kernel thread), on host memory or on a
   * GPU (the caller then posts the plan to the channel's block and polls its answer, as the kernel
   * thread would; the GPU's context becomes current on the calling thread, as every {@code
   * CudaBuffer} method makes it). A blocking call of host memory on several channels runs channel
   * 0's task on the calling thread and the others' on their kernel threads: the caller would
   * otherwise wait beside them, one polling thread more per rank.
   */
  boolean runsInline(boolean blocking, int channels) {
    return blocking && (channels == 1 || ctx.device == HostDevice.INSTANCE);
  }

  /**
   * Runs the task {@code coll} queued for its blocking caller ({@link Collective#runsInline}) on
   * the calling thread if it is next on channel 0's kernel thread, else wakes that thread to run
   * it; nothing for null or a collective that queued none. Call after the launch lock is released.
   */
  void runInline(Collective coll) {
    KernelTask inline = coll == null ? null : coll.inlineTask;
    if (inline != null && !ctx.channels[0].kernelThread.runInline(inline)) {
      ctx.channels[0].kernelThread.wake();
    }
  }

  /**
   * Whether this rank announces a broadcast or reduce at launch: where its part receives nothing,
   * only such an announcement can reveal a mismatch with its call. On the host: the ring chain's
   * first rank (broadcast's root, reduce's rank after the root) and, in a tree, a broadcast's root
   * and a reduce's leaves. A rank that receives reads a header from a peer, whatever that one
   * called, or stalls; an exhaustive check of every choice of kind and root on 2 to 6 ranks found
   * no mismatch that then goes unseen ({@code TreeMismatchCoverageTest}), where announcing from
   * every tree rank made 8 B broadcasts and reduces several times slower with the check on than off
   * (each announcement is handled by a proxy). GPU ranks all announce: a direct edge has no proxy
   * to check headers, and a GPU kernel's wait does not announce.
   */
  private boolean announcesAtLaunch(Algorithm algo, CollectiveCall.Kind kind, int root) {
    if (ctx.device != HostDevice.INSTANCE) {
      return true;
    }
    boolean broadcast = kind == CollectiveCall.Kind.BROADCAST;
    if (algo == Algorithm.RING) {
      int first = broadcast ? root : (root + 1) % ctx.nRanks;
      return ctx.rank == first;
    }
    if (algo == Algorithm.TREE) {
      return Tree.receivesNothing(broadcast, ctx.rank, ctx.nRanks, root);
    }
    return true;
  }

  /**
   * Trees, recursive doubling and Rabenseifner run over point-to-point links, which are sockets or
   * shared memory; on a ring transport the tuner's cost model describes only up to a size ({@link
   * RingTransport#tunedUpTo}: UCX), or up to the shared-memory edge limit where every two ranks
   * share memory; they run above it only when asked for explicitly ({@code algo=tree}, {@code
   * algo=rd}, {@code algo=rh}); for a reduceScatter by halving or an allGather by doubling the size
   * that counts is the widest edge, half of all blocks. Their kernels run on the host only;
   * elsewhere every collective is a ring. Where the ring and every point-to-point edge lie in
   * shared memory, the tuner takes the constants measured there ({@code tuner.shm.*}); elsewhere,
   * where the threads spin, those of a hop without a thread wake-up ({@code tuner.spin.*}).
   */
  private Algorithm pick(CollectiveCall.Kind kind, long bytes) {
    if (ctx.nRanks == 1 || ctx.device != HostDevice.INSTANCE) {
      return Algorithm.RING;
    }
    Links links = ctx.links();
    boolean scatter = kind == CollectiveCall.Kind.REDUCE_SCATTER;
    // bytes is a reduceScatter's or allGather's block; halving hands over half the blocks in its
    // first round, doubling in its last
    boolean blocks = scatter || kind == CollectiveCall.Kind.ALL_GATHER;
    long widestEdge = blocks ? bytes * (ctx.nRanks / 2) : bytes;
    Algorithm algo =
        choose(
            tunerFor(links).choose(kind, bytes, ctx.nRanks),
            ctx.config.algo(),
            widestEdge,
            Math.max(links.ring().tunedUpTo(), links.peers().allSharedUpTo()));
    boolean scatterTooBig = scatter && bytes * ctx.nRanks > SCATTER_SCRATCH_MAX;
    return algo == Algorithm.RH && scatterTooBig ? Algorithm.RING : algo;
  }

  /**
   * Which of the tuner's constant sets this communicator's collectives use, and their values, for
   * the log line of a new communicator.
   */
  String tunerInUse() {
    Links links = ctx.links();
    if (links == null) {
      return tuner.constants();
    }
    String set =
        links.inSharedMemory() ? "shared-memory " : links.everyRankSpins() ? "spinning " : "";
    return set + tunerFor(links).constants();
  }

  private Tuner tunerFor(Links links) {
    if (links.inSharedMemory()) {
      return sharedMemoryTuner;
    }
    if (!links.everyRankSpins()) {
      return tuner;
    }
    return links.ring().movesInPlace() ? spinningInPlaceTuner : spinningTuner;
  }

  /**
   * The largest input (all blocks) of a reduceScatter by halving: each of its plans keeps a scratch
   * buffer of that size on the heap. The tuner picks halving for small blocks only; this bounds
   * what {@code algo=rh} can ask for.
   */
  static final long SCATTER_SCRATCH_MAX = 64L << 20;

  /**
   * The algorithm of a collective of {@code bytes}: the tuner's choice {@code tuned} when it was
   * asked for ({@code configured}) or the ring takes the tuner's choice at that size ({@code
   * tunedUpTo}), else the ring.
   */
  static Algorithm choose(Algorithm tuned, Algorithm configured, long bytes, long tunedUpTo) {
    return configured == tuned || bytes <= tunedUpTo ? tuned : Algorithm.RING;
  }

  private void launchLocalCopy(
      DeviceBuffer src, DeviceBuffer dst, long srcOff, long dstOff, long bytes, Collective coll) {
    runOn(
        ctx.channels[0],
        coll,
        () -> {
          if (src != dst || srcOff != dstOff) {
            dst.copyFrom(src, srcOff, dstOff, bytes);
          }
        });
  }

  /**
   * Launches a tree, recursive doubling or Rabenseifner collective over point-to-point links, on
   * channel 0's kernel: re-arms the plan of an earlier launch of the same shape where one is free,
   * else plans it anew and keeps it ({@link PeerPlan}).
   */
  private void launchPeerToPeer(
      Algorithm algo,
      DeviceBuffer src,
      DeviceBuffer dst,
      long localSrc,
      long localDst,
      CollectiveCall call,
      Collective coll) {
    PeerPlan kept = peerPlans.find(algo, call);
    PeerPlan plan;
    if (kept != null && kept.reusable()) {
      plan = kept;
      for (int i = 0; i < plan.edges(); i++) {
        PeerEdge edge = plan.edge(i);
        arm(edge, plan.sends(i), edge.peer(), plan.bytes(i), call);
      }
    } else {
      plan = new PeerPlan(ctx.rank, algo, call);
      Runnable kernel;
      if (algo == Algorithm.TREE) {
        kernel = planTree(call, plan);
      } else if (call.kind() == CollectiveCall.Kind.REDUCE_SCATTER) {
        kernel = planScatter(call, plan);
      } else if (call.kind() == CollectiveCall.Kind.ALL_GATHER) {
        kernel = planGather(call, plan);
      } else {
        kernel = planDoubling(call, plan, algo == Algorithm.RH);
      }
      plan.task = new ChannelTask(ctx, lifecycle, ctx.channels[0], coll, kernel);
      peerPlans.keep(plan, kept);
    }
    plan.usedBy(coll);
    // a reduceScatter's and an allGather's kernel work in the layout of all blocks; a
    // reduceScatter's result block lies at localDst, an allGather's input block at localSrc
    long blockAt = ctx.rank * call.count();
    int size = call.dtype().size();
    CollectiveCall.Kind kind = call.kind();
    int srcShift = kind == CollectiveCall.Kind.ALL_GATHER ? (int) ((blockAt - localSrc) * size) : 0;
    int dstShift =
        kind == CollectiveCall.Kind.REDUCE_SCATTER ? (int) ((blockAt - localDst) * size) : 0;
    plan.operands.set(
        ((HostBuffer) src).memory(),
        srcShift,
        ((HostBuffer) dst).memory(),
        dstShift,
        plan.scratch,
        call.op(),
        plan.what);
    plan.task.reuseFor(coll);
    submit(ctx.channels[0], coll, plan.task);
  }

  /**
   * Plans a tree collective (allReduce: reduce up then broadcast down, rooted at rank 0; broadcast:
   * down only; reduce: up only): its edges, armed for {@code call}, and the kernel's run.
   */
  private Runnable planTree(CollectiveCall call, PeerPlan plan) {
    CollectiveCall.Kind kind = call.kind();
    boolean up = kind != CollectiveCall.Kind.BROADCAST;
    boolean down = kind != CollectiveCall.Kind.REDUCE;
    Tree tree =
        new Tree(ctx.rank, ctx.nRanks, kind == CollectiveCall.Kind.ALL_REDUCE ? 0 : call.root());
    long bytes = call.count() * call.dtype().size();
    int parent = tree.parent();
    PeerEdge toParent = up && parent >= 0 ? newEdge(plan, true, parent, bytes, call) : null;
    PeerEdge fromParent = down && parent >= 0 ? newEdge(plan, false, parent, bytes, call) : null;
    int[] children = tree.children();
    PeerEdge[] fromChildren = new PeerEdge[up ? children.length : 0];
    PeerEdge[] toChildren = new PeerEdge[down ? children.length : 0];
    for (int i = 0; i < children.length; i++) {
      if (up) {
        fromChildren[i] = newEdge(plan, false, children[i], bytes, call);
      }
      if (down) {
        toChildren[i] = newEdge(plan, true, children[i], bytes, call);
      }
    }
    HostTreeKernel.Work work =
        new HostTreeKernel.Work(
            up,
            down,
            toParent,
            fromParent,
            fromChildren,
            toChildren,
            bytes,
            call.dtype(),
            ctx.nRanks,
            ctx.config.stepSize());
    KernelWaiter waiter = ctx.channels[0].waiter;
    HostOperands operands = plan.operands;
    return () -> HostTreeKernel.run(work, operands, waiter, guard);
  }

  /**
   * Plans a recursive doubling allReduce ({@link RecursiveDoubling}) or, with {@code halving},
   * Rabenseifner's ({@link RecursiveHalving}) over point-to-point links: fold in, the core
   * exchanges, result out; its edges armed for {@code call}, and the kernel's run.
   */
  private Runnable planDoubling(CollectiveCall call, PeerPlan plan, boolean halving) {
    RecursiveDoubling rd = new RecursiveDoubling(ctx.rank, ctx.nRanks);
    int size = call.dtype().size();
    long bytes = call.count() * size;
    List<HostDoublingKernel.Exchange> ex = exchanges;
    ex.clear();
    int finalAt;
    long finalOffset = 0;
    long finalBytes = bytes;
    int into = rd.foldsInto();
    if (into >= 0) {
      ex.add(exchange(plan, SEND, into, call));
      ex.add(exchange(plan, RECEIVE_COPY, into, call));
      finalAt = -1;
    } else {
      int from = rd.foldedFrom();
      if (from >= 0) {
        ex.add(exchange(plan, RECEIVE_REDUCE, from, call));
      }
      if (halving) {
        RecursiveHalving.Round[] rounds = new RecursiveHalving(rd).rounds(call.count());
        addHalvingRounds(plan, rounds, call);
        finalAt = ex.size();
        if (rounds.length > 0) {
          RecursiveHalving.Round last = rounds[rounds.length - 1];
          finalOffset = last.keepFrom() * size;
          finalBytes = last.keepCount() * size;
        }
        addCopyRounds(plan, rounds, true, call);
      } else {
        for (int partner : rd.partners()) {
          ex.add(exchange(plan, EXCHANGE, partner, call));
        }
        finalAt = ex.size();
      }
      if (from >= 0) {
        ex.add(exchange(plan, SEND, from, call));
      }
    }
    return doublingRun(plan, call, bytes, finalAt, finalOffset, finalBytes, 0);
  }

  /**
   * The kernel's run of the exchanges planned in {@link #exchanges}, over {@code bytes} in all:
   * before exchange {@code finalAt} this rank holds the complete result of {@code finalBytes} at
   * {@code finalOffset}; the exchanges before {@code scratchUntil} write the plan's scratch buffer
   * ({@link HostDoublingKernel.Work}).
   */
  private Runnable doublingRun(
      PeerPlan plan,
      CollectiveCall call,
      long bytes,
      int finalAt,
      long finalOffset,
      long finalBytes,
      int scratchUntil) {
    HostDoublingKernel.Work work =
        new HostDoublingKernel.Work(
            exchanges.toArray(new HostDoublingKernel.Exchange[exchanges.size()]),
            finalAt,
            finalOffset,
            finalBytes,
            bytes,
            call.dtype(),
            ctx.nRanks,
            ctx.config.stepSize(),
            scratchUntil);
    KernelWaiter waiter = ctx.channels[0].waiter;
    HostOperands operands = plan.operands;
    return () -> HostDoublingKernel.run(work, operands, waiter, guard);
  }

  /**
   * Plans a reduceScatter by recursive halving ({@link RecursiveHalving#scatterRounds}, a
   * power-of-two rank count) over point-to-point links: each round hands the partner the half of
   * the blocks in play that it keeps and reduces the half this rank keeps, the rounds before the
   * last into the plan's scratch buffer (laid out as the input: the destination holds one block),
   * the last into the destination.
   */
  private Runnable planScatter(CollectiveCall call, PeerPlan plan) {
    RecursiveDoubling rd = new RecursiveDoubling(ctx.rank, ctx.nRanks);
    RecursiveHalving.Round[] rounds = new RecursiveHalving(rd).scatterRounds(call.count());
    exchanges.clear();
    addHalvingRounds(plan, rounds, call);
    long blockBytes = call.count() * call.dtype().size();
    long bytes = blockBytes * ctx.nRanks;
    if (rounds.length > 1) {
      plan.scratch = ByteBuffer.allocate(Math.toIntExact(bytes)).order(ByteOrder.nativeOrder());
    }
    return doublingRun(
        plan, call, bytes, rounds.length, ctx.rank * blockBytes, blockBytes, rounds.length - 1);
  }

  /**
   * Plans an allGather by recursive doubling ({@link RecursiveHalving#gatherRounds}, a power-of-two
   * rank count) over point-to-point links: each round sends the blocks this rank holds and copies
   * in the partner's, the first sending this rank's block from the input and placing it in the
   * destination too.
   */
  private Runnable planGather(CollectiveCall call, PeerPlan plan) {
    RecursiveDoubling rd = new RecursiveDoubling(ctx.rank, ctx.nRanks);
    exchanges.clear();
    addCopyRounds(plan, new RecursiveHalving(rd).gatherRounds(call.count()), false, call);
    long bytes = call.count() * call.dtype().size() * ctx.nRanks;
    return doublingRun(plan, call, bytes, -1, 0, 0, 0);
  }

  /**
   * Adds a copy exchange for each of {@code rounds}, last first when {@code backwards}: send the
   * range kept (complete by then), take the range given up.
   */
  private void addCopyRounds(
      PeerPlan plan, RecursiveHalving.Round[] rounds, boolean backwards, CollectiveCall call) {
    for (int i = 0; i < rounds.length; i++) {
      RecursiveHalving.Round r = rounds[backwards ? rounds.length - 1 - i : i];
      exchanges.add(
          ranged(
              plan,
              EXCHANGE_COPY,
              r.partner(),
              r.keepFrom(),
              r.keepCount(),
              r.giveFrom(),
              r.giveCount(),
              call));
    }
  }

  /**
   * Adds a halving exchange for each of {@code rounds}: send the range given up, reduce the range
   * kept.
   */
  private void addHalvingRounds(
      PeerPlan plan, RecursiveHalving.Round[] rounds, CollectiveCall call) {
    for (RecursiveHalving.Round r : rounds) {
      exchanges.add(
          ranged(
              plan,
              EXCHANGE,
              r.partner(),
              r.giveFrom(),
              r.giveCount(),
              r.keepFrom(),
              r.keepCount(),
              call));
    }
  }

  /** An exchange of the whole buffer. */
  private HostDoublingKernel.Exchange exchange(
      PeerPlan plan, HostDoublingKernel.Kind kind, int peer, CollectiveCall call) {
    long count = call.count();
    boolean sends = kind == EXCHANGE || kind == SEND;
    boolean receives = kind != SEND;
    return ranged(plan, kind, peer, 0, sends ? count : 0, 0, receives ? count : 0, call);
  }

  /**
   * An exchange that sends elements {@code [sendFrom, sendFrom + sendCount)} and receives {@code
   * [recvFrom, recvFrom + recvCount)}; an empty range has no edge (its partner's matching range is
   * empty too).
   */
  private HostDoublingKernel.Exchange ranged(
      PeerPlan plan,
      HostDoublingKernel.Kind kind,
      int peer,
      long sendFrom,
      long sendCount,
      long recvFrom,
      long recvCount,
      CollectiveCall call) {
    int size = call.dtype().size();
    long sendBytes = sendCount * size;
    long recvBytes = recvCount * size;
    PeerEdge send = sendBytes > 0 ? newEdge(plan, true, peer, sendBytes, call) : null;
    PeerEdge recv = recvBytes > 0 ? newEdge(plan, false, peer, recvBytes, call) : null;
    return new HostDoublingKernel.Exchange(
        kind, send, recv, peer < ctx.rank, sendFrom * size, sendBytes, recvFrom * size, recvBytes);
  }

  private long slices(long bytes) {
    int stepSize = ctx.config.stepSize();
    return (bytes + stepSize - 1) / stepSize;
  }

  /** A new edge to or from {@code peer}, armed for {@code call} and recorded in {@code plan}. */
  private PeerEdge newEdge(PeerPlan plan, boolean send, int peer, long bytes, CollectiveCall call) {
    PeerEdge edge = new PeerEdge(peer);
    arm(edge, send, peer, bytes, call);
    plan.add(edge, send, bytes);
    return edge;
  }

  /**
   * Points {@code edge} at the point-to-point link to or from {@code peer} for {@code call}'s
   * {@code bytes}: the link's next steps, and its proxy operation where the link has a proxy.
   */
  private void arm(PeerEdge edge, boolean send, int peer, long bytes, CollectiveCall call) {
    long slices = slices(bytes);
    PeerLinks peers = ctx.links().peers();
    PeerLinks.SharedLink shared = peers.shared(send, peer, bytes);
    if (shared != null) {
      edge.restart(
          shared.lane.queue(), shared.nextStep, shared.lane.calls(), call, shared.liveness);
      PeerLinks.SharedLink other = send ? null : peers.otherProtocol(false, shared);
      if (other != null) {
        edge.watchOtherProtocol(other.lane.queue(), other.nextStep, other.lane.calls());
      }
      shared.nextStep += slices;
      return;
    }
    PeerLinks.Link link = send ? peers.sendTo(peer) : peers.recvFrom(peer);
    if (send) {
      enqueueSend(
          link.sendOps, link.send(), link.fifo, link.nextStep, slices, call, link.site, false, 0);
    } else {
      enqueueRecv(
          link.recvOps,
          link.recv(),
          link.fifo,
          link.nextStep,
          slices,
          call,
          link.site,
          null,
          null,
          true,
          false,
          0);
    }
    edge.restart(link.fifo, link.nextStep, null, null, null);
    edge.sendFromSources(link.sourceFifo);
    link.nextStep += slices;
  }

  /**
   * Queues on the proxy the sending of {@code steps} slots of {@code fifo} from step {@code base}:
   * a finished operation of {@code ops} restarted, or a new one kept there.
   */
  private void enqueueSend(
      OpRing<SendProxyOp> ops,
      SendConnection conn,
      Fifo fifo,
      long base,
      long steps,
      CollectiveCall call,
      OpSite site,
      boolean proxyOnly,
      int lane) {
    SendProxyOp op = ops.reusable();
    if (op != null) {
      op.restart(base, steps, call);
    } else {
      op = new SendProxyOp(conn, fifo, base, steps, call, ctx.timeoutNanos, site);
      ops.keep(op);
    }
    op.proxyOnly(proxyOnly);
    ctx.proxy.enqueue(op, lane);
  }

  /**
   * As {@link #enqueueSend}, for receiving into {@code fifo}; with an {@code output}, the steps of
   * {@code plan} that land there unchanged are received straight into it ({@link
   * RecvProxyOp#receiveInto}). {@code afterConsumer}: the operation posts nothing until the kernel
   * waits for one of its steps ({@link RecvProxyOp#postAfterConsumer}; kernels that wait through
   * {@code PeerEdge} only).
   */
  private void enqueueRecv(
      OpRing<RecvProxyOp> ops,
      RecvConnection conn,
      Fifo fifo,
      long base,
      long steps,
      CollectiveCall call,
      OpSite site,
      ByteBuffer output,
      ChannelPlan plan,
      boolean afterConsumer,
      boolean proxyOnly,
      int lane) {
    RecvProxyOp op = ops.reusable();
    if (op != null) {
      op.restart(base, steps, call);
    } else {
      op =
          new RecvProxyOp(
              conn, fifo, base, steps, call, ctx.calls.checks(), launched, ctx.timeoutNanos, site);
      ops.keep(op);
    }
    if (output != null) {
      op.receiveInto(output, plan, ChannelPlan.IN_PLACE_MIN_BYTES);
    }
    if (afterConsumer) {
      op.postAfterConsumer();
    }
    op.proxyOnly(proxyOnly);
    ctx.proxy.enqueue(op, lane);
  }

  /**
   * Whether a ring collective's transfers are the proxy thread's alone (key {@code
   * ring.proxyMinBytes}): then its calling thread, while it waits, only reduces and copies, and the
   * proxy reads and writes the sockets beside it. Host memory only: GPU kernels never move bytes.
   */
  private boolean movedByProxyOnly(CollectiveCall call, DeviceBuffer dst) {
    long min = ctx.links().ringProxyMinBytes();
    return min > 0 && dst instanceof HostBuffer && call.count() * call.dtype().size() >= min;
  }

  /**
   * {@code ring.proxyMinBytes=auto}'s threshold. On a 16-core host over sockets, with every rank
   * spinning, the proxy's moves took 0.82-0.96x the time of the calling thread's at 4 ranks (the
   * allReduce and allGather, 512 KiB-8 MiB) and 0.86-1.14x at 8 ranks, where the ranks' spinning
   * threads take every core; where ranks back off (a 2-core machine) they took 1.2-2.4x
   * (docs/benchmarks.md).
   */
  static final long AUTO_PROXY_MIN_BYTES = 512 << 10;

  /**
   * The smallest ring collective whose transfers the proxy moves alone, from the key's value {@code
   * configured}: {@code auto} chooses {@link #AUTO_PROXY_MIN_BYTES} where every rank spins with
   * cores to spare ({@link org.sparkccl.idle.AutoIdle#sparesCores}, on every host) and the ring
   * runs over sockets (the one transport measured), else none. Resolved once a communicator
   * connects ({@link Links#ringProxyMinBytes}).
   */
  static long proxyMinBytes(
      long configured, boolean spinsWithCoresToSpare, boolean ringOverSockets) {
    if (configured != CclConfig.RING_PROXY_AUTO) {
      return configured;
    }
    return spinsWithCoresToSpare && ringOverSockets ? AUTO_PROXY_MIN_BYTES : 0;
  }

  /**
   * The output a ring channel's proxy may receive large steps straight into ({@link
   * CommChannel#receivesInPlace}, direct host memory); else null (every step through the slots).
   */
  private static ByteBuffer receivesInto(CommChannel ch, DeviceBuffer dst) {
    if (ch.receivesInPlace && dst instanceof HostBuffer host && host.memory().isDirect()) {
      return host.memory();
    }
    return null;
  }

  private void launchRing(
      DeviceBuffer src,
      DeviceBuffer dst,
      CollectiveCall call,
      int used,
      long localSrc,
      long localDst,
      Collective coll) {
    boolean proxyOnly = movedByProxyOnly(call, dst);
    // GPU channels on direct edges: one kernel thread drives them all (ChannelGroupTask)
    ChannelWork[] group =
        ChannelGroupTask.applies(ctx.channels, used) ? new ChannelWork[used] : null;
    for (int c = 0; c < used; c++) {
      CommChannel ch = ctx.channels[c];
      ChannelPlan plan =
          plans.plan(
              c,
              call,
              used,
              localSrc,
              localDst,
              ChannelSplit.start(call.count(), call.dtype().size(), used, c),
              ChannelSplit.length(call.count(), call.dtype().size(), used, c));
      if (plan.sendSteps() > 0 && !ch.directSend) {
        enqueueSend(
            ch.sendOps,
            ch.send,
            ch.sendFifo,
            ch.sendBase,
            plan.sendSteps(),
            call,
            sites.send(ch),
            proxyOnly,
            ch.id);
      }
      if (plan.recvSteps() > 0 && !ch.directRecv) {
        enqueueRecv(
            ch.recvOps,
            ch.recv,
            ch.recvFifo,
            ch.recvBase,
            plan.recvSteps(),
            call,
            sites.recv(ch),
            receivesInto(ch, dst),
            plan,
            false,
            proxyOnly,
            ch.id);
      }
      ch.sendBase += plan.sendSteps();
      ch.recvBase += plan.recvSteps();
      if (group != null) {
        group[c] = new ChannelWork(plan, src, dst, ctx.nRanks, call);
        continue;
      }
      submit(ch, coll, ringTask(ch, coll, plan, src, dst, call));
    }
    if (group != null) {
      ctx.channels[0].kernelThread.submit(new ChannelGroupTask(ctx, lifecycle, coll, group));
      coll.submitted = used;
    }
  }

  /**
   * The channel's ring task for {@code coll}: on host memory the channel's last one, reused once
   * the collective it ran for has completed (then it is no longer queued or running, and the host
   * kernel keeps nothing of its work); else a new one. A GPU kernel may hold its work after it
   * returns, so its tasks are always new.
   */
  private ChannelTask ringTask(
      CommChannel ch,
      Collective coll,
      ChannelPlan plan,
      DeviceBuffer src,
      DeviceBuffer dst,
      CollectiveCall call) {
    ChannelTask last = ch.ringTask;
    if (last != null && last.finished()) {
      last.ringWork().reset(plan, src, dst, ctx.nRanks, call);
      last.reuseFor(coll);
      return last;
    }
    ChannelTask task =
        new ChannelTask(
            ctx, lifecycle, ch, coll, new ChannelWork(plan, src, dst, ctx.nRanks, call));
    if (ctx.device == HostDevice.INSTANCE) {
      ch.ringTask = task;
    }
    return task;
  }

  /**
   * Queues {@code work} on the channel's kernel thread as this collective's share, and marks the
   * proxy as having new operations (woken if the kernel parks before helping).
   */
  void runOn(CommChannel ch, Collective coll, Runnable work) {
    submit(ch, coll, new ChannelTask(ctx, lifecycle, ch, coll, work));
  }

  /**
   * Queues {@code task} on the channel's kernel thread, woken unless the caller runs it inline
   * ({@link Collective#runsInline}: then {@link #launch} runs or hands it over).
   */
  private void submit(CommChannel ch, Collective coll, ChannelTask task) {
    if (!ctx.proxy.isIdle()) {
      // operations this launch queued (none where every edge lies in shared memory)
      ch.waiter.deferProxyWake();
    }
    if (coll.runsInline && ch.id == 0) {
      ch.kernelThread.queue(task);
      coll.inlineTask = task;
    } else {
      ch.kernelThread.submit(task);
    }
    coll.submitted++;
  }

  /**
   * A kernel of {@code ch} has waited past the fast phase: compare the call with the neighbours'
   * posted calls where they share memory, and if the collective is one that needs it, tell the ring
   * predecessor what this rank called (once per collective) where they do not. Matching calls
   * rarely stall that long, so the normal path pays nothing.
   */
  void announceStalled(CommChannel ch) {
    Collective coll = ch.current;
    if (coll == null || coll.call == null) {
      return; // nothing, or a group of sends and receives
    }
    NeighbourCalls neighbours = ctx.neighbours;
    if (neighbours != null) {
      // any collective: the neighbour that compared at its launch may not have seen this call yet
      CclMismatchException posted = neighbours.compare(coll.call);
      if (posted != null) {
        lifecycle.fail(posted); // wakes this wait, which then fails
        return;
      }
    }
    if (!coll.announceOnStall
        || ctx.channels[0].recv == null
        || (neighbours != null && neighbours.coversPrev())) {
      return;
    }
    if (ctx.calls.claimAnnouncement(coll.call.seq())) {
      ctx.channels[0].recv.announceStalled(coll.call);
    }
  }
}
