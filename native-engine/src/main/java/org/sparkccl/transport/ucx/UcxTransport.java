package org.sparkccl.transport.ucx;

import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Predicate;
import org.apache.logging.log4j.Logger;
import org.openucx.jucx.ucp.UcpContext;
import org.openucx.jucx.ucp.UcpEndpoint;
import org.openucx.jucx.ucp.UcpEndpointParams;
import org.openucx.jucx.ucp.UcpMemory;
import org.openucx.jucx.ucp.UcpParams;
import org.openucx.jucx.ucp.UcpRemoteKey;
import org.openucx.jucx.ucp.UcpRequest;
import org.openucx.jucx.ucp.UcpWorker;
import org.openucx.jucx.ucp.UcpWorkerParams;
import org.sparkccl.CclException;
import org.sparkccl.auth.ChallengeResponse;
import org.sparkccl.fifo.Fifo;
import org.sparkccl.memory.DirectMemory;
import org.sparkccl.proxy.OwnedWait;
import org.sparkccl.transport.RecvConnection;
import org.sparkccl.transport.SendConnection;
import org.sparkccl.util.EngineLog;

/**
 * The UCX transport through Jucx: one context and worker per communicator, owned by the proxy
 * thread, the FIFO slots and a side area per channel registered once, and ring connections that
 * move data by the receiver-posts-first handshake of NCCL's {@code net_ib} (see {@link
 * UcxSendConnection}, {@link UcxRecvConnection}, {@link UcxLayout}).
 *
 * <pre>{@code
 * UcxTransport ucx = UcxTransport.open(rank, qps, sendFifos, recvFifos);   // throws if no UCX
 * byte[] mine = ucx.localInfo();        // allGather these through the bootstrap, then:
 * ucx.useSecret(communicatorSecret);    // 32 bytes; every control notice proves it
 * SendConnection out = ucx.connectSend(next, channel, all[next]);
 * RecvConnection in = ucx.connectRecv(prev, channel, all[prev]);
 * ucx.awaitPeersProven(System.nanoTime() + timeoutNanos);
 * proxy.setOwnedPoller(ucx::poll, ucx.idleWait()); ucx.onProxy(proxy::execute);
 * }</pre>
 *
 * <p>UCX's own variables ({@code UCX_TLS}, {@code UCX_NET_DEVICES}, ...) are read by UCX itself.
 */
public final class UcxTransport implements AutoCloseable {
  private static final Logger LOG = EngineLog.logger(UcxTransport.class);

  /** What to do when UCX does not load. */
  public static final String INSTALL_HINT =
      "install UCX with `sudo apt-get install libucx0 ucx-utils` (bin/setup does it), or set"
          + " transport=socket";

  private static final long CLOSE_WAIT_NANOS = 1_000_000_000L;

  /**
   * How long the idle proxy parks while announcements wait for room in the predecessor's board (the
   * predecessor is a whole board behind), unless signalled: room comes when the predecessor reads,
   * which its idle proxy does every {@link #ANNOUNCEMENT_FLOW_LOOK_NANOS}, so looking more often
   * finds nothing. A leaf whose kernel sends its reduce's data itself leaves its proxy idle while
   * it runs thousands of calls ahead, so the board fills; a look every 100 us then woke its proxy
   * and socket watcher 10,000 times a second, each followed by the brief spin of a proxy that found
   * work.
   */
  private static final long BLOCKED_PARK_NANOS = 1_000_000L;

  /**
   * How often an idle proxy looks at its announcement board and writes the announcements queued
   * meanwhile: a successor's announcement lands by a put, which does not end the worker's wait, and
   * a mismatch only it reveals must still fail this rank while it calls nothing (a rank that only
   * waits, a pause between calls); a launch queues its announcement without waking the proxy.
   */
  private static final long ANNOUNCEMENT_LOOK_NANOS = 10_000_000L;

  /**
   * The same while announcements move (within the last {@link #ANNOUNCEMENT_LOOK_NANOS}): a leaf of
   * 8 B reduces announces a call every 5-20 us, so a look every 10 ms would find the board's {@link
   * UcxLayout#CALL_SLOTS} slots full and the writer waiting for room; a look every millisecond
   * finds at most a fifth of them written.
   */
  private static final long ANNOUNCEMENT_FLOW_LOOK_NANOS = 1_000_000L;

