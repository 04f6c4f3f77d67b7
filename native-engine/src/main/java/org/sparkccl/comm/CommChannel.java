package org.sparkccl.comm;

import java.util.function.BooleanSupplier;
import org.apache.logging.log4j.Logger;
import org.sparkccl.config.CclConfig;
import org.sparkccl.device.Device;
import org.sparkccl.fifo.Fifo;
import org.sparkccl.idle.IdleStrategies;
import org.sparkccl.kernel.ChannelKernel;
import org.sparkccl.kernel.KernelGuard;
import org.sparkccl.kernel.KernelThread;
import org.sparkccl.kernel.KernelWaiter;
import org.sparkccl.proxy.RecvProxyOp;
import org.sparkccl.proxy.SendProxyOp;
import org.sparkccl.transport.RecvConnection;
import org.sparkccl.transport.SendConnection;
import org.sparkccl.util.EngineLog;

/**
 * One ring of a communicator: its connections to the next and previous rank, its two FIFOs, and the
 * kernel thread that runs its share of each collective: itself (host memory) or by launching the
 * device's kernel and driving the proxy while it runs.
 */
final class CommChannel {
  private static final Logger LOG = EngineLog.logger(CommChannel.class);

  final int id;
  final Fifo sendFifo;
  final Fifo recvFifo;
  final KernelWaiter waiter;
  final KernelThread kernelThread;
  final ChannelKernel kernel;
  SendConnection send;
  RecvConnection recv;

  /**
   * Whether the kernel writes to the next rank's (reads from the previous rank's) FIFO itself, a
   * direct edge of {@link SameHostRing}: no proxy op moves those slots.
   */
  volatile boolean directSend;

  volatile boolean directRecv;

  /**
   * Whether the proxy may receive large ring steps straight into a host collective's output ({@code
   * RecvProxyOp#receiveInto}): host kernels over a connection that reads into any memory. Decided
   * once the ring is connected, like the kernel's {@code sendFromSources}.
   */
  boolean receivesInPlace;

  /** Next FIFO steps the proxy will move; advanced under the communicator's launch lock. */
  long sendBase;

  /** Finished proxy operations of the ring's two directions, to restart. */
  final OpRing<SendProxyOp> sendOps = new OpRing<>();

  final OpRing<RecvProxyOp> recvOps = new OpRing<>();

  long recvBase;

  /**
   * The ring task (and its work) of this channel's last host-memory collective: the next one reuses
   * it once that collective has completed (a small collective made both anew per call). Used under
   * the launch lock only.
   */
  ChannelTask ringTask;

  /** The collective the kernel thread is running, for messages and announcements. */
  volatile Collective current;

  /** What the kernel thread runs, for messages. */
  String currentOp() {
    Collective c = current;
    return c == null ? "idle" : c.what();
  }

  CommChannel(
      int id,
      int rank,
      int stepSize,
      KernelGuard guard,
      BooleanSupplier assist,
      Runnable wakeProxy,
      IdleStrategies idle,
      Device device,
      CclConfig config) {
    this.id = id;
    this.waiter = new KernelWaiter(idle, assist, wakeProxy);
    this.kernel = device.newChannelKernel(stepSize, waiter, guard, assist, config);
    this.sendFifo = kernel.sendFifo();
    this.recvFifo = kernel.recvFifo();
    this.kernelThread = new KernelThread("sparkccl-kernel-r" + rank + "-c" + id, waiter);
    sendFifo.onRelease(waiter);
    recvFifo.onPublish(waiter);
    sendFifo.onPublish(waiter::deferProxyWake);
    recvFifo.onRelease(waiter::deferProxyWake);
  }

  void abort() {
    sendFifo.abort();
    recvFifo.abort();
  }

  /**
   * Tells the previous and the next rank about a failure or a normal close (best effort). Call
   * inside a proxy progress pass.
   */
  void notifyPeers(boolean failed, String message) {
    if (recv != null) {
      recv.notifyPeer(failed, message);
    }
    if (send != null) {
      send.notifyPeer(failed, message);
    }
  }

  void closeConnections() {
    if (send != null) {
      send.close();
    }
    if (recv != null) {
      recv.close();
    }
  }

  /**
   * Stops the kernel thread; frees the FIFOs only if it stopped and {@code mayFree} (no other
   * thread may still use them), since freed memory must never be touched again. Returns whether the
   * thread stopped.
   */
  boolean release(long timeoutMillis, boolean mayFree) {
    boolean stopped = kernelThread.stop(timeoutMillis);
    closeConnections();
    if (stopped && mayFree) {
      kernel.close();
      sendFifo.close();
      recvFifo.close();
    } else if (!stopped) {
      LOG.warn("channel {}: kernel thread did not stop; its FIFOs are not freed", id);
    } else {
      LOG.warn(
          "channel {}: an earlier channel's kernel thread did not stop (channel 0's may drive"
              + " every channel); the FIFOs are not freed",
          id);
    }
    return stopped;
  }
}
