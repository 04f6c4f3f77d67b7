package org.sparkccl.proxy;

import java.io.IOException;
import java.nio.channels.ClosedSelectorException;
import java.nio.channels.Selector;
import java.util.concurrent.TimeUnit;
import org.apache.logging.log4j.Logger;
import org.sparkccl.util.EngineLog;

/**
 * Watches the proxy's sockets while the proxy blocks in a transport's own wait (UCX: the worker's),
 * which sockets cannot end: the proxy {@link #lend lends} it the selector before it blocks, the
 * watcher selects, and when a socket is ready it ends the proxy's wait and hands the selector back;
 * a proxy whose wait ended otherwise {@link #reclaim reclaims} it. The proxy never waits for the
 * hand-back: until {@link #isLent()} is false it leaves the selector alone and only polls its
 * transport, so waking costs the first message after an idle period nothing. Where the transport's
 * wait has a period ({@link OwnedWait#periodNanos}), the watcher also ends the wait once the period
 * has passed.
 */
final class SocketWatcher {
  private static final Logger LOG = EngineLog.logger(SocketWatcher.class);

  private final Selector selector;
  private final OwnedWait wait;
  private final Thread thread;
  private final Object turn = new Object();
  private boolean stopping;

  /** The watcher owns the selector (selecting, or about to). */
  private volatile boolean lent;

  /** The proxy's wait has ended and it wants the selector back ({@link #reclaim}). */
  private volatile boolean reclaimed;

  SocketWatcher(Selector selector, OwnedWait wait, String name) {
    this.selector = selector;
    this.wait = wait;
    this.thread = new Thread(this::loop, name);
    this.thread.setDaemon(true);
  }

  void start() {
    thread.start();
  }

  /** Proxy thread: hands the selector over before blocking in the transport's wait. */
  void lend() {
    synchronized (turn) {
      reclaimed = false;
      lent = true;
      turn.notifyAll();
    }
  }

  /**
   * Proxy thread, once its wait has ended: asks for the selector back. The watcher's select ends,
   * or, where it has not begun, ends at once: the wake-up stays pending.
   */
  void reclaim() {
    if (lent) {
      reclaimed = true;
      selector.wakeup();
    }
  }

  /** Whether the watcher still has the selector: the proxy must not select meanwhile. */
  boolean isLent() {
    return lent;
  }

  private void loop() {
    try {
      while (true) {
        synchronized (turn) {
          while (!lent && !stopping) {
            turn.wait();
          }
          if (stopping) {
            return;
          }
        }
        long period = wait.periodNanos();
        long start = System.nanoTime();
        boolean anyReady = false;
        boolean periodOver = false;
        try {
          // A wakeup() of the selector (the proxy wants it back, or close) ends this too. So does
          // one the proxy made after an earlier wait, if this select had not begun then: select
          // again while the proxy still waits, or its wait would go on with nobody watching its
          // sockets and nobody ending it when the period is over.
          do {
            long left = period - (System.nanoTime() - start);
            int ready =
                period > 0
                    ? selector.select(Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)))
                    : selector.select();
            anyReady = ready > 0 || !selector.selectedKeys().isEmpty();
            periodOver = period > 0 && System.nanoTime() - start >= period;
          } while (!anyReady && !periodOver && !reclaimed && !isStopping());
        } finally {
          lent = false;
          if (anyReady) {
            // only for sockets and the period: a proxy that woke by itself must not find a stale
            // signal that ends its next wait at once (the two threads would keep waking each other)
            wait.signal();
          } else if (periodOver) {
            wait.tick();
          }
        }
      }
    } catch (ClosedSelectorException e) {
      // the proxy thread ended and closed its selector
    } catch (IOException e) {
      LOG.warn("socket watcher {} failed; the proxy polls its sockets itself", thread.getName(), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      lent = false;
    }
  }

  private boolean isStopping() {
    synchronized (turn) {
      return stopping;
    }
  }

  /** Stops the watcher and waits (briefly) for its thread to end. */
  void stop() {
    synchronized (turn) {
      stopping = true;
      turn.notifyAll();
    }
    selector.wakeup();
    try {
      thread.join(1_000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