  /**
   * Entries of UCX's shared-memory FIFO (UCX's default: 64). Between ranks of one host UCX 1.13 has
   * no transport for one-sided puts into registered memory and emulates each put of up to 8 KiB as
   * a message that the target acknowledges with another; a FIFO that is full holds those
   * acknowledgements back in UCX's pending queue. When a rank closes after a failure while its peer
   * has stopped reading, they are still pending, and destroying the worker with them crashed the
   * process in UCX's clean-up. 256 entries cost about 50 KB more shared memory per rank and
   * communicator (512 would cost 8 MB); {@code docs/reliability.md} has the runs behind the number.
   */
  private static final String MM_FIFO_SIZE = "256";

  private static final AtomicLong LIVE = new AtomicLong();
  private static volatile String unavailable;

  private final int rank;
  private final int qps;
  private final int stepSize;
  private final UcpContext context;
  private final UcpWorker worker;
  private final ControlInbox inbox;
  private final UcpMemory[] sendSlots;
  private final UcpMemory[] recvSlots;
  private final UcpMemory[] sideMemory;
  private final ByteBuffer[] sides;
  private final List<UcxConnection> connections = new ArrayList<>();

  /** Connections whose peer closed and has not been answered yet. Proxy thread only. */
  private final ArrayDeque<UcxConnection> closesToAnswer = new ArrayDeque<>();

  /**
   * Channel 0's ends, which carry the mismatch check's announcements ({@link AnnouncementWriter}):
   * the receiving end writes this rank's into its predecessor's board, the sending end reads its
   * successor's from this rank's. Null until connected.
   */
  private volatile UcxRecvConnection announcer;

  private volatile UcxSendConnection announcee;

  /** Whether the communicator checks its calls (key {@code checkCalls}): else nothing announces. */
  private volatile boolean callsChecked = true;

  private volatile Executor onProxy = Runnable::run;
  private byte[] secret;
  private RuntimeException raised;

  /** Held while the worker may be signalled from another thread, and while it is closed. */
  private final Object workerLife = new Object();

  private volatile boolean closed;

  /** Whether an endpoint's peer did not answer at close, so that the worker releases it. */
  private boolean abandoned;

  /** Whether this rank announced a call over UCX, so its peers did too (see {@link #close}). */
  private volatile boolean announced;

  /**
   * When a pass last read or wrote an announcement ({@link System#nanoTime}); written by the proxy
   * thread, read by its socket watcher for the wait's period.
   */
  private volatile long lastAnnouncementNanos = System.nanoTime() - ANNOUNCEMENT_LOOK_NANOS;

  private UcxTransport(int rank, int qps, int stepSize, UcpContext context, int nChannels) {
    this.rank = rank;
    this.qps = qps;
    this.stepSize = stepSize;
    this.context = context;
    this.sendSlots = new UcpMemory[nChannels];
    this.recvSlots = new UcpMemory[nChannels];
    this.sideMemory = new UcpMemory[nChannels];
    this.sides = new ByteBuffer[nChannels];
    // Single-threaded worker: the proxy thread is its only user.
    this.worker = context.newWorker(new UcpWorkerParams());
    LIVE.incrementAndGet();
    this.inbox = new ControlInbox(rank, worker);
  }

  /**
   * Loads UCX, opens a context and a worker, and registers every channel's FIFO slots and side
   * area.
   *
   * @throws UcxUnavailableException when the UCX libraries do not load here
   */
  public static UcxTransport open(int rank, int qps, Fifo[] sendFifos, Fifo[] recvFifos) {
    UcpContext context = newContext();
    UcxTransport t;
    try {
      t = new UcxTransport(rank, qps, sendFifos[0].stepSize(), context, sendFifos.length);
    } catch (RuntimeException e) {
      context.close();
      LIVE.decrementAndGet();
      throw new CclException("rank " + rank + ": cannot create a UCX worker: " + e, e);
    }
    try {
      for (int c = 0; c < sendFifos.length; c++) {
        t.sendSlots[c] = t.register(sendFifos[c].region());
        t.recvSlots[c] = t.register(recvFifos[c].region());
        t.sides[c] = DirectMemory.allocate(UcxLayout.BYTES);
        t.sideMemory[c] = t.register(t.sides[c]);
      }
      t.inbox.poll(); // posts the control receive
      return t;
    } catch (RuntimeException e) {
      t.close();
      throw e instanceof CclException
          ? e
          : new CclException("rank " + rank + ": registering memory with UCX failed: " + e, e);
    }
  }

