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
 * watcher selects, and when a socket is ready (or the selector is woken) it ends the proxy's wait
 * and hands the selector back. The proxy never waits for the hand-back: until {@link #isLent()} is
 * false it leaves the selector alone and only polls its transport, so waking costs the first
 * message after an idle period nothing. Where the transport's wait has a period ({@link
 * OwnedWait#periodNanos}), the watcher also ends the wait once the period has passed.
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
      lent = true;
      turn.notifyAll();
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
        int ready = 0;
        long period = wait.periodNanos();
        long start = System.nanoTime();
        try {
          // a wakeup() of the selector (the proxy woke and wants it back, or close) ends this too
          ready =
              period > 0
                  ? selector.select(Math.max(1, TimeUnit.NANOSECONDS.toMillis(period)))
                  : selector.select();
        } finally {
          boolean anyReady = ready > 0 || !selector.selectedKeys().isEmpty();
          boolean periodOver = period > 0 && System.nanoTime() - start >= period;
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
