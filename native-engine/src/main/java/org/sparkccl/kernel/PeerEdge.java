package org.sparkccl.kernel;

import java.nio.ByteBuffer;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.sparkccl.comm.CollectiveCall;
import org.sparkccl.fifo.Fifo;
import org.sparkccl.fifo.SlotQueue;

/**
 * One point-to-point link as a host kernel sees it during one collective: the link's FIFO, the peer
 * and the step of the next slice. Tree and recursive doubling kernels walk their edges slice by
 * slice through it, so both wait, check sizes and advance steps the same way.
 *
 * <p>The edge is its own wait condition and check ({@link #getAsBoolean}, {@link #check}): a wait
 * made two lambdas, and a small collective waits on every edge once, so a call of recursive
 * doubling over 4 ranks made eight of them.
 */
public final class PeerEdge implements BooleanSupplier, KernelWaiter.Check {
  /** How long a wait on a shared-memory edge parks between looks. */
  static final long SHARED_PARK_NANOS = 20_000;

  /**
   * Slices of at least this many bytes leave from the collective's buffers where the edge's
   * connection allows it ({@link #sendFromSources}), not through a copy into the slot; smaller ones
   * are copied, so that small collectives keep their path unchanged. Not tuned: together with the
   * socket's direct staging buffer this gave 0.87x (4 ranks) and 0.97x (8 ranks) of the time of a
   * 32 KiB recursive-doubling allReduce over sockets on the 16-core host (docs/benchmarks.md).
   */
  static final int SOURCE_MIN_BYTES = 16 << 10;

  /** What the wait in progress waits for. */
  private enum Wait {
    ROOM,
    FILLED,
    SENT
  }

  final int peer;

  SlotQueue fifo;
  long step;

  /** Where the edge stamps and checks its slots' call itself (shared memory); else null. */
  private SlotCalls calls;

  private CollectiveCall call;

  /** The other rank's process on a shared-memory edge, where this one can see it; else null. */
  private PeerLiveness liveness;

  /**
   * A receiving shared-memory edge's other protocol (LL where this edge is simple, or the reverse):
   * its FIFO, the step this rank reads there next, and its slots' calls; null where there is none.
   * Ranks that disagree on a call's size may choose different protocols for one message, and then
   * each waits on a FIFO the other never fills.
   */
  private SlotQueue otherQueue;

  private long otherStep;
  private SlotCalls otherCalls;

  private Wait waitingFor = Wait.FILLED;

  /**
   * The FIFO whose steps this sending edge may publish from the collective's buffers ({@link
   * #publishFrom}) where the link's connection sends from any memory (a socket); else null. Set by
   * {@link #sendFromSources} after each {@link #restart}.
   */
  private Fifo sourceFifo;

  /** The last step published from the collective's buffers and not yet seen sent; -1: none. */
  private long lastSourceStep = -1;

  /** The step {@link Wait#SENT} waits to see sent. */
  private long sentTarget;

  /**
   * The last slice {@link #publishFrom} made, with what it views: a launch of the same shape on the
   * same buffers reuses it, so a steady loop allocates no slice, nor a socket request's view of it.
   * It keeps the buffer reachable until another slice replaces it or the communicator drops this
   * edge with its plans.
   */
  private ByteBuffer sliceRegion;

  private int sliceOffset;
  private int sliceBytes;
  private ByteBuffer slice;

  private KernelGuard guard;
  private Supplier<String> what;

  /**
   * An edge with {@code peer}, unusable until {@link #restart}ed. A launch makes its edges once per
   * collective shape and restarts them for every later launch of that shape: a small collective
   * made four to eight of them per call, and fresh objects cost cache misses on every call.
   */
  public PeerEdge(int peer) {
    this.peer = peer;
  }

  /** The rank at the other end. */
  public int peer() {
    return peer;
  }

  /**
   * Points the edge at its link for one collective, from step {@code firstStep} of {@code fifo}.
   * Over a FIFO that both ranks' kernels touch (shared memory) there is no proxy, so the edge marks
   * each slot it fills with {@code call} and checks the marks of the slots it reads ({@code calls},
   * non-null); a long wait asks whether the peer's process still runs ({@code liveness}, null: not
   * watched). Elsewhere the proxy's operations move the slots and check their calls ({@code calls}
   * null). It watches no other protocol until {@link #watchOtherProtocol}.
   */
  public void restart(
      SlotQueue fifo, long firstStep, SlotCalls calls, CollectiveCall call, PeerLiveness liveness) {
    this.fifo = fifo;
    this.step = firstStep;
    this.calls = calls;
    this.call = call;
    this.liveness = liveness;
    this.otherQueue = null;
    this.otherCalls = null;
    this.sourceFifo = null;
    this.lastSourceStep = -1;
  }

  /**
   * Lets this sending edge, just {@link #restart}ed on {@code fifo}, publish large slices from the
   * collective's buffers (its connection sends from any memory); null leaves it copying every
   * slice.
   */
  public void sendFromSources(Fifo fifo) {
    this.sourceFifo = fifo;
  }

  /**
   * Watches, while this receiving edge waits past its fast phase, the FIFO of the other protocol
   * from the same peer at {@code step}, the next step this rank reads there. A peer publishes its
   * messages in call order, so that step filled while this edge's is not means the peer sent this
   * message under the other protocol: their calls differ, and the wait fails at once, naming both
   * calls, instead of at the timeout.
   */
  public void watchOtherProtocol(SlotQueue queue, long step, SlotCalls calls) {
    this.otherQueue = queue;
    this.otherStep = step;
    this.otherCalls = calls;
  }