  /**
   * Loads UCX and opens and closes one context, so a process can pay UCX's one-time start-up (the
   * executor log's "UCX started in N ms": 16-23 ms on the local cluster) before its first
   * communicator; the Spark executor plugin calls it at boot.
   *
   * @return null when UCX works here, else why not
   */
  public static String warmUp() {
    try {
      UcpContext c = newContext();
      c.close();
      LIVE.decrementAndGet();
      return null;
    } catch (UcxUnavailableException e) {
      return e.getMessage();
    }
  }

  /** Whether the memory-hook warning was given (once per process). */
  private static final AtomicBoolean SAID_MEMORY_HOOKS = new AtomicBoolean();

  private static UcpContext newContext() {
    String reason = unavailable;
    if (reason != null) {
      throw new UcxUnavailableException(reason);
    }
    warnOfMemoryHooks(System.getenv("UCX_MEM_EVENTS"));
    try {
      UcpContext c =
          new UcpContext(
              withFifoSize(
                  new UcpParams().requestRmaFeature().requestTagFeature().requestWakeupFeature()));
      LIVE.incrementAndGet();
      return c;
    } catch (LinkageError | RuntimeException e) {
      // A library that failed to load fails the same way every time: remember why.
      unavailable = "UCX native libraries did not load (" + e + ")";
      throw new UcxUnavailableException(unavailable);
    }
  }

  /**
   * Unless {@code UCX_MEM_EVENTS} is set, a UCX context patches the process's {@code mmap}, {@code
   * munmap}, {@code madvise} and {@code brk} in place (its "bistro" hooks) while the JVM's own
   * threads run them, and dispatches memory events from inside those calls. Two JVMs crashed with a
   * damaged native heap in this project's tests with the hooks installed and none is known without;
   * the engine registers its memory itself and needs no memory events. The variable must be set
   * before the JVM starts, so this can only say so.
   */
  private static void warnOfMemoryHooks(String memEvents) {
    if (memEvents == null && SAID_MEMORY_HOOKS.compareAndSet(false, true)) {
      LOG.warn(
          "UCX_MEM_EVENTS is not set, so UCX patches this JVM's mmap/munmap/madvise/brk in place;"
              + " set UCX_MEM_EVENTS=no in the environment of every JVM that uses UCX (Spark:"
              + " spark.executorEnv.UCX_MEM_EVENTS=no, and the driver's environment in local"
              + " mode). docs/reliability.md says why.");
    }
  }

  /**
   * UCX's shared-memory FIFO gets {@link #MM_FIFO_SIZE} entries unless the environment sets its
   * length ({@code UCX_MM_FIFO_SIZE}, {@code UCX_POSIX_FIFO_SIZE} or {@code UCX_SYSV_FIFO_SIZE}).
   */
  private static UcpParams withFifoSize(UcpParams params) {
    for (String v : List.of("UCX_MM_FIFO_SIZE", "UCX_POSIX_FIFO_SIZE", "UCX_SYSV_FIFO_SIZE")) {
      if (System.getenv(v) != null) {
        return params;
      }
    }
    return params.setConfig("MM_FIFO_SIZE", MM_FIFO_SIZE);
  }

  /** UCX objects (contexts, workers, endpoints, registrations, remote keys) not yet released. */
  public static long liveObjects() {
    return LIVE.get();
  }

  private UcpMemory register(ByteBuffer region) {
    UcpMemory m = context.registerMemory(region);
    LIVE.incrementAndGet();
    return m;
  }

  /** What peers need to reach this rank: {@link UcxRankInfo} bytes, for the bootstrap. */
  public byte[] localInfo() {
    ByteBuffer address = worker.getAddress();
    byte[] a = new byte[address.remaining()];
    address.get(a);
    UcxRankInfo.Region[] slots = new UcxRankInfo.Region[recvSlots.length];
    UcxRankInfo.Region[] side = new UcxRankInfo.Region[recvSlots.length];
    for (int c = 0; c < recvSlots.length; c++) {
      slots[c] = region(recvSlots[c]);
      side[c] = region(sideMemory[c]);
    }
    return new UcxRankInfo(a, slots, side).encode();
  }

