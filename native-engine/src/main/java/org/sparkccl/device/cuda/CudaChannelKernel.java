package org.sparkccl.device.cuda;

import static jcuda.driver.JCudaDriver.cuLaunchKernel;
import static jcuda.driver.JCudaDriver.cuMemAlloc;
import static jcuda.driver.JCudaDriver.cuMemFree;
import static jcuda.driver.JCudaDriver.cuMemcpyHtoD;
import static jcuda.driver.JCudaDriver.cuMemsetD32Async;
import static jcuda.driver.JCudaDriver.cuStreamCreate;
import static jcuda.driver.JCudaDriver.cuStreamDestroy;
import static jcuda.driver.JCudaDriver.cuStreamQuery;
import static jcuda.driver.JCudaDriver.cuStreamSynchronize;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import jcuda.CudaException;
import jcuda.Pointer;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUresult;
import jcuda.driver.CUstream;
import jcuda.driver.CUstream_flags;
import org.apache.logging.log4j.Logger;
import org.sparkccl.CclAbortedException;
import org.sparkccl.algorithm.ChannelPlan;
import org.sparkccl.algorithm.PrimitiveCall;
import org.sparkccl.config.Key;
import org.sparkccl.fifo.Fifo;
import org.sparkccl.fifo.FifoLayout;
import org.sparkccl.kernel.ChannelKernel;
import org.sparkccl.kernel.ChannelWork;
import org.sparkccl.kernel.KernelGuard;
import org.sparkccl.kernel.PolledChannelKernel;
import org.sparkccl.transport.p2p.DirectFifoKernel;
import org.sparkccl.transport.p2p.EdgeKind;
import org.sparkccl.transport.p2p.FifoHandle;
import org.sparkccl.util.EngineLog;

/**
 * The kernel side of one channel on a GPU: a grid on the channel's own stream runs each
 * collective's plan of primitives over FIFOs in pinned host memory mapped into the device. Its
 * blocks (one; automatically several on a direct edge into another GPU's memory; {@code
 * cuda.blocks} set by hand on every edge) share every slot, and the last block to finish a step
 * publishes or releases it for all. The proxy thread drains and fills those FIFOs exactly as it
 * does for the host kernel.
 *
 * <p>With {@code cuda.residentUs} above 0 (the default) the block stays resident ({@code
 * residentKernel}): it polls a {@link ResidentMailbox} for the next plan, so back-to-back
 * collectives pay no launch, no plan copy and no stream synchronisation; after {@code
 * cuda.residentUs} without work it returns (a device-wide synchronisation such as {@code cuMemFree}
 * waits for every running kernel), and the next collective launches it again. With 0, each
 * collective is one launch of {@code channelKernel}.
 *
 * <p>While the block runs, the channel's kernel thread waits for the kernel's done word and lends
 * itself to the proxy ({@code assist}): a GPU cannot wake a Java thread, so someone must look at
 * the counters the kernel advances. It also watches for abort and the no-progress timeout; on
 * either it sets the FIFOs' abort word, which the spinning block checks, waits for the block to
 * return (so the GPU is usable for the next collective) and throws.
 *
 * <p>Streams are non-blocking: the synchronous copies other ranks' threads make on the legacy
 * stream must never wait for a block that is waiting for them.
 */
public final class CudaChannelKernel implements PolledChannelKernel, DirectFifoKernel {
  /** Threads of each block of the channel. */
  static final int THREADS = 512;

  /** The blocks' counters ({@code SYNC_INTS} in the kernel source), zeroed before each launch. */
  static final int SYNC_INTS = 32;

  /**
   * Bits of the kernels' {@code localEdges} argument ({@code LOCAL_SEND}, {@code LOCAL_RECV} in the
   * kernel source): the next rank's (previous rank's) kernel on the send (receive) FIFO runs on
   * this GPU, so the block orders that FIFO's slots and counters with device-scope fences, not
   * system-scope ones.
   */
  static final int LOCAL_SEND = 1;

  static final int LOCAL_RECV = 2;

  /**
   * Blocks per rank that automatic sizing aims at over peer edges: 16 channels of 4 to 6 blocks
   * moved the most between two H200 over NVLink (fewer blocks moved less; more channels or blocks
   * added host threads or contention and moved less again).
   */
  static final int AUTO_BLOCKS_PER_RANK = 64;

