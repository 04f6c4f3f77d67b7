package org.sparkccl.proxy;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import org.apache.logging.log4j.Logger;
import org.sparkccl.CclException;
import org.sparkccl.CclMismatchException;
import org.sparkccl.CclRemoteException;
import org.sparkccl.CclTimeoutException;
import org.sparkccl.idle.IdleStrategies;
import org.sparkccl.idle.IdleStrategy;
import org.sparkccl.util.EngineLog;

/**
 * The persistent proxy thread, as NCCL's ({@code ncclProxyCreate}). Created with the communicator;
 * walks a linked list of operations calling each one's non-blocking {@code progress}; unlinks
 * finished ones, replacing each by its {@code nextPeer} when it has one.
 *
 * <p>Waiting, as its two {@link IdleStrategy}s say: with no operations it blocks in {@link
 * Selector#select()}, which costs no CPU. With operations that cannot move it spins a little,
 * yields, then waits in the selector on the sockets its connections registered, with a short
 * timeout as a guard (in spin mode it only polls the selector). Every wake-up source (submission, a
 * kernel publishing or freeing a slot, a helper thread finishing a chunk) calls {@link #wake()},
 * which raises news the spinning proxy looks for and, while the proxy blocks, calls {@link
 * Selector#wakeup()}, whose contract makes the next or current select return: a wake-up can never
 * be lost. Work that no operation touches (socket announcements written, a ring connection's
 * notices read) runs between passes, without the lock that passes and assisting kernels share.
 *
 * <p>A transport that needs its own progress (UCX: the worker) installs a {@link #setOwnedPoller
 * poller}. The proxy thread then owns every call into that transport: it polls once per pass and
 * runs the tasks other threads {@link #execute} to it. Operations on that transport ({@link
 * ProxyOp#needsTransportOwner}) move on this thread only: kernels assist ({@link #assist()}) only
 * while none is queued or linked, and skip one they find linked; the rest (sockets, shared memory)
 * they move as they do without an owned transport. Incoming one-sided puts raise no event, so while
 * operations are linked the thread polls: it spins, yields, then sleeps 20 us at a time. With none
 * it blocks in the transport's {@link OwnedWait} (UCX: the worker armed, waiting on its event file
 * descriptor), which a peer's notice ends at once and which {@link #wake()} ends with a signal;
 * meanwhile a {@link SocketWatcher} selects on its sockets (point-to-point links, the peer
 * listener) and ends the wait when one is ready. Nothing waits on a timeout.
 */
public final class ProxyThread implements AutoCloseable {
  private static final Logger LOG = EngineLog.logger(ProxyThread.class);

  /** Spins of a proxy with operations: half an idle wait's, since each of its passes is longer. */
  private static final int SPINS = 32;

  /** Spins of a proxy without operations before it yields, as every caller's brief wait. */
  private static final int EMPTY_SPINS = 64;

  /** While yielding, a busy proxy checks its sockets without blocking every so many passes. */
  private static final int POLL_EVERY = 64;

  private static final long BUSY_SELECT_MS = 1;

  /** Back-off sleep of a proxy that owns a transport and has operations in flight. */
  private static final long OWNED_BUSY_PARK_NANOS = 20_000;

  private final Selector selector;
  private final Thread thread;
  private final Consumer<RuntimeException> onError;
  private final IdleStrategy busyIdle;
  private final IdleStrategy emptyIdle;

  /**
   * The operations, by lane: each lane has its own list, queue and progress lock, so that the
   * kernels of several channels each move their own channel's operations at once (a lane per
   * channel), where one lock made every socket read and write of a rank wait for one another. The
   * proxy thread's own passes, and everything outside operations (tasks, the owned transport's
   * poll, ready sockets, {@link #runExclusive}), hold every lane's lock.
   */
  private final Lane[] lanes;

  /** One lane's operations ({@link #lanes}). */
  private static final class Lane {
    final ReentrantLock lock = new ReentrantLock();
    final SubmittedOps submitted = new SubmittedOps();
    ProxyOp head;
  }

  private final ConcurrentLinkedQueue<Runnable> tasks = new ConcurrentLinkedQueue<>();

  /** Work that keeps its own lock, run between progress passes ({@link #executeOutsidePasses}). */
  private final ConcurrentLinkedQueue<Runnable> looseTasks = new ConcurrentLinkedQueue<>();

