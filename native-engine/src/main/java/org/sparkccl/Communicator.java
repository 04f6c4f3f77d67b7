package org.sparkccl;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import org.sparkccl.bootstrap.Bootstrap;
import org.sparkccl.comm.Arguments;
import org.sparkccl.comm.CollectiveCall;
import org.sparkccl.comm.CommCore;
import org.sparkccl.config.CclConfig;
import org.sparkccl.config.IdleMode;
import org.sparkccl.device.Device;
import org.sparkccl.device.DeviceBuffer;
import org.sparkccl.idle.IdleStrategy;

/**
 * A group of ranks that run collectives together, like an {@code ncclComm_t}.
 *
 * <p>Made from a {@link Bootstrap} (rank, rank count, allGather) and a {@link CclConfig}. Each
 * collective is split over {@code nChannels} rings; per channel a kernel thread moves slices
 * through FIFOs that the persistent proxy thread drains to, and fills from, the transport.
 * Collectives run in the order they are called. A failure anywhere (a peer that dies, a closed
 * connection, a stall past {@code timeout}, {@link #abort()}) fails the running collective and
 * every later call, and closes the connections so that the peers fail too.
 *
 * <pre>{@code
 * LocalBootstrap.Group group = LocalBootstrap.group(2);
 * // on each of two threads, r = 0 or 1:
 * try (Communicator comm = Communicator.create(group.rank(r), CclConfig.fromEnvironment());
 *     DeviceBuffer buf = HostDevice.INSTANCE.allocate(4 * 1024)) {
 *   comm.allReduce(buf, buf, 1024, DataType.FLOAT32, ReduceOp.SUM);
 * }
 * }</pre>
 */
public final class Communicator implements AutoCloseable {
  /** Spins of a blocking call before it yields, as the proxy's brief wait. */
  private static final int AWAIT_SPINS = 64;

  private final CommCore core;

  /** How each thread that calls a blocking collective waits briefly before it blocks. */
  private final ThreadLocal<IdleStrategy> awaitIdle;

  private Communicator(CommCore core) {
    this.core = core;
    this.awaitIdle = ThreadLocal.withInitial(() -> core.idle().inFlight(AWAIT_SPINS));
  }

  /**
   * Forms a communicator: every rank of {@code bootstrap} must call this. The caller owns it and
   * closes it; buffers for its collectives come from {@link #device()}.
   *
   * @throws CclException when the ranks cannot connect within the timeout
   * @throws IllegalArgumentException when the configuration cannot work here (for example {@code
   *     transport=local} for ranks that are not threads of one JVM)
   */
  public static Communicator create(Bootstrap bootstrap, CclConfig config) {
    return new Communicator(CommCore.create(bootstrap, config));
  }

  /** This rank, 0 to {@link #nRanks()} - 1. */
  public int rank() {
    return core.rank();
  }

  /** The number of ranks. */
  public int nRanks() {
    return core.nRanks();
  }

  /**
   * The configuration this communicator was made with, {@code nChannels=auto} resolved to the count
   * its ranks chose.
   */
  public CclConfig config() {
    return core.config();
  }

  /**
   * The transport of the ring connections: {@code ucx}, {@code socket}, {@code local}, or {@code
   * none} with one rank.
   */
  public String ringTransport() {
    return core.ringTransport();
  }

  /**
   * How waits on work in flight idle: key {@code idle}, with {@code auto} settled to {@code spin}
   * or {@code backoff} by the cores this host gives the communicator's polling threads. A caller
   * that adds polling threads of its own (a Python worker's channel) follows it.
   */
  public IdleMode idleMode() {
    return core.idle().effectiveMode();
  }

  /** Where this communicator's buffers live and its kernels run (setting {@code device}). */
  public Device device() {
    return core.device();
  }

  private DeviceBuffer buffer(String name, DeviceBuffer b, long count, DataType dtype) {
    return Arguments.buffer(name, b, count, dtype, core.device());
  }