  /**
   * A plan whose primitive calls all move fewer bytes runs on one block: every step's hand-over
   * between blocks costs microseconds (an 8 B allReduce between two H200 took 101 us on 4 blocks
   * against 60 us on one), while a call of 256 KiB still gives each of 4 blocks 64 KiB to copy.
   */
  static final long MIN_BYTES_PER_GRID = 256 * 1024;

  /**
   * Calls one launch takes; a longer plan runs as several launches in a row (the step counters
   * carry over). The plan buffer is allocated once: {@code cuMemFree} waits for every kernel on the
   * device, so freeing while another rank's block spins waiting for this rank would hang.
   */
  static final int MAX_CALLS = 8192;

  /** Polls of a running block between two looks at the no-progress clock and the abort. */
  private static final int PROGRESS_POLLS = 64;

  private static final Logger LOG = EngineLog.logger(CudaChannelKernel.class);
  private static final VarHandle INTS =
      MethodHandles.byteBufferViewVarHandle(int[].class, ByteOrder.nativeOrder());
  private static final int DONE = 0;
  private static final int ERROR = 4;
  private static final int DETAIL = 8;
  private static final int DETAIL2 = 12;
  private static final int SEND_STEP = 16;
  private static final int RECV_STEP = 24;

  /** The resident kernel's answer: the last sequence number it ran (int64). */
  static final int DONE_SEQ = 32;

  /** 1 once the resident kernel is about to return. */
  static final int RETURNED = 40;

  private static final VarHandle LONGS =
      MethodHandles.byteBufferViewVarHandle(long[].class, ByteOrder.nativeOrder());
  private static final int ERR_ABORTED = 1;
  private static final int ERR_SIZE = 2;

  /** How long an aborted block may take to notice and return. */
  private static final long ABORT_GRACE_NANOS = 10_000_000_000L;

  private static final String NOT_READY = CUresult.stringFor(CUresult.CUDA_ERROR_NOT_READY);

  private final CudaDevice device;
  private final int stepSize;
  private final KernelGuard guard;
  private final BooleanSupplier assist;
  private final Fifo sendFifo;
  private final Fifo recvFifo;
  private final MappedMemory sendMemory;
  private final MappedMemory recvMemory;
  private final MappedMemory status;
  private final CUstream stream = new CUstream();

  /** Set when an aborted block did not return in time: its memory must not be freed. */
  private volatile boolean stuck;

  /** Where the block reads received slots: its receive FIFO's, or the sender's send slots. */
  private volatile CUdeviceptr recvSlots;

  /** {@link #recvSlots} as a number, for the resident kernel's mailbox. */
  private volatile long recvAddress;

  /** The plan of a launch per collective; null when resident. */
  private final CUdeviceptr plan;

  /** The resident kernel's plans; null with a launch per collective. */
  private final ResidentMailbox mailbox;

  private final long residentNanos;

  /** Counters the channel's blocks share (device memory, allocated once like {@link #plan}). */
  private final CUdeviceptr sync = new CUdeviceptr();

  /** {@code cuda.blocks}: 0 chooses from the edges ({@link #fitGrid}). */
  private final int configuredBlocks;

  /** Blocks that run the channel; changed only before the first collective. */
  private volatile int blocks;

  /** Whether the send edge writes into another GPU's memory (or this GPU's, for another rank). */
  private volatile boolean peerSend;

  /** {@link #LOCAL_SEND} and {@link #LOCAL_RECV}; set only before the first collective. */
  private volatile int localEdges;

  /** A resident block was launched and may still run. */
  private boolean launched;

  /** The FIFOs the block uses: its own, or those of a direct edge ({@link DirectFifos}). */
  private volatile CUdeviceptr sendControl;

  private volatile CUdeviceptr sendSlots;
  private volatile CUdeviceptr recvControl;

  /** The control blocks of the FIFOs the block uses, for progress and abort. */
  private volatile ByteBuffer sendView;

  private volatile ByteBuffer recvView;
  private final DirectFifos direct;

  private long sendStep;
  private long recvStep;

  /** What this channel waits for, built only when a wait times out. */
  private final Supplier<String> stallText;

  /** The resident run in progress ({@link #start}, {@link #poll}); null between runs. */
  private ChannelWork polled;