  /**
   * How long {@link #executeOutsidePassesLater} holds a task back: long enough that an 8 B
   * collective's announcements, one every 5-20 us, go out 50-200 to a system call; short against
   * any deadline that waits for them.
   */
  static final long LATER_NANOS = 1_000_000L;

  /** Tasks of {@link #executeOutsidePassesLater}, oldest (soonest due) first. */
  private final ConcurrentLinkedQueue<Deferred> deferred = new ConcurrentLinkedQueue<>();

  /** A task and when it is due ({@link System#nanoTime}). */
  private record Deferred(Runnable task, long dueNanos) {}

  private BooleanSupplier poller;
  private OwnedWait ownedWait;
  private SocketWatcher watcher;

  /** Whether the last wait in {@link #ownedWait} ended only because its period passed. */
  private boolean lookedOnly;

  /** Set while the proxy is, or is about to be, blocked in {@link #ownedWait}. */
  private volatile boolean waitingOwned;

  /**
   * Set while the proxy is, or is about to be, blocked in its selector (or has lent it to the
   * {@link SocketWatcher}): only then does {@link #wake()} write the selector's wake-up event. A
   * spinning proxy sees {@link #news} by itself, and the event was a system call on the waking
   * thread (a broadcast's root paid one per call to hand over its announcement) and another on the
   * proxy's next select, which clears it. Raised before the last look for news, read after the news
   * is raised: one of the two sees the other, so no wake-up is lost.
   */
  private volatile boolean blocking;

  /**
   * Raised by {@link #wake()}, lowered by the proxy thread before each pass: what the proxy's brief
   * idle spin looks for besides tasks. Not the queue itself: operations {@link #enqueue}d for a
   * kernel that assists are the kernel's to move until it wakes the proxy, and a proxy that took
   * them as soon as it saw them took the progress lock from that kernel, mostly to find nothing to
   * move (pass counts of 2 socket ranks at 8 B on a 2-core VM: docs/benchmarks.md).
   */
  private volatile boolean news;

  private volatile boolean stopping;
  private volatile boolean dropAll;

  /**
   * Operations submitted and not yet unlinked or dropped: a closing communicator waits for zero
   * before it closes its connections. Counted, not a flag the proxy raises after a pass that found
   * nothing linked: a kernel can enqueue and link an operation by {@link #assist()} between that
   * pass and the flag, and the close would then cut the connection under a send still in flight.
   */
  private final AtomicInteger outstanding = new AtomicInteger();

  /**
   * Of {@link #outstanding}, the operations only this thread may move ({@link
   * ProxyOp#needsTransportOwner}: UCX's, whose worker is this thread's alone). While there are
   * none, kernels assist a proxy that owns a transport as they assist any other, moving the socket
   * operations of trees and doubling themselves: through the proxy thread alone, 8 B reduces of 4
   * ranks over UCX, whose edges are sockets, took 1.6-2.2x the time they took with the socket
   * transport on a 2-core VM.
   */
  private final AtomicInteger ownerOps = new AtomicInteger();

  /** Made once: a method reference per idle wait would allocate on every one. */
  private final BooleanSupplier hasNews = this::hasNews;

  /**
   * Creates the thread (not started: connections register with {@link #selector()} first).
   *
   * @param name thread name
   * @param idling how the thread waits
   * @param onError told of the first failure of any operation, on the proxy thread or on a kernel
   *     thread whose assisting pass found it
   */
  public ProxyThread(String name, IdleStrategies idling, Consumer<RuntimeException> onError) {
    this(name, idling, onError, 1);
  }

  /**
   * As the constructor above, with {@code laneCount} lanes of operations ({@link #lanes}): an
   * operation {@link #enqueue(ProxyOp, int)}d on lane {@code l} moves in {@link #assist(int)
   * assist(l)} passes and the proxy thread's.
   */
  public ProxyThread(
      String name, IdleStrategies idling, Consumer<RuntimeException> onError, int laneCount) {
    if (laneCount < 1) {
      throw new IllegalArgumentException("laneCount=" + laneCount + ", expected >= 1");
    }
    this.lanes = new Lane[laneCount];
    for (int l = 0; l < laneCount; l++) {
      lanes[l] = new Lane();
    }
    try {
      this.selector = Selector.open();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot open a selector for the proxy thread", e);
    }
    this.onError = onError;
    this.busyIdle = idling.inFlight(SPINS);
    this.emptyIdle = idling.forNewWork(EMPTY_SPINS);
    this.thread = new Loop(this::loop, name);
    this.thread.setDaemon(true);
  }