  private static UcxRankInfo.Region region(UcpMemory m) {
    ByteBuffer k = m.getRemoteKeyBuffer();
    byte[] rkey = new byte[k.remaining()];
    k.get(rkey);
    return new UcxRankInfo.Region(m.getAddress(), rkey);
  }

  /**
   * Sets the communicator's secret, which every connection's notices prove; call before connecting.
   *
   * @throws IllegalArgumentException when it is not {@link ChallengeResponse#SECRET_BYTES} long
   */
  public void useSecret(byte[] secret) {
    if (secret == null || secret.length != ChallengeResponse.SECRET_BYTES) {
      throw new IllegalArgumentException(
          "a UCX secret of "
              + (secret == null ? "null" : secret.length + " bytes")
              + "; expected "
              + ChallengeResponse.SECRET_BYTES);
    }
    this.secret = secret.clone();
  }

  byte[] secret() {
    if (secret == null) {
      throw new IllegalStateException("rank " + rank + ": UCX connects only after useSecret");
    }
    return secret;
  }

  /** UCX control notices refused in this process so far (forged, malformed or replayed). */
  public static long refusedNotices() {
    return ControlInbox.refused();
  }

  /**
   * Waits until the peer of every connection made so far has proven the communicator's secret with
   * a signed notice; progresses the worker on the calling thread, so call it after connecting and
   * before the proxy thread owns the worker. A peer with another secret, or a stranger at the
   * published address, never proves it: that fails at the deadline.
   *
   * @throws CclException naming the peers that did not prove it by {@code deadlineNanos}
   */
  public void awaitPeersProven(long deadlineNanos) {
    while (true) {
      List<String> missing = new ArrayList<>();
      for (UcxConnection c : connections) {
        if (!c.provenBothWays()) {
          missing.add(c.toString());
        }
      }
      if (missing.isEmpty()) {
        return;
      }
      if (System.nanoTime() - deadlineNanos > 0) {
        throw new CclException(
            "rank "
                + rank
                + ": the peer did not prove this communicator's secret over UCX in time: "
                + missing
                + " (a rank with another secret, or a stranger at its published address)");
      }
      try {
        worker.progress();
      } catch (Exception e) {
        throw new CclException("rank " + rank + ": UCX progress failed: " + e, e);
      }
      inbox.poll();
      RuntimeException r = raised;
      if (r != null) {
        raised = null;
        throw r;
      }
    }
  }

  /** Where other threads' UCX work goes: the proxy thread's task queue. */
  public void onProxy(Executor proxyExecutor) {
    this.onProxy = proxyExecutor;
  }

  Executor proxyExecutor() {
    return onProxy;
  }

  /** The sending end of channel {@code channel} to rank {@code peer}, whose info is given. */
  public SendConnection connectSend(int peer, int channel, byte[] peerInfo) {
    UcxRankInfo info = UcxRankInfo.decode(peerInfo, peer);
    String what = "rank " + rank + " -> rank " + peer + " (channel " + channel + ", ucx)";
    UcxSendConnection c =
        new UcxSendConnection(this, what, peer, channel, qps, info, sendSlots[channel]);
    add(c, ControlInbox.route(peer, channel, true));
    if (channel == 0) {
      announcee = c;
    }
    return c;
  }

  /** The receiving end of channel {@code channel} from rank {@code peer}. */
  public RecvConnection connectRecv(int peer, int channel, byte[] peerInfo) {
    UcxRankInfo info = UcxRankInfo.decode(peerInfo, peer);
    String what = "rank " + rank + " <- rank " + peer + " (channel " + channel + ", ucx)";
    UcxRecvConnection c =
        new UcxRecvConnection(this, what, peer, channel, qps, info, recvSlots[channel], stepSize);
    add(c, ControlInbox.route(peer, channel, false));
    if (channel == 0) {
      announcer = c;
    }
    return c;
  }

  private void add(UcxConnection c, long route) {
    connections.add(c);
    inbox.add(route, c);
    c.sendProof();
  }