  private int polledGrid;

  /** The part of the plan posted last: its first call, its calls, its sequence number. */
  private int pieceFirst;

  private int pieceCalls;
  private long pieceSeq;

  /** The no-progress clock of the run: when a FIFO counter last moved, and their last value. */
  private long lastProgress;

  private long lastCounters;
  private int polls;

  /**
   * @param assist one proxy progress pass, returning whether anything moved
   */
  public CudaChannelKernel(
      CudaDevice device,
      int stepSize,
      KernelGuard guard,
      BooleanSupplier assist,
      int residentUs,
      int configuredBlocks) {
    this.device = device;
    this.stepSize = stepSize;
    this.guard = guard;
    this.assist = assist;
    this.stallText =
        () ->
            guard.describe((long) LONGS.getVolatile(recvView, FifoLayout.TAIL_OFFSET) <= recvStep);
    device.kernels();
    device.makeCurrent();
    long fifoBytes = FifoLayout.CONTROL_BYTES + (long) FifoLayout.STEPS * stepSize;
    this.sendMemory = device.allocateMapped(fifoBytes);
    this.recvMemory = device.allocateMapped(fifoBytes);
    this.status = device.allocateMapped(FifoLayout.LINE);
    this.sendFifo = fifoIn(sendMemory, stepSize);
    this.recvFifo = fifoIn(recvMemory, stepSize);
    this.recvSlots = recvMemory.devicePointer(FifoLayout.CONTROL_BYTES);
    this.recvAddress = recvMemory.deviceAddress(FifoLayout.CONTROL_BYTES);
    this.sendControl = sendMemory.devicePointer(0);
    this.sendSlots = sendMemory.devicePointer(FifoLayout.CONTROL_BYTES);
    this.recvControl = recvMemory.devicePointer(0);
    this.sendView = sendMemory.buffer().slice(0, FifoLayout.CONTROL_BYTES);
    this.recvView = recvMemory.buffer().slice(0, FifoLayout.CONTROL_BYTES);
    this.direct = new DirectFifos(device, stepSize);
    cuStreamCreate(stream, CUstream_flags.CU_STREAM_NON_BLOCKING);
    this.residentNanos = residentUs * 1000L;
    this.configuredBlocks = configuredBlocks;
    this.blocks = Math.max(1, configuredBlocks);
    cuMemAlloc(sync, (long) SYNC_INTS * Integer.BYTES);
    if (residentUs > 0) {
      this.plan = null;
      this.mailbox = new ResidentMailbox(device, MAX_CALLS);
    } else {
      this.plan = new CUdeviceptr();
      this.mailbox = null;
      cuMemAlloc(plan, (long) MAX_CALLS * PlanEncoding.WORDS * Long.BYTES);
    }
  }

  private static Fifo fifoIn(MappedMemory m, int stepSize) {
    ByteBuffer all = m.buffer();
    return new Fifo(
        stepSize,
        all.slice(0, FifoLayout.CONTROL_BYTES),
        all.slice(FifoLayout.CONTROL_BYTES, FifoLayout.STEPS * stepSize),
        m::close);
  }

  /**
   * Reads received slots straight from {@code sender}'s send FIFO, a kernel of the previous rank in
   * this process on the same GPU: the in-process transport then passes slot numbers, not bytes (see
   * {@code transport.local.LocalPipe}). Call before the first collective.
   */
  @Override
  public boolean readsSenderSlots() {
    return true;
  }

  @Override
  public void readSlotsOf(ChannelKernel other) {
    if (!(other instanceof CudaChannelKernel sender)) {
      throw new IllegalArgumentException(
          "the previous rank's kernel (" + other + ") is not a GPU kernel; expected ranks on GPUs");
    }
    if (sender.stepSize != stepSize || sender.device != device) {
      throw new IllegalArgumentException(
          "the sender's FIFO (stepSize "
              + sender.stepSize
              + ", "
              + sender.device
              + ") does not"
              + " match this one (stepSize "
              + stepSize
              + ", "
              + device
              + ")");
    }
    recvSlots = sender.sendMemory.devicePointer(FifoLayout.CONTROL_BYTES);
    recvAddress = sender.sendMemory.deviceAddress(FifoLayout.CONTROL_BYTES);
  }

  @Override
  public String deviceId() {
    return device.pciBusId();
  }