  /** A proxy's own thread: its class tells it apart from the kernels that assist it. */
  private static final class Loop extends Thread {
    Loop(Runnable body, String name) {
      super(body, name);
    }
  }

  /**
   * Whether the calling thread is a proxy thread, not a kernel lending itself through {@link
   * #assist()}. Connections arm selector interest only on the proxy thread (see {@code
   * SocketConnection#interest}).
   */
  public static boolean onProxyThread() {
    return Thread.currentThread() instanceof Loop;
  }

  /** The selector connections register their sockets with, so readiness wakes the proxy. */
  public Selector selector() {
    return selector;
  }

  public void start() {
    if (watcher != null) {
      watcher.start();
    }
    thread.start();
  }

  /**
   * Makes this thread the owner of a transport's progress: {@code poll} (returns whether anything
   * happened) runs once per pass on this thread only, and an idle proxy blocks in {@code wait}.
   * Call before {@link #start()}.
   */
  public void setOwnedPoller(BooleanSupplier poll, OwnedWait wait) {
    this.poller = poll;
    this.ownedWait = wait;
    this.watcher = new SocketWatcher(selector, wait, thread.getName() + "-sockets");
  }

  /** Whether a transport's progress is owned by this thread (its tasks go through execute). */
  public boolean ownsTransport() {
    return poller != null;
  }

  /**
   * Whether operations that only this thread may move are queued or linked: a kernel then leaves
   * the pass to the proxy and wakes it, as it cannot move them.
   */
  public boolean ownerWorkPending() {
    return ownerOps.get() != 0;
  }

  /** Runs {@code task} on the proxy thread, in a progress pass, soon; any thread. */
  public void execute(Runnable task) {
    tasks.add(task);
    wake();
  }

  /**
   * Runs {@code task} on the proxy thread soon, between progress passes, without the progress lock
   * and without waking the proxy for its operations: for writes that keep their own lock (a socket
   * connection's announcement frames). Run inside a pass, each such write held the lock for a
   * system call; a kernel that assisted meanwhile found it taken and left its own sends to the
   * proxy, and an 8 B reduce's leaves, which announce every call, then had every data frame written
   * by the proxy thread too (profiles on the 16-core host, docs/benchmarks.md). A task that throws
   * fails the proxy's operations as one run in a pass does.
   */
  public void executeOutsidePasses(Runnable task) {
    looseTasks.add(task);
    rouse();
  }

  /**
   * Runs {@code task} as {@link #executeOutsidePasses} does, once {@link #LATER_NANOS} have passed:
   * for work that gains from waiting, such as announcements that the next launches join. Only a
   * proxy that blocks is woken, to shorten its wait to the task's time; a spinning one finds the
   * task on a later pass.
   */
  public void executeOutsidePassesLater(Runnable task) {
    deferred.add(new Deferred(task, System.nanoTime() + LATER_NANOS));
    rouse();
  }

  /** Queues an operation on lane 0; the proxy thread links it in. */
  public void submit(ProxyOp op) {
    count(op);
    lanes[0].submitted.push(op);
    wake();
  }

  /** {@link #enqueue(ProxyOp, int)} on lane 0. */
  public void enqueue(ProxyOp op) {
    enqueue(op, 0);
  }

  /**
   * Queues an operation on {@code lane} without waking the proxy thread: for callers whose kernel
   * will pick it up through {@link #assist(int)} or wake the proxy itself when it stops assisting.
   */
  public void enqueue(ProxyOp op, int lane) {
    count(op);
    lanes[lane].submitted.push(op);
  }

  private void count(ProxyOp op) {
    // before the push: a thread that sees the operation queued sees it counted
    if (op.needsTransportOwner()) {
      ownerOps.incrementAndGet();
    }
    outstanding.incrementAndGet();
  }

  /** An operation that was counted is unlinked or dropped. */
  private void retire(ProxyOp op) {
    outstanding.decrementAndGet();
    if (op.needsTransportOwner()) {
      ownerOps.decrementAndGet();
    }
  }