  int rank() {
    return rank;
  }

  ByteBuffer side(int channel) {
    return sides[channel];
  }

  long sideAddress(int channel) {
    return sideMemory[channel].getAddress();
  }

  UcpEndpoint newEndpoint(byte[] workerAddress, String name, UcxConnection owner) {
    ByteBuffer address = ByteBuffer.allocateDirect(workerAddress.length).put(workerAddress);
    address.flip();
    try {
      UcpEndpoint ep =
          worker.newEndpoint(
              new UcpEndpointParams()
                  .setUcpAddress(address)
                  .setName(name)
                  .setErrorHandler((e, status, message) -> owner.onEndpointError(status, message)));
      LIVE.incrementAndGet();
      return ep;
    } catch (RuntimeException e) {
      throw new CclException(name + ": cannot create a UCX endpoint: " + e, e);
    }
  }

  UcpRemoteKey unpack(UcpEndpoint ep, UcxRankInfo.Region region, String what) {
    ByteBuffer packed = ByteBuffer.allocateDirect(region.rkey().length).put(region.rkey());
    packed.flip();
    try {
      UcpRemoteKey k = ep.unpackRemoteKey(packed);
      LIVE.incrementAndGet();
      return k;
    } catch (RuntimeException e) {
      throw new CclException(what + ": the peer's remote key failed to unpack: " + e, e);
    }
  }

  /**
   * Progresses the worker (proxy thread only); delivers notices; reads and writes announcements;
   * throws the first failure a callback reported. Returns whether anything but announcements
   * happened.
   */
  public boolean poll() {
    if (closed) {
      return false;
    }
    boolean any = false;
    for (int i = 0; i < 64; i++) {
      int events;
      try {
        events = worker.progress();
      } catch (Exception e) {
        throw new CclException("rank " + rank + ": UCX progress failed: " + e, e);
      }
      if (events == 0) {
        break;
      }
      any = true;
    }
    any |= inbox.poll();
    for (UcxConnection c; (c = closesToAnswer.poll()) != null; ) {
      c.acknowledgeClose();
    }
    RuntimeException r = raised;
    if (r != null) {
      raised = null;
      throw r;
    }
    boolean moved = callsChecked && announcee != null && announcee.readAnnouncements();
    if (announcer != null && announcer.announcementsDue()) {
      moved |= announcer.writeAnnouncements();
    }
    if (moved) {
      lastAnnouncementNanos = System.nanoTime();
    }
    // Announcements moved are not activity: a look at the period's end that only moved them goes
    // back to the wait at once, as one that found nothing does, not through the idle back-off
    // (spin, then yield for idle.yieldUs). With a look every 1 ms while they flow, that back-off
    // would yield for up to 200 us (the default idle.yieldUs) of every millisecond.
    return any;
  }

  /**
   * Flushes {@code endpoint} before a notice goes out on it, so that what this end put earlier has
   * landed when the peer acts on the notice; at most {@link #CLOSE_WAIT_NANOS}. Proxy thread only.
   */
  void flushBeforeNotice(UcpEndpoint endpoint, String description) {
    Completion done = new Completion();
    try {
      UcpRequest r = endpoint.flushNonBlocking(done);
      if (!progressUntilAll(new UcpRequest[] {r}) || done.error() != null) {
        LOG.debug("rank {}: {}: flush before a notice did not finish", rank, description);
      }
    } catch (RuntimeException e) {
      LOG.debug("rank {}: {}: flush before a notice: {}", rank, description, e.toString());
    }
  }