  /**
   * Starts an allReduce: {@code recv[i] = op over ranks of send[i]} for {@code i < count}. {@code
   * send == recv} works in place.
   *
   * @return completes when this rank's part is done, or exceptionally with a {@link CclException}
   *     that names the rank, the peer and the operation
   * @throws IllegalArgumentException for a null or closed buffer, a negative count, a count that
   *     does not fit a buffer, or an op the dtype does not support
   * @throws CclAbortedException when the communicator has failed or was aborted
   */
  public CompletableFuture<Void> allReduceAsync(
      DeviceBuffer send, DeviceBuffer recv, long count, DataType dtype, ReduceOp op) {
    return allReduceLaunch(send, recv, count, dtype, op, false);
  }

  /** {@code blocking}: the caller awaits it at once (see {@link CollectiveLauncher#launch}). */
  private CompletableFuture<Void> allReduceLaunch(
      DeviceBuffer send,
      DeviceBuffer recv,
      long count,
      DataType dtype,
      ReduceOp op,
      boolean blocking) {
    Arguments.checkOp(dtype, op);
    DeviceBuffer src = buffer("send", send, count, dtype);
    DeviceBuffer dst = buffer("recv", recv, count, dtype);
    return core.collectives()
        .launch(blocking, CollectiveCall.Kind.ALL_REDUCE, count, dtype, op, 0, src, dst, 0, 0);
  }

  /** Blocking {@link #allReduceAsync}. */
  public void allReduce(
      DeviceBuffer send, DeviceBuffer recv, long count, DataType dtype, ReduceOp op) {
    await(allReduceLaunch(send, recv, count, dtype, op, true));
  }

  /**
   * Starts a broadcast: {@code recv[i] = send[i]} of rank {@code root}, for {@code i < count}. Only
   * the root reads {@code send}; {@code send == recv} works in place.
   */
  public CompletableFuture<Void> broadcastAsync(
      DeviceBuffer send, DeviceBuffer recv, long count, DataType dtype, int root) {
    return broadcastLaunch(send, recv, count, dtype, root, false);
  }

  /** {@code blocking}: the caller awaits it at once (see {@link CollectiveLauncher#launch}). */
  private CompletableFuture<Void> broadcastLaunch(
      DeviceBuffer send,
      DeviceBuffer recv,
      long count,
      DataType dtype,
      int root,
      boolean blocking) {
    Arguments.checkDtype(dtype);
    Arguments.checkRoot(root, nRanks());
    DeviceBuffer dst = buffer("recv", recv, count, dtype);
    DeviceBuffer src = rank() == root ? buffer("send", send, count, dtype) : dst;
    return core.collectives()
        .launch(blocking, CollectiveCall.Kind.BROADCAST, count, dtype, null, root, src, dst, 0, 0);
  }

  /** In-place broadcast of {@code buf}, like {@code ncclBcast}. */
  public CompletableFuture<Void> broadcastAsync(
      DeviceBuffer buf, long count, DataType dtype, int root) {
    return broadcastAsync(buf, buf, count, dtype, root);
  }

  /** Blocking in-place {@link #broadcastAsync}. */
  public void broadcast(DeviceBuffer buf, long count, DataType dtype, int root) {
    await(broadcastLaunch(buf, buf, count, dtype, root, true));
  }

  /** Blocking {@link #broadcastAsync(DeviceBuffer, DeviceBuffer, long, DataType, int)}. */
  public void broadcast(
      DeviceBuffer send, DeviceBuffer recv, long count, DataType dtype, int root) {
    await(broadcastLaunch(send, recv, count, dtype, root, true));
  }

  /**
   * Starts a reduce: on rank {@code root}, {@code recv[i] = op over ranks of send[i]}. Other ranks
   * do not touch {@code recv}, which may be {@code null} there.
   */
  public CompletableFuture<Void> reduceAsync(
      DeviceBuffer send, DeviceBuffer recv, long count, DataType dtype, ReduceOp op, int root) {
    return reduceLaunch(send, recv, count, dtype, op, root, false);
  }