  /** Makes the proxy look at its operations again. */
  public void wake() {
    news = true;
    rouse();
  }

  /** Ends the proxy's blocking wait, if it is in one, so that it looks for news and tasks. */
  private void rouse() {
    if (blocking) {
      selector.wakeup();
    }
    if (waitingOwned) {
      ownedWait.signal();
    }
  }

  /**
   * Wakes the proxy if an operation is queued or linked. A kernel that ends its task, or parks,
   * calls this rather than {@link #wake()}: when its assists finished every operation there is
   * nothing for the proxy to do, and waking it anyway cost each small collective a wake-up (an
   * event-fd write, and an unpark when the woken proxy then blocked on the progress lock the next
   * collective's kernel held).
   */
  public void wakeIfBusy() {
    if (outstanding.get() != 0) {
      wake();
    }
  }

  /** True when no operation is queued or linked. */
  public boolean isIdle() {
    return outstanding.get() == 0;
  }

  /** Drops every operation (after a failure or an abort); the thread keeps running until close. */
  public void dropAll() {
    dropAll = true;
    wake();
  }

  private void loop() {
    int idleRounds = 0;
    // a wake-up seen while a kernel held the lock: the next pass still links what it queued
    boolean linkOwed = false;
    try {
      while (!stopping) {
        boolean empty;
        boolean moved;
        runLooseTasks();
        if (news) {
          // cleared only once seen: a wake-up between the read and the clear queued its
          // operations before it raised the flag, so the pass owed links them
          news = false;
          linkOwed = true;
        }
        if (!tryLockAll()) {
          if (!progressFreeLanes(linkOwed)) {
            awaitAssistingKernel();
          }
          continue;
        }
        try {
          if (dropAll) {
            dropAll = false;
            dropLinked();
            for (Lane lane : lanes) {
              for (ProxyOp op = lane.submitted.takeAll(); op != null; op = op.nextSubmitted) {
                retire(op);
              }
            }
          }
          boolean polled = runTasksAndPoll();
          if (linkOwed || anyLinked() || ownerWorkPending()) {
            // not on a pass that loose tasks or a ready socket began: what kernels enqueued is
            // theirs to move until they wake this thread (see news), but for operations only this
            // thread may move
            linkSubmitted();
            linkOwed = false;
          }
          empty = !anyLinked();
          moved = (!empty && progressAll()) || polled;
        } finally {
          unlockAll();
        }
        if (empty) {
          // a periodic look that found nothing goes back to waiting without the back-off: spinning
          // after each look cost an idle proxy over UCX 4% of a core at a look every 10 ms
          boolean quietLook = lookedOnly && !moved;
          lookedOnly = false;
          if (quietLook || !emptyIdle.awaitBriefly(hasNews)) {
            if (poller == null) {
              select(0);
            } else if (selectorFree()) {
              awaitOwned();
              lookedOnly = ownedWait.endedByTick();
            }
            dispatchReady();
          }
        } else if (moved) {
          busyIdle.reset();
          idleRounds = 0;
        } else if (busyIdle.idle(0)) {
          busyWait();
        } else if (++idleRounds % POLL_EVERY == 0 && selectorFree()) {
          selector.selectNow();
          dispatchReady();
        }
      }
      // last notices (a normal close) go out before the thread ends
      runDeferred(true);
      runLooseTasks();
      lockAll();
      try {
        runTasksAndPoll();
      } finally {
        unlockAll();
      }
    } catch (IOException | RuntimeException e) {
      LOG.error("proxy thread {} failed", thread.getName(), e);
      onError.accept(new IllegalStateException("proxy thread failed: " + e, e));
    } finally {
      if (watcher != null) {
        watcher.stop();
      }
      // the thread closes its own selector: a close() that stopped waiting (interrupted, or past
      // its deadline) must not pull the selector from under a thread that is still in select
      closeSelector();
    }
  }