  /**
   * How the idle proxy waits: {@code ucp_worker_wait} arms the worker and blocks on its event file
   * descriptor until a message (a peer's notice) arrives or another thread calls {@code
   * ucp_worker_signal}, which UCX allows from any thread. Incoming puts raise no event: the proxy
   * waits so only while it has no operations, so no put it needs can land unseen, except the
   * successor's announcements: for those, and for this rank's own announcements, which a launch
   * queues without a signal, the wait ends every {@link #ANNOUNCEMENT_LOOK_NANOS} ({@link
   * #ANNOUNCEMENT_FLOW_LOOK_NANOS} while they move). Announcements waiting for room in the
   * predecessor's board wait for such a put, so then the proxy only parks, until signalled or for
   * {@link #BLOCKED_PARK_NANOS}, and looks again. Without the check ({@link #checkCalls}) nothing
   * is announced, and the wait has no period.
   */
  public OwnedWait idleWait() {
    return new OwnedWait() {
      /** Signals for work or sockets, and ticks of the period, so far; any thread. */
      private final AtomicLong signals = new AtomicLong();

      private final AtomicLong ticks = new AtomicLong();
      private boolean endedByTick;
      private boolean tickEndedLast;

      /** {@link #signals} and {@link #ticks} when the last wait returned; proxy thread only. */
      private long signalsSeen;

      private long ticksSeen;

      /** The proxy thread while it parks for room in the board: {@link #signal} unparks it. */
      private volatile Thread parkedForRoom;

      @Override
      public void await() {
        endedByTick = false;
        if (closed) {
          return;
        }
        // Counted from the last wait's return, before the proxy's last look for news: a kernel
        // that queues work after that look signals after it too. Counting from here instead lost
        // such a signal when it came between the look and this line and the first wait read it.
        long signalled = signalsSeen;
        long ticked = ticksSeen;
        if (announcer != null && announcer.announcementsBlocked()) {
          awaitRoom(signalled);
          return;
        }
        worker.waitForEvents();
        if (tickEndedLast && signals.get() == signalled && ticks.get() == ticked) {
          // The wait returned at once on the signal of the tick that ended the last one (UCX's
          // signal outlives the wait it ends), and the pass and back-off after that cost an idle
          // proxy 2-4% of a core. Nothing was signalled since the last look for news, so whatever
          // signals from now on ends this second wait.
          worker.waitForEvents();
        }
        signalsSeen = signals.get();
        ticksSeen = ticks.get();
        tickEndedLast = signalsSeen == signalled && ticksSeen != ticked;
        // skipping the back-off is safe whatever ended the wait: the proxy looks for news first
        endedByTick = periodNanos() > 0 && signalsSeen == signalled;
      }

      /**
       * Parks until signalled or {@link #BLOCKED_PARK_NANOS}: the worker's wait would not end when
       * the predecessor's count of what it read lands, a put. One that no signal ended is a
       * periodic look, as one a tick ends, so the proxy goes back to waiting without its spin.
       */
      private void awaitRoom(long signalled) {
        parkedForRoom = Thread.currentThread();
        try {
          // a signal after this read unparks the thread, or its permit ends the park at once
          if (signals.get() == signalled) {
            LockSupport.parkNanos(this, BLOCKED_PARK_NANOS);
          }
        } finally {
          parkedForRoom = null;
        }
        signalsSeen = signals.get();
        endedByTick = signalsSeen == signalled;
      }

      @Override
      public boolean endedByTick() {
        return endedByTick;
      }

      @Override
      public void tick() {
        ticks.incrementAndGet();
        wake();
      }

      @Override
      public long periodNanos() {
        if (!callsChecked || (announcee == null && announcer == null)) {
          return 0;
        }
        return System.nanoTime() - lastAnnouncementNanos < ANNOUNCEMENT_LOOK_NANOS
            ? ANNOUNCEMENT_FLOW_LOOK_NANOS
            : ANNOUNCEMENT_LOOK_NANOS;
      }

      @Override
      public void signal() {
        signals.incrementAndGet();
        Thread parked = parkedForRoom;
        if (parked != null) {
          LockSupport.unpark(parked);
        }
        wake();
      }

      private void wake() {
        // never into a worker that close() is destroying
        synchronized (workerLife) {
          if (!closed) {
            worker.signal();
          }
        }
      }
    };
  }

  /**
   * Whether the communicator checks its calls (key {@code checkCalls}; true until told): without
   * the check no rank announces, so the proxy neither reads the announcement board nor ends its
   * idle wait to look at it. Call before the proxy owns the worker.
   */
  public void checkCalls(boolean checked) {
    this.callsChecked = checked;
  }

  /**
   * {@code c}'s peer closed; {@link #poll()} answers it ({@link UcxConnection#acknowledgeClose}).
   */
  void answerClose(UcxConnection c) {
    closesToAnswer.add(c);
  }