  /** {@code blocking}: the caller awaits it at once (see {@link CollectiveLauncher#launch}). */
  private CompletableFuture<Void> reduceLaunch(
      DeviceBuffer send,
      DeviceBuffer recv,
      long count,
      DataType dtype,
      ReduceOp op,
      int root,
      boolean blocking) {
    Arguments.checkOp(dtype, op);
    Arguments.checkRoot(root, nRanks());
    DeviceBuffer src = buffer("send", send, count, dtype);
    DeviceBuffer dst = rank() == root || recv != null ? buffer("recv", recv, count, dtype) : src;
    return core.collectives()
        .launch(blocking, CollectiveCall.Kind.REDUCE, count, dtype, op, root, src, dst, 0, 0);
  }

  /** Blocking {@link #reduceAsync}. */
  public void reduce(
      DeviceBuffer send, DeviceBuffer recv, long count, DataType dtype, ReduceOp op, int root) {
    await(reduceLaunch(send, recv, count, dtype, op, root, true));
  }

  /**
   * Starts an allGather: {@code recv} gets {@code nRanks} blocks of {@code sendCount} elements,
   * block {@code k} being rank {@code k}'s {@code send}. In place when {@code send == recv}: this
   * rank's input is then block {@code rank} of {@code recv}, as in NCCL.
   */
  public CompletableFuture<Void> allGatherAsync(
      DeviceBuffer send, DeviceBuffer recv, long sendCount, DataType dtype) {
    return allGatherLaunch(send, recv, sendCount, dtype, false);
  }

  /** {@code blocking}: the caller awaits it at once (see {@link CollectiveLauncher#launch}). */
  private CompletableFuture<Void> allGatherLaunch(
      DeviceBuffer send, DeviceBuffer recv, long sendCount, DataType dtype, boolean blocking) {
    Arguments.checkDtype(dtype);
    long total = Arguments.multiply(sendCount, nRanks(), "sendCount");
    DeviceBuffer dst = buffer("recv", recv, total, dtype);
    boolean inPlace = send == recv;
    DeviceBuffer src = inPlace ? dst : buffer("send", send, sendCount, dtype);
    long srcBase = inPlace ? rank() * sendCount : 0;
    return core.collectives()
        .launch(
            blocking,
            CollectiveCall.Kind.ALL_GATHER,
            sendCount,
            dtype,
            null,
            0,
            src,
            dst,
            srcBase,
            rank() * sendCount);
  }

  /** Blocking {@link #allGatherAsync}. */
  public void allGather(DeviceBuffer send, DeviceBuffer recv, long sendCount, DataType dtype) {
    await(allGatherLaunch(send, recv, sendCount, dtype, true));
  }

  /**
   * Starts a reduceScatter: {@code send} holds {@code nRanks} blocks of {@code recvCount} elements;
   * {@code recv} gets the reduction over ranks of block {@code rank}. In place when {@code send ==
   * recv}: the result is then written to block {@code rank} of the buffer.
   */
  public CompletableFuture<Void> reduceScatterAsync(
      DeviceBuffer send, DeviceBuffer recv, long recvCount, DataType dtype, ReduceOp op) {
    return reduceScatterLaunch(send, recv, recvCount, dtype, op, false);
  }

  /** {@code blocking}: the caller awaits it at once (see {@link CollectiveLauncher#launch}). */
  private CompletableFuture<Void> reduceScatterLaunch(
      DeviceBuffer send,
      DeviceBuffer recv,
      long recvCount,
      DataType dtype,
      ReduceOp op,
      boolean blocking) {
    Arguments.checkOp(dtype, op);
    long total = Arguments.multiply(recvCount, nRanks(), "recvCount");
    DeviceBuffer src = buffer("send", send, total, dtype);
    boolean inPlace = send == recv;
    DeviceBuffer dst = inPlace ? src : buffer("recv", recv, recvCount, dtype);
    long dstBase = inPlace ? rank() * recvCount : 0;
    return core.collectives()
        .launch(
            blocking,
            CollectiveCall.Kind.REDUCE_SCATTER,
            recvCount,
            dtype,
            op,
            0,
            src,
            dst,
            rank() * recvCount,
            dstBase);
  }

  /** Blocking {@link #reduceScatterAsync}. */
  public void reduceScatter(
      DeviceBuffer send, DeviceBuffer recv, long recvCount, DataType dtype, ReduceOp op) {
    await(reduceScatterLaunch(send, recv, recvCount, dtype, op, true));
  }