  /**
   * With several lanes, while a kernel holds one: a pass over the lanes no kernel holds now,
   * linking what they queued under the same rule as a full pass. A channel whose kernel has ended
   * its task can leave its last sends to the proxy while the calling thread still moves channel 0's
   * operations; a proxy that moved nothing until it held every lane at once left those sends for as
   * long as channel 0's kernel held its lock pass after pass ({@code ProxyLanesTest}). It was not
   * what made two-channel calls wait milliseconds without the proxy's brief spin: those waits
   * remained (docs/benchmarks.md, "Two channels after the proxy's free-lane passes..."), and they
   * remained too where the proxy parked instead of selecting while kernels held its lanes ("A proxy
   * that parks while kernels hold its lanes..."): their cause is not known. Returns whether
   * anything moved.
   */
  private boolean progressFreeLanes(boolean linkOwed) {
    if (lanes.length == 1 || dropAll) {
      return false;
    }
    boolean moved = false;
    for (Lane lane : lanes) {
      moved |= passOver(lane, linkOwed, false);
    }
    return moved;
  }

  /**
   * One pass over {@code lane} if no other thread holds it: links its submissions where {@code
   * linkOwed} or it has operations linked already (the rule of a full pass), moves its operations,
   * and reports a failure once the lane is let go ({@link PassFailure}). Returns whether anything
   * moved; false where another thread holds the lane.
   */
  private boolean passOver(Lane lane, boolean linkOwed, boolean byKernel) {
    if (!lane.lock.tryLock()) {
      return false;
    }
    RuntimeException failure;
    try {
      if (linkOwed || lane.head != null) {
        link(lane);
      }
      return lane.head != null && progress(lane, byKernel);
    } catch (PassFailure f) {
      failure = f.failure;
    } finally {
      lane.lock.unlock();
    }
    onError.accept(failure);
    return true;
  }

  /**
   * Another thread is in a progress pass: a kernel assisting (or a {@link #runExclusive} action).
   * The kernel moves the operations while it waits and wakes this thread when it stops with work
   * left, so the proxy waits for a wake-up (or 1 ms) instead of queueing on the lock: a proxy
   * queued there was unparked at the end of nearly every pass the kernel made (2 rank processes
   * over sockets, spinning: about 6 proxy passes per 8 B allReduce, each behind one of the
   * kernel's, almost none of them moving anything).
   */
  private void awaitAssistingKernel() throws IOException {
    if (ownerWorkPending()) {
      // the kernel's pass skips this thread's operations and ends soon (it began before they were
      // counted): take the lock once it is free, without a wake-up's delay
      Thread.onSpinWait();
      return;
    }
    if (emptyIdle.awaitBriefly(hasNews)) {
      return;
    }
    if (selectorFree()) {
      select(BUSY_SELECT_MS);
      dispatchReady();
    } else {
      LockSupport.parkNanos(OWNED_BUSY_PARK_NANOS);
    }
  }

  /**
   * Whether the idle proxy has something to look at. Operations count only while some need this
   * thread ({@link #ownerOps}): kernels never move those, so the proxy does not wait on the
   * progress lock for them either (an assisting kernel can link one that was queued as it looked,
   * and wait for that kernel's wake-up or 1 ms); the rest are the kernels' until they wake it.
   */
  private boolean hasNews() {
    return news
        || ownerWorkPending()
        || !tasks.isEmpty()
        || !looseTasks.isEmpty()
        || deferredDue()
        || stopping
        || dropAll;
  }

  /** Whether a task of {@link #executeOutsidePassesLater} is due. */
  private boolean deferredDue() {
    Deferred d = deferred.peek();
    return d != null && System.nanoTime() - d.dueNanos() >= 0;
  }

  /**
   * {@code timeoutMillis} (0: none) cut to when the first task of {@link
   * #executeOutsidePassesLater} is due, at least 1 ms.
   */
  private long untilDeferred(long timeoutMillis) {
    Deferred d = deferred.peek();
    if (d == null) {
      return timeoutMillis;
    }
    long left = Math.max(1, TimeUnit.NANOSECONDS.toMillis(d.dueNanos() - System.nanoTime()) + 1);
    return timeoutMillis == 0 ? left : Math.min(timeoutMillis, left);
  }