  /** A callback found a failure; {@link #poll()} throws it once progress returns. */
  void raise(RuntimeException e) {
    if (raised == null) {
      raised = e;
    }
  }

  /**
   * Closes endpoints, all at once under one deadline. Each is flushed, so that nothing is pending
   * on it when the worker goes: UCX 1.13 can crash destroying a worker with operations pending, and
   * acknowledgements of emulated puts travel on these endpoints too. Waiting for all of them
   * together bounds the wait for dead peers by {@link #CLOSE_WAIT_NANOS}, whatever their number,
   * and gives every endpoint of a live peer that whole time.
   *
   * <p>Without a failure, endpoints that flushed are then closed with a flush. After a failure none
   * is: a close with a flush that does not finish in time (a peer that stopped reading, or puts
   * still arriving) stays outstanding, and UCX 1.13 aborts the process when the worker is destroyed
   * with one ({@code ucp_ep.c:382 Assertion 'req->flags & UCP_REQUEST_FLAG_RELEASED'}); the
   * worker's destruction releases those endpoints, and those whose flush failed or did not finish
   * (a force close would need UCX's peer error handling mode, which slowed puts here).
   *
   * @param afterFailure leave every endpoint to the worker's destruction once flushed
   */
  void closeEndpoints(List<UcpEndpoint> endpoints, boolean afterFailure) {
    int n = endpoints.size();
    if (n == 0) {
      return;
    }
    UcpRequest[] requests = new UcpRequest[n];
    Completion[] flushes = new Completion[n];
    for (int i = 0; i < n; i++) {
      flushes[i] = new Completion();
      try {
        requests[i] = endpoints.get(i).flushNonBlocking(flushes[i]);
      } catch (RuntimeException e) {
        // no request and a completion never done: counted as not flushed below
        LOG.debug("rank {}: flushing a UCX endpoint: {}", rank, e.toString());
      }
    }
    progressUntilAll(requests);
    for (int i = 0; i < n; i++) {
      // A flush that ended in an error did not flush: a close with a flush would never finish
      // after it, and destroying the worker with that close outstanding aborts the process.
      boolean flushed = flushes[i].isDone(requests[i]) && flushes[i].error() == null;
      requests[i] = null;
      if (flushed && !afterFailure) {
        try {
          requests[i] = endpoints.get(i).closeNonBlockingFlush();
        } catch (RuntimeException e) {
          LOG.debug("rank {}: closing a UCX endpoint: {}", rank, e.toString());
        }
      }
      abandoned |= !flushed;
    }
    abandoned |= !progressUntilAll(requests);
    LIVE.addAndGet(-n);
  }

  /** Progresses the worker until every request completes, at most {@link #CLOSE_WAIT_NANOS}. */
  private boolean progressUntilAll(UcpRequest[] requests) {
    long end = System.nanoTime() + CLOSE_WAIT_NANOS;
    try {
      while (true) {
        boolean all = true;
        for (UcpRequest r : requests) {
          all &= r == null || r.isCompleted();
        }
        if (all) {
          return true;
        }
        if (System.nanoTime() > end) {
          return false;
        }
        worker.progress();
      }
    } catch (Exception e) {
      LOG.debug("rank {}: progress at close: {}", rank, e.toString());
      return false;
    }
  }

  /**
   * Progresses the worker and reads notices until no connection is one {@code waitingFor} holds,
   * for at most {@link #CLOSE_WAIT_NANOS}. {@link #close} waits so for the peer of every
   * connection, sender and receiver, to say it stopped, so that no put lands in slots or side areas
   * this rank is about to free (ranks that are threads of one JVM share the address space;
   * shared-memory puts are plain copies): a peer learns of a failure or a close from this rank's
   * notice and answers with its own; a dead peer answers nothing and writes nothing. Waiting for
   * senders alone, after failures only, was not enough: a receiver slow to start, or running a call
   * the closed rank never joined, posted its entries into the side area of a sender that had freed
   * it, and the process died with its heap damaged (docs/reliability.md).
   */
  private void awaitPeers(Predicate<UcxConnection> waitingFor, String who) {
    long end = System.nanoTime() + CLOSE_WAIT_NANOS;
    try {
      while (System.nanoTime() < end) {
        boolean all = true;
        for (UcxConnection c : connections) {
          all &= !waitingFor.test(c);
        }
        if (all) {
          return;
        }
        worker.progress();
        inbox.poll();
      }
      LOG.debug("rank {}: {} did not confirm it stopped within 1 s", rank, who);
    } catch (Exception e) {
      LOG.debug("rank {}: waiting for {} to stop: {}", rank, who, e.toString());
    }
  }

