package org.sparkccl.comm;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.sparkccl.CclException;
import org.sparkccl.bootstrap.Bootstrap;
import org.sparkccl.transport.RecvConnection;
import org.sparkccl.transport.socket.SocketTransport;

/**
 * The ring over sockets (NCCL's socket {@code net}): available wherever the listener is.
 *
 * <p>A connecting socket waits for the acceptor's proof of the secret, so every rank accepts from
 * the previous rank on a thread of its own while it connects to the next one; in turn they would
 * wait for each other round the ring.
 */
final class SocketRing implements RingTransport {
  private final SocketTransport sockets;

  SocketRing(SocketTransport sockets) {
    this.sockets = sockets;
  }

  @Override
  public String name() {
    return "socket";
  }

  @Override
  public byte[] localInfo() {
    return sockets.address().getBytes(StandardCharsets.UTF_8);
  }

  @Override
  public String unavailableReason() {
    return null;
  }

  @Override
  public boolean movesInPlace() {
    return true;
  }

  @Override
  public boolean overSockets() {
    return true;
  }

  @Override
  public void connect(
      CommContext ctx, Bootstrap bootstrap, long token, int next, int prev, byte[][] infos) {
    long deadline = System.nanoTime() + ctx.timeoutNanos;
    String nextAddress = new String(infos[next], StandardCharsets.UTF_8);
    sockets.onProxy(ctx.proxy::executeOutsidePassesLater);
    CompletableFuture<RecvConnection[]> accepted = new CompletableFuture<>();
    Thread acceptor =
        new Thread(
            () -> {
              try {
                accepted.complete(
                    sockets.accept(
                        prev,
                        ctx.channels.length,
                        ctx.proxy.selector(),
                        ctx.proxy::wake,
                        deadline));
              } catch (Throwable t) {
                accepted.completeExceptionally(t);
              }
            },
            "sparkccl-ring-accept-" + ctx.rank);
    acceptor.setDaemon(true);
    acceptor.start();
    try {
      for (CommChannel ch : ctx.channels) {
        ch.send =
            sockets.connect(
                nextAddress, next, ch.id, ctx.proxy.selector(), ctx.proxy::wake, deadline);
      }
    } catch (RuntimeException e) {
      // the accept gives up once the listener closes; wait for it so nothing it made is left
      sockets.close();
      RecvConnection[] late = await(accepted, deadline, ctx.rank);
      if (late != null) {
        for (RecvConnection r : late) {
          r.close();
        }
      }
      throw e;
    }
    RecvConnection[] recvs = await(accepted, deadline, ctx.rank);
    if (recvs == null) {
      throw new CclException("rank " + ctx.rank + ": accepting from rank " + prev + " failed");
    }
    for (CommChannel ch : ctx.channels) {
      ch.recv = recvs[ch.id];
    }
  }

  /** The accept's result; rethrows its failure as it was, null when it failed after a close. */
  private RecvConnection[] await(
      CompletableFuture<RecvConnection[]> accepted, long deadline, int rank) {
    try {
      // the accept has the same deadline; the slack covers its last select
      long left = deadline - System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
      return accepted.get(Math.max(0, left), TimeUnit.NANOSECONDS);
    } catch (ExecutionException e) {
      if (e.getCause() instanceof RuntimeException r && sockets.isOpen()) {
        throw r;
      }
      if (e.getCause() instanceof Error err) {
        throw err;
      }
      return null;
    } catch (TimeoutException e) {
      throw new CclException("rank " + rank + ": the ring accept did not end by its deadline");
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new CclException("rank " + rank + ": interrupted while accepting the ring", e);
    }
  }
}