  /**
   * The idle wait of a proxy that owns a transport: ready sockets first, then the transport's wait,
   * with the selector lent to the {@link SocketWatcher}, which ends the wait when a socket is
   * ready. The flag is raised before the last look for news, and {@link #wake()} signals when it
   * sees the flag after adding news, so one of the two always sees the other: no wake-up is lost (a
   * signal that finds nobody waiting makes the next wait return at once).
   */
  private void awaitOwned() throws IOException {
    selector.selectNow();
    if (!selector.selectedKeys().isEmpty()) {
      // ready sockets, new or left from a pass that found the selector lent: dispatch them first
      // (a later select does not count keys already selected, so nothing would wake us for them)
      return;
    }
    waitingOwned = true;
    blocking = true;
    try {
      if (!deferred.isEmpty()) {
        // the transport's wait has no deadline of the task's: sleep briefly and look again
        LockSupport.parkNanos(OWNED_BUSY_PARK_NANOS);
      } else if (!hasNews()) {
        watcher.lend();
        ownedWait.await();
      }
    } finally {
      blocking = false;
      waitingOwned = false;
    }
    watcher.reclaim(); // the watcher hands the selector back; until then the proxy leaves it
  }

  /**
   * Blocks in the selector until a socket is ready, {@link #wake()} or {@code timeoutMillis} (0:
   * none), unless there is news already.
   */
  private void select(long timeoutMillis) throws IOException {
    blocking = true;
    try {
      if (!hasNews()) {
        selector.select(untilDeferred(timeoutMillis));
      }
    } finally {
      blocking = false;
    }
  }

  /** Whether this thread may use the selector now (not while the socket watcher selects). */
  private boolean selectorFree() {
    return watcher == null || !watcher.isLent();
  }

  /**
   * The blocking step of a proxy whose operations cannot move. A socket wakes the selector when
   * data arrives; a one-sided put raises no event, so a proxy that owns such a transport sleeps
   * only briefly instead, checking the sockets without blocking. In spin mode it only checks.
   */
  private void busyWait() throws IOException {
    if (!selectorFree()) {
      LockSupport.parkNanos(OWNED_BUSY_PARK_NANOS); // the watcher is handing the selector back
      return;
    }
    if (!busyIdle.mayBlock()) {
      selector.selectNow();
    } else if (poller == null) {
      select(BUSY_SELECT_MS);
    } else {
      selector.selectNow();
      LockSupport.parkNanos(OWNED_BUSY_PARK_NANOS);
    }
    dispatchReady();
  }

  /**
   * Runs the tasks queued by {@link #executeOutsidePasses}; one that throws is handed to the next
   * pass, which fails the operations.
   */
  private void runLooseTasks() {
    runDeferred(false);
    Runnable task;
    while ((task = looseTasks.poll()) != null) {
      runLoose(task);
    }
  }

  /** Runs the tasks of {@link #executeOutsidePassesLater} that are due, or all of them. */
  private void runDeferred(boolean all) {
    for (Deferred d; (d = deferred.peek()) != null; ) {
      if (!all && System.nanoTime() - d.dueNanos() < 0) {
        return; // queued in the order they fall due
      }
      deferred.poll();
      runLoose(d.task());
    }
  }

  private void runLoose(Runnable task) {
    try {
      task.run();
    } catch (RuntimeException e) {
      failInNextPass(e);
    }
  }

  /**
   * Hands a failure met outside a pass to the next one, which drops the operations and reports it
   * as a failure met inside it would be.
   */
  private void failInNextPass(RuntimeException e) {
    tasks.add(
        () -> {
          throw e;
        });
  }

  /** Runs queued tasks and the owned transport's poll; returns whether anything happened. */
  private boolean runTasksAndPoll() {
    boolean any = false;
    Runnable task;
    while ((task = tasks.poll()) != null) {
      any = true;
      try {
        task.run();
      } catch (RuntimeException e) {
        dropLinked();
        onError.accept(e);
      }
    }
    if (poller != null) {
      try {
        any |= poller.getAsBoolean();
      } catch (RuntimeException e) {
        dropLinked();
        onError.accept(e);
      }
    }
    return any;
  }

  /** Runs {@code action} inside a progress pass, excluding the proxy thread and assists. */
  public void runExclusive(Runnable action) {
    lockAll();
    try {
      action.run();
    } finally {
      unlockAll();
    }
  }

  /**
   * Takes every lane's lock, in lane order. Kernels only ever try one lane's lock and never wait
   * for another while they hold it (a failure their pass meets is reported once they let go: {@link
   * PassFailure}), so waiting here cannot deadlock.
   */
  private void lockAll() {
    for (Lane lane : lanes) {
      lane.lock.lock();
    }
  }