  @Override
  public boolean reaches(String deviceId) {
    return device.reaches(deviceId);
  }

  @Override
  public FifoHandle exportRecv(EdgeKind kind, String name) {
    DirectFifos.Side[] side = new DirectFifos.Side[1];
    FifoHandle h = direct.exportRecv(kind, name, side);
    recvControl = side[0].control();
    recvSlots = side[0].data();
    recvAddress = side[0].dataAddress();
    recvView = side[0].controlView();
    return h;
  }

  @Override
  public void importSend(FifoHandle handle) {
    DirectFifos.Side side = direct.importSend(handle);
    sendControl = side.control();
    sendSlots = side.data();
    sendView = side.controlView();
    peerSend = handle.kind() == EdgeKind.PEER;
  }

  /**
   * With {@code cuda.blocks=0}: a channel whose send edge writes into GPU memory gets enough blocks
   * for {@link #AUTO_BLOCKS_PER_RANK} over all channels of this rank, at most {@code cuda.blocks}'s
   * maximum, and never more than leaves half of the GPU's SMs to other work once every channel of
   * every rank on this GPU has its blocks (they must all be resident at once). One block moves 3 to
   * 9 GB/s over NVLink, far below the link. Every other channel keeps 1: its slots cross PCIe or
   * the proxy.
   */
  @Override
  public void fitGrid(int ranksOnDevice, int channels) {
    if (configuredBlocks > 0) {
      long resident = (long) configuredBlocks * Math.max(1, channels) * Math.max(1, ranksOnDevice);
      if (resident > device.multiprocessors()) {
        LOG.warn(
            "cuda.blocks={}: {} ranks x {} channels x {} blocks must all be resident at once on {},"
                + " which has {} SMs; collectives may end in the timeout. Expected at most {}"
                + " blocks per channel, or 0 to choose automatically",
            configuredBlocks,
            ranksOnDevice,
            channels,
            configuredBlocks,
            device,
            device.multiprocessors(),
            Math.max(1, device.multiprocessors() / (Math.max(1, channels) * ranksOnDevice)));
      }
      return;
    }
    blocks = peerSend ? autoBlocks(device.multiprocessors(), ranksOnDevice, channels) : 1;
  }

  /**
   * Blocks per peer channel for {@code channels} channels of each of {@code ranksOnDevice} ranks on
   * a GPU of {@code multiprocessors} SMs.
   */
  static int autoBlocks(int multiprocessors, int ranksOnDevice, int channels) {
    int ch = Math.max(1, channels);
    int share = multiprocessors / (2 * Math.max(1, ranksOnDevice) * ch);
    int wanted = Math.min(AUTO_BLOCKS_PER_RANK / ch, Key.MAX_CUDA_BLOCKS);
    return Math.max(1, Math.min(wanted, share));
  }

  /** The blocks that run {@code p}: all of the grid for a large plan, else one. */
  private int blocksFor(ChannelPlan p) {
    if (blocks == 1) {
      return 1;
    }
    for (PrimitiveCall c : p.calls()) {
      if (c.bytes() >= MIN_BYTES_PER_GRID) {
        return blocks;
      }
    }
    return 1;
  }

  @Override
  public int blocks() {
    return blocks;
  }

  /**
   * A direct edge whose other end runs on this GPU needs only device-scope fences. Edges through
   * the proxy (a Java thread reads the FIFO) and into another GPU keep system-scope ones.
   */
  @Override
  public void peersOnThisDevice(boolean prev, boolean next) {
    localEdges = (next ? LOCAL_SEND : 0) | (prev ? LOCAL_RECV : 0);
  }

  @Override
  public void unlinkExported() {
    direct.unlinkExported();
  }

  @Override
  public void dropDirect() {
    direct.close();
    peerSend = false;
    localEdges = 0;
    blocks = Math.max(1, configuredBlocks);
    recvSlots = recvMemory.devicePointer(FifoLayout.CONTROL_BYTES);
    recvAddress = recvMemory.deviceAddress(FifoLayout.CONTROL_BYTES);
    sendControl = sendMemory.devicePointer(0);
    sendSlots = sendMemory.devicePointer(FifoLayout.CONTROL_BYTES);
    recvControl = recvMemory.devicePointer(0);
    sendView = sendMemory.buffer().slice(0, FifoLayout.CONTROL_BYTES);
    recvView = recvMemory.buffer().slice(0, FifoLayout.CONTROL_BYTES);
  }