  /**
   * Starts sending {@code count} elements of {@code buf} to rank {@code peer}, which must call
   * {@link #recvAsync} with the same count and dtype. Inside a group (see {@link #group()}) the
   * transfer starts with the group's other calls at its end; outside one it starts now, and two
   * ranks that both send large messages to each other before receiving can fill each other's
   * buffers and time out, as with NCCL: use a group.
   */
  public CompletableFuture<Void> sendAsync(DeviceBuffer buf, long count, DataType dtype, int peer) {
    return core.pointToPoint().call(true, buf, count, dtype, peer);
  }

  /** Starts receiving {@code count} elements from rank {@code peer} into {@code buf}. */
  public CompletableFuture<Void> recvAsync(DeviceBuffer buf, long count, DataType dtype, int peer) {
    return core.pointToPoint().call(false, buf, count, dtype, peer);
  }

  /**
   * Blocking {@link #sendAsync}.
   *
   * @throws IllegalStateException inside a group, where it would wait for the group's end for ever
   */
  public void send(DeviceBuffer buf, long count, DataType dtype, int peer) {
    await(core.pointToPoint().call(true, buf, count, dtype, peer, true));
  }

  /**
   * Blocking {@link #recvAsync}.
   *
   * @throws IllegalStateException inside a group, where it would wait for the group's end for ever
   */
  public void recv(DeviceBuffer buf, long count, DataType dtype, int peer) {
    await(core.pointToPoint().call(false, buf, count, dtype, peer, true));
  }

  /**
   * Opens a group, like {@code ncclGroupStart}: sends and receives called until {@link #groupEnd()}
   * start together, so any mix of them completes without deadlock. Groups nest; the outermost end
   * launches. Collectives called inside run as usual.
   *
   * <pre>{@code
   * try (Communicator.Group g = comm.group()) {
   *   comm.sendAsync(out, n, DataType.FLOAT32, next);
   *   comm.recvAsync(in, n, DataType.FLOAT32, prev);
   * } // both done here
   * }</pre>
   */
  public Group group() {
    groupStart();
    return new Group();
  }

  /** A group as a resource: {@link #close()} is {@link #groupEnd()}. */
  public final class Group implements AutoCloseable {
    private Group() {}

    /** Ends the group and waits for its transfers. */
    @Override
    public void close() {
      await(core.pointToPoint().groupEnd(true));
    }
  }

  /** Starts recording sends and receives (see {@link #group()}). */
  public void groupStart() {
    core.pointToPoint().groupStart();
  }

  /** Ends a group: launches its transfers and waits for them. */
  public void groupEnd() {
    await(core.pointToPoint().groupEnd(true));
  }

  /** Ends a group: launches its transfers; the future completes when all are done. */
  public CompletableFuture<Void> groupEndAsync() {
    return core.pointToPoint().groupEnd(false);
  }

  /**
   * Makes every pending and future call on this communicator fail at once, and closes its
   * connections so that the other ranks fail too. Safe from any thread; idempotent. Call {@link
   * #close()} afterwards to release resources.
   */
  public void abort() {
    core.abort();
  }

  /** Whether the communicator has failed or was aborted. */
  public boolean isAborted() {
    return core.isAborted();
  }

  /**
   * Waits for pending collectives (up to the timeout), then stops every thread, closes every socket
   * and frees every FIFO. Idempotent.
   */
  @Override
  public void close() {
    core.close();
  }

  /**
   * A blocking call waits briefly as the communicator's threads do (a completion is often a few
   * microseconds away), then blocks on the future, which completion or failure ends.
   */
  private void await(CompletableFuture<Void> f) {
    // the calling thread's own strategy (it keeps state), and the loop of awaitBriefly written out:
    // a blocking call allocates neither a strategy nor a lambda
    IdleStrategy idle = awaitIdle.get();
    idle.reset();
    while (!f.isDone()) {
      if (idle.idle(0) && idle.mayBlock()) {
        break;
      }
    }
    try {
      f.join();
    } catch (CompletionException e) {
      if (e.getCause() instanceof RuntimeException r) {
        throw r;
      }
      throw e;
    }
  }
}