  /** Takes every lane's lock if each is free now; else takes none. */
  private boolean tryLockAll() {
    for (int l = 0; l < lanes.length; l++) {
      if (!lanes[l].lock.tryLock()) {
        for (int k = l - 1; k >= 0; k--) {
          lanes[k].lock.unlock();
        }
        return false;
      }
    }
    return true;
  }

  private void unlockAll() {
    for (int l = lanes.length - 1; l >= 0; l--) {
      lanes[l].lock.unlock();
    }
  }

  /** Whether any lane has an operation linked; with the lanes' locks held. */
  private boolean anyLinked() {
    for (Lane lane : lanes) {
      if (lane.head != null) {
        return true;
      }
    }
    return false;
  }

  /**
   * Runs the handlers of sockets the last select found ready: those that need no pass at once, the
   * others in one progress pass.
   */
  private void dispatchReady() {
    if (!selectorFree()) {
      return;
    }
    Set<SelectionKey> ready = selector.selectedKeys();
    boolean needPass = false;
    for (SelectionKey key : ready) {
      if (key.isValid() && key.attachment() instanceof ReadyHandler h) {
        if (h.runsInPass()) {
          needPass = true;
        } else {
          try {
            h.onReady();
          } catch (RuntimeException e) {
            failInNextPass(e);
          }
        }
      }
    }
    if (!needPass) {
      ready.clear(); // sockets that operations read in their passes; nothing more to run here
      return;
    }
    lockAll();
    try {
      for (SelectionKey key : ready) {
        if (key.isValid()
            && key.attachment() instanceof ReadyHandler handler
            && handler.runsInPass()) {
          try {
            handler.onReady();
          } catch (RuntimeException e) {
            dropLinked();
            onError.accept(e);
          }
        }
      }
    } finally {
      ready.clear();
      unlockAll();
    }
  }

  /**
   * Lends the calling thread to the proxy: one progress pass if no other thread is in one, which
   * leaves alone the operations of a transport the proxy owns ({@link #setOwnedPoller}; callers
   * look at {@link #ownerWorkPending} first and wake the proxy for those). Host kernels call this
   * while they wait, so that on a busy ring the data moves without waking the proxy thread (a
   * thread wake-up costs more than a small message's whole hop); the proxy thread still owns
   * progress whenever no kernel is waiting. Passes over one lane are mutually exclusive (this one
   * is lane 0's; {@link #assist(int)} for the others), so operations and connections only ever see
   * one thread at a time.
   *
   * <p>With nothing queued or linked (collectives whose every edge lies in shared memory) a pass
   * has nothing to do and returns before the lock: a waiting kernel calls this on every poll, and
   * taking the lock each time kept its cache line moving between the kernel's core and the proxy's.
   *
   * @return whether anything moved
   */
  public boolean assist() {
    return assist(0);
  }

  /**
   * {@link #assist()} for the operations of {@code lane} only: the kernels of other lanes move
   * theirs at the same time.
   */
  public boolean assist(int lane) {
    if (outstanding.get() == 0 || dropAll || stopping) {
      return false;
    }
    return passOver(lanes[lane], true, true);
  }

  /** Links every lane's submissions; with the lanes' locks held. */
  private void linkSubmitted() {
    for (Lane lane : lanes) {
      link(lane);
    }
  }

  /** Links {@code lane}'s submissions into its list; with its lock held. */
  private void link(Lane lane) {
    ProxyOp taken = lane.submitted.takeAll();
    while (taken != null) {
      ProxyOp op = taken;
      taken = op.nextSubmitted;
      op.nextSubmitted = null;
      op.next = null;
      op.nextPeer = null;
      ProxyOp same = findPeer(lane, op.peerKey());
      if (same != null) {
        while (same.nextPeer != null) {
          same = same.nextPeer;
        }
        same.nextPeer = op;
      } else if (lane.head == null) {
        lane.head = op;
      } else {
        ProxyOp last = lane.head;
        while (last.next != null) {
          last = last.next;
        }
        last.next = op;
      }
    }
  }

  /** Forgets every linked operation (after a failure); their owners learn of it from the error. */
  private void dropLinked() {
    for (Lane lane : lanes) {
      dropLinked(lane);
    }
  }