  /** Takes the notices still queued (peers' close notices), so UCX has none unmatched at close. */
  private void drainNotices() {
    try {
      for (int i = 0; i < 16; i++) {
        worker.progress();
        inbox.poll();
      }
    } catch (Exception e) {
      LOG.debug("rank {}: draining notices at close: {}", rank, e.toString());
    }
  }

  void release(UcpRemoteKey key) {
    if (key != null) {
      LIVE.decrementAndGet();
      key.close();
    }
  }

  void release(UcpMemory memory) {
    if (memory != null) {
      LIVE.decrementAndGet();
      memory.deregister();
    }
  }

  /** This rank announced a call over UCX (see {@link #close}). Any thread. */
  void noteAnnounced() {
    if (!announced) {
      announced = true; // once: a launch should not store to a shared line every call
    }
  }

  void logDebug(String message) {
    LOG.debug("rank {}: {}", rank, message);
  }

  /**
   * Releases everything: connections, registrations, side areas, the worker and the context. Call
   * once the proxy thread has stopped and before any FIFO is freed: once the worker is gone nothing
   * in this process writes into the registered slots any more (UCX may emulate a put on shared
   * memory by a copy the target's own worker makes while it progresses). Idempotent.
   *
   * <p>First it waits (bounded) for the peer of every connection to say it stopped or, after a
   * normal close, that it saw this rank close ({@link UcxConnection#peerStopped}): a peer still
   * running (one that launches a call this rank never joins) would otherwise post its entries into
   * a side area freed under it.
   *
   * @param afterFailure whether the communicator failed (peers were told so, not that it closed)
   */
  public void close(boolean afterFailure) {
    if (closed) {
      return;
    }
    if (afterFailure) {
      awaitPeers(c -> !c.peerStopped(), "a peer");
    } else {
      // A rank whose calls run ahead (a broadcast's root) announces thousands of them, by puts
      // into this rank's board; when they were notices, a peer whose flush of them did not finish
      // before this worker went crashed inside UCX when it destroyed its own (docs/reliability.md).
      // So this worker stays until each peer that may announce here (peerMaySendNotices) said it
      // closed: its close notice goes once its puts have landed (UcxRecvConnection.notifyPeer).
      boolean announcing = announced;
      awaitPeers(
          c ->
              !c.peerStopped()
                  || (c instanceof UcxSendConnection s && s.peerMaySendNotices(announcing)),
          "a peer or an announcer");
    }
    List<UcpEndpoint> endpoints = new ArrayList<>();
    for (UcxConnection c : connections) {
      endpoints.addAll(c.release());
    }
    closeEndpoints(endpoints, afterFailure);
    drainNotices();
    inbox.close();
    try {
      for (int i = 0; i < 16; i++) {
        worker.progress(); // completes the cancelled receive, so UCX can free it
      }
    } catch (Exception e) {
      LOG.debug("rank {}: progress at close: {}", rank, e.toString());
    }
    synchronized (workerLife) {
      closed = true;
    }
    // The worker goes first: the registrations outlive everything that could still use them.
    if (abandoned) {
      LOG.warn(
          "rank {}: a UCX peer did not answer at close within 1 s (did its process die or close"
              + " first?): the worker's destruction releases its endpoints",
          rank);
    }
    worker.close();
    LIVE.decrementAndGet();
    for (int c = 0; c < sides.length; c++) {
      release(sendSlots[c]);
      release(recvSlots[c]);
      release(sideMemory[c]);
      sendSlots[c] = null;
      recvSlots[c] = null;
      sideMemory[c] = null;
      if (sides[c] != null) {
        DirectMemory.free(sides[c]);
        sides[c] = null;
      }
    }
    context.close();
    LIVE.decrementAndGet();
  }

  /** {@link #close(boolean)} as after a failure: endpoints are flushed, not closed. */
  @Override
  public void close() {
    close(true);
  }
}