  /**
   * Waits for a free send slot and returns it; {@code what} names the collective, built only for an
   * error.
   */
  ByteBuffer awaitRoom(KernelWaiter waiter, KernelGuard guard, Supplier<String> what) {
    arm(Wait.ROOM, guard, what);
    waiter.await(this, this);
    return fifo.slot(step);
  }

  /**
   * Waits for a filled receive slot of {@code expected} bytes and returns it; another size means
   * the ranks disagree on the call.
   */
  ByteBuffer awaitFilled(
      int expected, KernelWaiter waiter, KernelGuard guard, Supplier<String> what) {
    arm(Wait.FILLED, guard, what);
    if (fifo.consumerAt(step)) {
      // a proxy that waited for this kernel to reach the edge reads its socket from the next
      // pass; a kernel that parks must wake it for that
      waiter.deferProxyWake();
    }
    waiter.await(this, this);
    if (calls != null) {
      calls.verify(step, call);
    }
    int got = fifo.size(step);
    if (got != expected) {
      throw new IllegalStateException(
          what.get()
              + ": received a slice of "
              + got
              + " bytes from rank "
              + peer
              + " where "
              + expected
              + " were expected; the ranks disagree on the call");
    }
    return fifo.slot(step);
  }

  /**
   * Publishes bytes {@code [offset, offset + bytes)} of {@code region} as the current step, once
   * {@link #awaitRoom} has returned, without copying them into the slot; returns false, publishing
   * nothing, where this edge copies instead (a shared-memory or small slice, heap memory). The
   * bytes must stay unchanged until {@link #awaitSent} has seen the step sent.
   */
  boolean publishFrom(ByteBuffer region, int offset, int bytes) {
    if (sourceFifo == null || bytes < SOURCE_MIN_BYTES || !region.isDirect()) {
      return false;
    }
    if (region != sliceRegion || offset != sliceOffset || bytes != sliceBytes) {
      slice = region.slice(offset, bytes);
      sliceRegion = region;
      sliceOffset = offset;
      sliceBytes = bytes;
    }
    sourceFifo.publishFrom(step, slice);
    lastSourceStep = step;
    step++;
    return true;
  }

  /**
   * Sends bytes {@code [offset, offset + bytes)} of {@code region} as the next step once there is
   * room: from the region itself where {@link #publishFrom} allows it (then the bytes must stay
   * unchanged until {@link #awaitSent}), else copied into the slot.
   */
  void send(
      ByteBuffer region,
      int offset,
      int bytes,
      KernelWaiter waiter,
      KernelGuard guard,
      Supplier<String> what) {
    ByteBuffer slot = awaitRoom(waiter, guard, what);
    if (!publishFrom(region, offset, bytes)) {
      slot.put(0, region, offset, bytes);
      publish(bytes);
    }
  }

  /** The step this edge sends or receives next. */
  long step() {
    return step;
  }

  /**
   * Waits until the connection has sent every step up to {@code upTo} that {@link #publishFrom}
   * left in the collective's buffers, so that those bytes may change; returns at once where none is
   * outstanding.
   */
  void awaitSent(long upTo, KernelWaiter waiter, KernelGuard guard, Supplier<String> what) {
    if (lastSourceStep < 0) {
      return;
    }
    sentTarget = Math.min(upTo, lastSourceStep);
    if (sourceFifo.head() <= sentTarget) {
      arm(Wait.SENT, guard, what);
      waiter.await(this, this);
    }
    if (sentTarget == lastSourceStep) {
      lastSourceStep = -1;
    }
  }

  private void arm(Wait w, KernelGuard g, Supplier<String> text) {
    waitingFor = w;
    guard = g;
    what = text;
  }

  /**
   * Whether the wait in progress is over: room at the current step, its slot filled, or the steps
   * left in the collective's buffers sent.
   */
  @Override
  public boolean getAsBoolean() {
    return switch (waitingFor) {
      case ROOM -> fifo.hasRoomFor(step);
      case FILLED -> fifo.isFilled(step);
      case SENT -> sourceFifo.head() > sentTarget;
    };
  }

  /** The deadline and abort of the wait in progress; the text is made only when it fails. */
  @Override
  public void check(long waitedNanos) {
    guard.checkWait(waitedNanos, waitText);
    if (waitingFor == Wait.FILLED
        && otherQueue != null
        && otherQueue.isFilled(otherStep)
        && !fifo.isFilled(step)) {
      otherCalls.verify(otherStep, call); // throws where the calls differ and checks are on
      throw new IllegalStateException(
          waitText()
              + ": it sent "
              + otherQueue.size(otherStep)
              + " bytes under the other protocol (LL or simple, chosen by size); the ranks disagree"
              + " on the call");
    }
    if (liveness != null && liveness.hasExited(waitedNanos)) {
      throw liveness.exited(waitText(), waitedNanos);
    }
  }

  /**
   * Builds the wait's text when a check fails; one supplier per edge, since a spinning wait checks
   * on every pass.
   */
  private final Supplier<String> waitText = this::waitText;

  private String waitText() {
    return what.get()
        + switch (waitingFor) {
          case ROOM -> ": waiting for rank " + peer + " to take data";
          case FILLED -> ": waiting for data from rank " + peer;
          case SENT -> ": waiting for the data to leave for rank " + peer;
        };
  }

  /**
   * Nobody wakes a wait on shared memory (the other rank may be another process): it polls, parking
   * briefly between looks.
   */
  @Override
  public long parkNanos() {
    return calls != null ? SHARED_PARK_NANOS : KernelWaiter.Check.super.parkNanos();
  }

  void publish(int len) {
    if (calls != null) {
      calls.stamp(step, call);
    }
    fifo.publish(step, len);
    step++;
  }

  void release() {
    fifo.release(step);
    step++;
  }
}