  @Override
  public Fifo sendFifo() {
    return sendFifo;
  }

  @Override
  public Fifo recvFifo() {
    return recvFifo;
  }

  @Override
  public void run(ChannelWork w) {
    ChannelPlan p = w.plan();
    device.makeCurrent();
    int grid = blocksFor(p);
    if (mailbox != null) {
      start(w);
      int idle = 0;
      while (!poll()) {
        if (assist.getAsBoolean()) {
          idle = 0;
        } else if (++idle < 64) {
          Thread.onSpinWait();
        } else {
          idle = 0;
          Thread.yield();
        }
      }
      return;
    }
    long[] encoded = PlanEncoding.encode(p);
    int calls = p.calls().size();
    for (int first = 0; first < calls; first += MAX_CALLS) {
      int n = Math.min(MAX_CALLS, calls - first);
      // a synchronous copy on the legacy stream: the channel's stream is idle here
      cuMemcpyHtoD(
          plan,
          Pointer.to(encoded).withByteOffset((long) first * PlanEncoding.WORDS * Long.BYTES),
          (long) n * PlanEncoding.WORDS * Long.BYTES);
      launch(w, n, grid);
    }
  }

  @Override
  public boolean pollable() {
    return mailbox != null;
  }

  /**
   * Posts the plan (in pieces of at most {@link #MAX_CALLS} calls) to the resident block, launching
   * it first when none runs; {@link #poll} takes each piece's answer and posts the next.
   */
  @Override
  public void start(ChannelWork w) {
    if (mailbox == null) {
      throw new IllegalStateException(
          guard.describe(false)
              + ": a kernel launched per collective (cuda.residentUs=0) is run,"
              + " not polled");
    }
    device.makeCurrent();
    polled = w;
    polledGrid = blocksFor(w.plan());
    lastProgress = System.nanoTime();
    lastCounters = counters();
    polls = 0;
    postPiece(0);
  }

  private void postPiece(int first) {
    ChannelWork w = polled;
    ChannelPlan p = w.plan();
    pieceFirst = first;
    pieceCalls = Math.min(MAX_CALLS, p.calls().size() - first);
    pieceSeq =
        mailbox.post(
            p,
            first,
            pieceCalls,
            ((CudaBuffer) w.src()).address(),
            ((CudaBuffer) w.dst()).address(),
            w.type().ordinal(),
            w.op() == null ? 0 : w.op().ordinal(),
            w.nRanks(),
            recvAddress,
            polledGrid,
            sendStep,
            recvStep);
    ensureResident(pieceSeq);
  }

  @Override
  public boolean poll() {
    ByteBuffer st = status.buffer();
    if (!finished(st, pieceSeq)) {
      if (++polls % PROGRESS_POLLS == 0) {
        checkProgress();
      }
      return false;
    }
    if ((long) LONGS.getVolatile(st, DONE_SEQ) != pieceSeq) {
      // it returned (idle) before it saw this piece: launch it again, it finds the piece waiting
      ensureResident(pieceSeq);
      return false;
    }
    if ((int) INTS.getVolatile(st, ERROR) != 0) {
      // the block returns after an error; the next collective launches a new one
      polled = null;
      awaitReturned();
    }
    checkStatus(st);
    sendStep = (long) LONGS.getVolatile(st, SEND_STEP);
    recvStep = (long) LONGS.getVolatile(st, RECV_STEP);
    int next = pieceFirst + pieceCalls;
    if (next < polled.plan().calls().size()) {
      postPiece(next);
      return false;
    }
    polled = null;
    return true;
  }

  /**
   * The no-progress timeout and abort, as every wait checks them: any FIFO counter that moved
   * resets the clock. Stops the block before it throws.
   */
  private void checkProgress() {
    long now = System.nanoTime();
    long c = counters();
    if (c != lastCounters) {
      lastCounters = c;
      lastProgress = now;
    }
    try {
      guard.checkWait(now - lastProgress, stallText);
    } catch (RuntimeException e) {
      polled = null;
      abortBlock();
      throw e;
    }
  }