  /**
   * Forgets {@code lane}'s linked operations; with its lock held. A kernel's pass that fails drops
   * its own lane: the failure's handler drops the others ({@link #dropAll}).
   */
  private void dropLinked(Lane lane) {
    for (ProxyOp op = lane.head; op != null; op = op.next) {
      for (ProxyOp p = op; p != null; p = p.nextPeer) {
        retire(p);
      }
    }
    lane.head = null;
  }

  private static ProxyOp findPeer(Lane lane, Object key) {
    for (ProxyOp p = lane.head; p != null; p = p.next) {
      if (p.peerKey() == key) {
        return p;
      }
    }
    return null;
  }

  /** One pass over every lane, on the proxy thread; returns whether anything moved. */
  private boolean progressAll() {
    boolean moved = false;
    try {
      for (Lane lane : lanes) {
        moved |= progress(lane, false);
      }
    } catch (PassFailure f) {
      onError.accept(f.failure); // every lane's lock is held: the handler's own passes re-enter
      return true;
    }
    return moved;
  }

  /**
   * A lane's pass met a failure ({@link #progress}): it dropped that lane's operations, and its
   * caller reports {@code failure} once it has let go of that lane, or at once where it holds every
   * lane (the proxy thread's full pass). The failure's handler runs passes of its own ({@link
   * #runExclusive}, which takes every lane): run by a kernel that held one lane, it waited for a
   * lane that another kernel held while that one, failing too, waited for the first one's.
   */
  private static final class PassFailure extends RuntimeException {
    private static final long serialVersionUID = 1L;
    final transient RuntimeException failure;

    PassFailure(RuntimeException failure) {
      super(null, null, false, false);
      this.failure = failure;
    }
  }

  /**
   * One pass over {@code lane}'s list, with its lock held; unlinks finished operations. Returns
   * whether anything moved. An assisting kernel ({@code byKernel}) leaves the operations of an
   * owned transport alone: one can be linked by a kernel that saw none counted just before it was
   * queued.
   */
  private boolean progress(Lane lane, boolean byKernel) {
    boolean moved = false;
    long now = System.nanoTime();
    ProxyOp prev = null;
    ProxyOp op = lane.head;
    while (op != null) {
      if (byKernel && op.needsTransportOwner()) {
        prev = op;
        op = op.next;
        continue;
      }
      try {
        moved |= op.progress(now);
      } catch (RuntimeException e) {
        dropLinked(lane);
        throw new PassFailure(describe(op, e));
      }
      ProxyOp following = op.next;
      if (op.isDone()) {
        ProxyOp replacement = op.nextPeer;
        if (replacement != null) {
          replacement.next = following;
          following = replacement;
        }
        if (prev == null) {
          lane.head = following;
        } else {
          prev.next = following;
        }
        moved = true;
        retire(op);
        op.markUnlinked(); // last touch: its owner may reuse it from now on
        op = following;
        continue;
      }
      prev = op;
      op = following;
    }
    return moved;
  }

  private static RuntimeException describe(ProxyOp op, RuntimeException e) {
    if (e instanceof CclMismatchException || e instanceof CclRemoteException) {
      return e;
    }
    String message = op.what() + ": " + e.getMessage();
    return e instanceof CclTimeoutException
        ? new CclTimeoutException(message)
        : new CclException(message, e);
  }

  /**
   * Stops the thread, which closes its selector as it ends; waits at most {@code timeoutMillis}.
   */
  public void close(long timeoutMillis) {
    stopping = true;
    wake();
    try {
      if (thread.isAlive() || thread.getState() != Thread.State.NEW) {
        thread.join(timeoutMillis);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    if (thread.getState() == Thread.State.NEW) {
      closeSelector(); // never started: nobody else will
    } else if (thread.isAlive()) {
      LOG.warn(
          "proxy thread {} did not stop within {} ms; it closes its selector when it does",
          thread.getName(),
          timeoutMillis);
    }
  }

  private void closeSelector() {
    try {
      selector.close();
    } catch (IOException e) {
      LOG.debug("closing the proxy selector", e);
    }
  }

  @Override
  public void close() {
    close(10_000);
  }

  /** The thread, for tests that check it is gone after close. */
  Thread thread() {
    return thread;
  }
}
