package org.sparkccl.transport.socket;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.util.ArrayDeque;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.function.IntFunction;
import org.apache.logging.log4j.Logger;
import org.sparkccl.CclException;
import org.sparkccl.idle.IdleStrategy;
import org.sparkccl.util.EngineLog;

/**
 * A helper thread of the socket transport (NCCL's {@code persistentSocketThread}): owns a few data
 * sockets of one connection and moves the chunks the proxy hands it, in order per socket, with
 * non-blocking I/O. It waits in its selector (no CPU) when it has nothing to move or, as its {@link
 * IdleStrategy} allows, when its sockets are not ready; it wakes the proxy whenever a chunk
 * completes.
 */
final class SocketHelperThread implements AutoCloseable {
  private static final Logger LOG = EngineLog.logger(SocketHelperThread.class);
  private static final long SELECT_MS = 100;

  private final Selector selector;
  private final Thread thread;
  private final ConcurrentLinkedQueue<ChunkTask> incoming = new ConcurrentLinkedQueue<>();
  private final IdleStrategy idle;
  private final Runnable wakeProxy;
  private final IntFunction<String> describeSocket;
  private volatile boolean stopping;

  SocketHelperThread(
      String name, IdleStrategy idle, Runnable wakeProxy, IntFunction<String> describeSocket) {
    try {
      this.selector = Selector.open();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot open a selector for " + name, e);
    }
    this.idle = idle;
    this.wakeProxy = wakeProxy;
    this.describeSocket = describeSocket;
    this.thread = new Thread(this::loop, name);
    this.thread.setDaemon(true);
  }

  /** Takes ownership of a data socket; before {@link #start()}. */
  void own(Wire wire, int socketIndex) throws IOException {
    wire.channel().configureBlocking(false);
    wire.channel().register(selector, 0, new Owned(socketIndex, wire));
  }

  void start() {
    thread.start();
  }

  void submit(ChunkTask task) {
    incoming.add(task);
    selector.wakeup();
  }

  private static final class Owned {
    final int socketIndex;
    final Wire wire;
    final ArrayDeque<ChunkTask> tasks = new ArrayDeque<>();

    Owned(int socketIndex, Wire wire) {
      this.socketIndex = socketIndex;
      this.wire = wire;
    }
  }

  private void loop() {
    try {
      while (!stopping) {
        ChunkTask t;
        while ((t = incoming.poll()) != null) {
          ((Owned) t.channel.keyFor(selector).attachment()).tasks.add(t);
        }
        boolean moved = false;
        boolean queued = false;
        for (SelectionKey key : selector.keys()) {
          moved |= progress(key);
          queued |= !((Owned) key.attachment()).tasks.isEmpty();
        }
        if (moved) {
          idle.reset();
        } else if (idle.idle(0)) {
          // with no chunk to move nothing is in flight: block, as in every mode
          if (idle.mayBlock() || !queued) {
            selector.select(SELECT_MS);
          } else {
            selector.selectNow();
          }
          selector.selectedKeys().clear();
        }
      }
    } catch (IOException | RuntimeException e) {
      LOG.error("socket helper {} failed", thread.getName(), e);
    }
  }

  private boolean progress(SelectionKey key) {
    Owned owned = (Owned) key.attachment();
    Wire ch = owned.wire;
    boolean moved = false;
    try {
      ChunkTask head;
      while ((head = owned.tasks.peek()) != null) {
        int n = head.send ? ch.write(head.buffer) : ch.read(head.buffer);
        if (n < 0) {
          throw new IOException("closed by the peer");
        }
        moved |= n > 0;
        if (head.buffer.hasRemaining()) {
          break;
        }
        owned.tasks.poll();
        head.complete();
        wakeProxy.run();
      }
      int want = head == null ? 0 : head.send ? SelectionKey.OP_WRITE : SelectionKey.OP_READ;
      if (key.interestOps() != want) {
        key.interestOps(want);
      }
    } catch (IOException | RuntimeException e) {
      CclException failure =
          new CclException(describeSocket.apply(owned.socketIndex) + " failed: " + e.getMessage());
      for (ChunkTask t : owned.tasks) {
        t.fail(failure);
      }
      owned.tasks.clear();
      key.cancel();
      wakeProxy.run();
      moved = true;
    }
    return moved;
  }

  @Override
  public void close() {
    stopping = true;
    selector.wakeup();
    try {
      if (thread.getState() != Thread.State.NEW) {
        thread.join(10_000);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    try {
      selector.close();
    } catch (IOException e) {
      LOG.debug("closing a helper selector", e);
    }
  }
}