  /**
   * After {@code seq} was posted: keeps a running block (it sees the plan, or returns and the wait
   * comes back here), else launches one unless the block that returned ran {@code seq} first.
   */
  private void ensureResident(long seq) {
    ByteBuffer st = status.buffer();
    if (launched) {
      if ((int) INTS.getVolatile(st, RETURNED) == 0) {
        return;
      }
      awaitReturned();
      if ((long) LONGS.getVolatile(st, DONE_SEQ) == seq) {
        return;
      }
    }
    launchResident(seq - 1);
  }

  /** Launches the resident block, which takes the plans after {@code lastSeq}. */
  private void launchResident(long lastSeq) {
    ByteBuffer st = status.buffer();
    for (int off = 0; off < 16; off += 4) {
      INTS.setVolatile(st, off, 0);
    }
    LONGS.setVolatile(st, DONE_SEQ, lastSeq);
    INTS.setVolatile(st, RETURNED, 0);
    Pointer params =
        Pointer.to(
            Pointer.to(mailbox.devicePointer()),
            Pointer.to(sendControl),
            Pointer.to(sendSlots),
            Pointer.to(recvControl),
            Pointer.to(new int[] {stepSize}),
            Pointer.to(new long[] {lastSeq}),
            Pointer.to(status.devicePointer(0)),
            Pointer.to(new long[] {residentNanos}),
            Pointer.to(sync),
            Pointer.to(new int[] {localEdges}));
    cuMemsetD32Async(sync, 0, SYNC_INTS, stream);
    cuLaunchKernel(
        device.kernels().residentKernel(), blocks, 1, 1, THREADS, 1, 1, 0, stream, params, null);
    launched = true;
  }

  /**
   * Waits (at most {@link #ABORT_GRACE_NANOS}) for a resident block that is returning, then for its
   * stream. Returns whether it returned; if not, the stream is left alone so that nothing hangs.
   */
  private boolean awaitReturned() {
    if (!launched) {
      return true;
    }
    long deadline = System.nanoTime() + ABORT_GRACE_NANOS;
    while ((int) INTS.getVolatile(status.buffer(), RETURNED) == 0) {
      if (System.nanoTime() > deadline) {
        return false;
      }
      Thread.onSpinWait();
    }
    cuStreamSynchronize(stream);
    launched = false;
    return true;
  }

  /**
   * One launch of {@code grid} blocks over the first {@code nCalls} calls in the plan buffer;
   * advances the steps.
   */
  private void launch(ChannelWork w, int nCalls, int grid) {
    ByteBuffer st = status.buffer();
    for (int off = 0; off < 16; off += 4) {
      INTS.setVolatile(st, off, 0);
    }
    Pointer params =
        Pointer.to(
            Pointer.to(plan),
            Pointer.to(new int[] {nCalls}),
            Pointer.to(((CudaBuffer) w.src()).pointer(0)),
            Pointer.to(((CudaBuffer) w.dst()).pointer(0)),
            Pointer.to(new int[] {w.type().ordinal()}),
            Pointer.to(new int[] {w.op() == null ? 0 : w.op().ordinal()}),
            Pointer.to(new int[] {w.nRanks()}),
            Pointer.to(sendControl),
            Pointer.to(sendSlots),
            Pointer.to(recvControl),
            Pointer.to(recvSlots),
            Pointer.to(new int[] {stepSize}),
            Pointer.to(new long[] {sendStep}),
            Pointer.to(new long[] {recvStep}),
            Pointer.to(status.devicePointer(0)),
            Pointer.to(sync),
            Pointer.to(new int[] {localEdges}));
    cuMemsetD32Async(sync, 0, SYNC_INTS, stream);
    cuLaunchKernel(
        device.kernels().channelKernel(), grid, 1, 1, THREADS, 1, 1, 0, stream, params, null);
    awaitDone();
    cuStreamSynchronize(stream);
    checkStatus(st);
    // the block counted its steps; read them back rather than recount the calls
    sendStep = (long) LONGS.getVolatile(st, SEND_STEP);
    recvStep = (long) LONGS.getVolatile(st, RECV_STEP);
  }

  /**
   * Waits for a launched block's done word, driving the proxy meanwhile; the no-progress timeout as
   * {@link #checkProgress} keeps it.
   */
  private void awaitDone() {
    ByteBuffer st = status.buffer();
    lastProgress = System.nanoTime();
    lastCounters = counters();
    int idle = 0;
    while ((int) INTS.getVolatile(st, DONE) == 0) {
      if (assist.getAsBoolean()) {
        idle = 0;
        continue;
      }
      if (++idle < 64) {
        Thread.onSpinWait();
        continue;
      }
      idle = 0;
      checkProgress();
      Thread.yield();
    }
  }

  /** Whether the resident block answered {@code seq} or returned. */
  private static boolean finished(ByteBuffer st, long seq) {
    return (long) LONGS.getVolatile(st, DONE_SEQ) == seq
        || (int) INTS.getVolatile(st, RETURNED) != 0;
  }

  private long counters() {
    ByteBuffer s = sendView;
    ByteBuffer r = recvView;
    return (long) LONGS.getVolatile(s, FifoLayout.HEAD_OFFSET) * 31
        + (long) LONGS.getVolatile(s, FifoLayout.TAIL_OFFSET) * 17
        + (long) LONGS.getVolatile(r, FifoLayout.HEAD_OFFSET) * 7
        + (long) LONGS.getVolatile(r, FifoLayout.TAIL_OFFSET);
  }

  /**
   * Sets the abort words the block spins on and waits for it to return, at most {@link
   * #ABORT_GRACE_NANOS}: the stream is polled ({@code cuStreamQuery}), never synchronized, so a
   * block that ignores the abort cannot hold this thread. Such a block is reported and its memory
   * left alone on close (freeing memory a running kernel reads would be worse than the leak).
   */
  private void abortBlock() {
    sendFifo.abort();
    recvFifo.abort();
    // a direct edge's FIFOs: the neighbour's block sees these too and stops
    INTS.setVolatile(sendView, FifoLayout.ABORT_OFFSET, 1);
    INTS.setVolatile(recvView, FifoLayout.ABORT_OFFSET, 1);
    if (mailbox != null) {
      if (!awaitReturned()) {
        reportStuck();
      }
      return;
    }
    long deadline = System.nanoTime() + ABORT_GRACE_NANOS;
    while ((int) INTS.getVolatile(status.buffer(), DONE) == 0 && System.nanoTime() < deadline) {
      Thread.onSpinWait();
    }
    while (!streamIdle()) {
      if (System.nanoTime() - deadline >= 0) {
        reportStuck();
        return;
      }
      Thread.yield();
    }
  }

  private void reportStuck() {
    stuck = true;
    LOG.error(
        "{}: the CUDA block did not stop within {} ms of the abort; its memory stays allocated",
        guard.describe(false),
        ABORT_GRACE_NANOS / 1_000_000);
  }

  /** Whether the stream has finished its work; never blocks. */
  private boolean streamIdle() {
    try {
      cuStreamQuery(stream);
      return true;
    } catch (CudaException e) {
      // JCuda throws for every result but success, "not ready" included
      if (NOT_READY.equals(e.getMessage())) {
        return false;
      }
      throw e;
    }
  }

  private void checkStatus(ByteBuffer st) {
    int error = (int) INTS.getVolatile(st, ERROR);
    if (error == ERR_ABORTED) {
      guard.checkAbort();
      throw new CclAbortedException(guard.describe(false) + ": the CUDA kernel was aborted", null);
    }
    if (error == ERR_SIZE) {
      throw new IllegalStateException(
          guard.describe(false)
              + ": received a slice of "
              + (int) INTS.getVolatile(st, DETAIL2)
              + " bytes that the kernel did not expect (step "
              + INTS.getVolatile(st, DETAIL)
              + "); the ranks disagree on the call");
    }
  }

  @Override
  public void close() {
    if (stuck) {
      return;
    }
    device.makeCurrent();
    if (mailbox != null) {
      mailbox.shutdown();
      if (!awaitReturned()) {
        // freeing memory a running block reads could crash the process: leak it instead
        LOG.error(
            "{}: the resident CUDA kernel did not return within {} s; its memory is not freed",
            guard.describe(false),
            ABORT_GRACE_NANOS / 1_000_000_000L);
        return;
      }
      mailbox.close();
    }
    cuStreamDestroy(stream);
    if (plan != null) {
      cuMemFree(plan);
    }
    cuMemFree(sync);
    status.close();
    direct.close();
  }
}
