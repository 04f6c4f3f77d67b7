package org.sparkccl.spark.worker;

import java.io.EOFException;
import java.io.IOException;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.apache.logging.log4j.Logger;
import org.sparkccl.CclAbortedException;
import org.sparkccl.CclException;
import org.sparkccl.CclMismatchException;
import org.sparkccl.CclRemoteException;
import org.sparkccl.CclTimeoutException;
import org.sparkccl.Communicator;
import org.sparkccl.DataType;
import org.sparkccl.ReduceOp;
import org.sparkccl.auth.ChallengeResponse;
import org.sparkccl.config.IdleMode;
import org.sparkccl.device.HostBuffer;
import org.sparkccl.device.HostDevice;
import org.sparkccl.util.EngineLog;

/**
 * One Python worker's connection, served by its own thread: the handshake (the worker proves the
 * executor's secret), then requests one at a time, from the socket or, once the worker moved them
 * there ({@link ChannelProtocol#BOX}), from its {@link CallBox}. The worker's communicators and
 * shared segments live here; when the connection ends (the worker closed it, or died),
 * communicators still open are aborted so their peers fail at once instead of waiting for a rank
 * that is gone, and every segment is unmapped.
 */
final class WorkerSession implements Runnable {
  private static final Logger LOG = EngineLog.logger(WorkerSession.class);

  private final SocketChannel channel;
  private final ChannelWire wire;
  private final ChallengeResponse auth;
  private final CommunicatorSource source;
  private final Path shmDir;
  private final ScheduledExecutorService watchdog;
  private final Duration handshakeTimeout;
  private final Runnable onEnd;

  /** Open communicators by id; a task's end removes its own, from the task's thread. */
  private final Map<Integer, Communicator> comms = new ConcurrentHashMap<>();

  /**
   * How long the session polls the call box after a request before it yields between looks, and
   * before it sleeps on the socket: a training loop's next call, after the worker's own compute,
   * often comes within that, and a call that finds the session asleep pays one wake-up.
   */
  private static final long SPIN_NANOS = 100_000;

  private static final long YIELD_NANOS = 2_000_000;

  private SharedSegments segments;
  private CallBox box;

  /** The last collective request, parsed, while the worker repeats it. */
  private PreparedCollective last;

  private HostBuffer barrierWord;
  private int nextComm = 1;
  private long peerPid = -1;

  WorkerSession(
      SocketChannel channel,
      ChallengeResponse auth,
      CommunicatorSource source,
      Path shmDir,
      ScheduledExecutorService watchdog,
      Duration handshakeTimeout,
      Runnable onEnd) {
    this.channel = channel;
    this.wire = new ChannelWire(channel);
    this.auth = auth;
    this.source = source;
    this.shmDir = shmDir;
    this.watchdog = watchdog;
    this.handshakeTimeout = handshakeTimeout;
    this.onEnd = onEnd;
  }

  @Override
  public void run() {
    try {
      if (!handshake()) {
        return;
      }
      segments = new SharedSegments(shmDir, peerPid);
      while (box == null) {
        ByteBuffer request = wire.readFrame();
        handleChecked(request, wire.startFrame());
        wire.sendFrame();
      }
      serveBox();
    } catch (EOFException e) {
      LOG.debug("Python worker {} closed its channel", peerPid);
    } catch (IOException | RuntimeException e) {
      LOG.warn("SparkCCL channel of Python worker {} ended: {}", peerPid, e.toString());
    } finally {
      end();
    }
  }

  private void handleChecked(ByteBuffer request, ByteBuffer reply) throws IOException {
    try {
      handle(request, reply);
    } catch (BufferUnderflowException e) {
      throw new IOException("a request shorter than its fields", e);
    }
  }

  /**
   * Serves requests through the call box until the worker closes the socket: polls the box while
   * calls keep coming ({@link #SPIN_NANOS} spinning, then yielding up to {@link #YIELD_NANOS}),
   * then sleeps on the socket until the worker writes a wake-up.
   */
  private void serveBox() throws IOException {
    long served = box.replied(); // only this thread writes it: no request can slip by
    long idleSince = System.nanoTime();
    while (true) {
      long seq = box.requested();
      if (seq != served) {
        handleChecked(wire.readFrame(box), wire.startFrame());
        wire.sendFrame(box, seq);
        served = seq;
        if (box.workerSleeps()) {
          wire.wake();
        }
        idleSince = System.nanoTime();
        continue;
      }
      long idle = System.nanoTime() - idleSince;
      if (idle < SPIN_NANOS) {
        Thread.onSpinWait();
      } else if (idle < YIELD_NANOS) {
        Thread.yield();
      } else {
        box.executorSleeps(true);
        if (box.requested() == served) {
          wire.awaitWake();
        }
        box.executorSleeps(false);
        idleSince = System.nanoTime();
      }
    }
  }

  /** Closes the connection from outside (the executor is shutting down). */
  void close() {
    try {
      channel.close();
    } catch (IOException e) {
      // closing anyway
    }
  }

  private boolean handshake() throws IOException {
    ScheduledFuture<?> deadline =
        watchdog.schedule(this::close, handshakeTimeout.toMillis(), TimeUnit.MILLISECONDS);
    try {
      byte[] opening = wire.readExactly(ChannelProtocol.OPENING_BYTES);
      ByteBuffer o = ByteBuffer.wrap(opening);
      byte[] magic = new byte[ChannelProtocol.MAGIC.length];
      o.get(magic);
      if (!Arrays.equals(magic, ChannelProtocol.MAGIC)) {
        LOG.warn("refused a local connection that is not a SparkCCL Python worker");
        return false;
      }
      long pid = o.getLong();
      byte[] theirNonce = wire.readExactly(ChallengeResponse.NONCE_BYTES);
      byte[] myNonce = ChallengeResponse.newNonce();
      wire.writeRaw(myNonce);
      wire.writeRaw(auth.acceptorProof(opening, theirNonce, myNonce));
      byte[] proof = wire.readExactly(ChallengeResponse.PROOF_BYTES);
      boolean ok = auth.isConnectorProof(proof, opening, theirNonce, myNonce);
      wire.writeRaw(new byte[] {ok ? ChannelProtocol.ACCEPTED : ChannelProtocol.REFUSED});
      if (!ok) {
        LOG.warn("refused a Python worker (pid {}) that did not prove the executor's secret", pid);
        return false;
      }
      peerPid = pid;
      return true;
    } finally {
      deadline.cancel(false);
    }
  }

  private void handle(ByteBuffer request, ByteBuffer reply) throws IOException {
    int type = request.get();
    int released = request.getShort() & 0xffff;
    if (released > 0) {
      dropLast(); // its views may lie in a segment released now
    }
    for (int i = 0; i < released; i++) {
      segments.release(request.getInt());
    }
    try {
      switch (type) {
        case ChannelProtocol.MAP -> {
          String name = ChannelWire.getString(request);
          long bytes = request.getLong();
          int id;
          try {
            id = segments.map(name, bytes);
          } catch (IOException e) {
            // the worker's file, not the channel, is at fault: answer, and keep serving
            throw new IllegalArgumentException("segment " + name + " cannot be mapped: " + e, e);
          }
          reply.put(ChannelProtocol.OK).putInt(id);
        }
        case ChannelProtocol.OPEN -> open(request, reply);
        case ChannelProtocol.COLLECTIVE -> {
          collective(request);
          reply.put(ChannelProtocol.OK);
        }
        case ChannelProtocol.CLOSE -> {
          dropLast();
          Communicator comm = comms.remove(request.getInt());
          if (comm != null) {
            comm.close();
          }
          reply.put(ChannelProtocol.OK);
        }
        case ChannelProtocol.PING -> reply.put(ChannelProtocol.OK);
        case ChannelProtocol.BOX -> {
          CallBox b = new CallBox(segments.pin(request.getInt()));
          reply.put(ChannelProtocol.OK);
          box = b; // after this reply, requests come through the box
        }
        default -> throw new IOException("unknown request type " + type);
      }
    } catch (RuntimeException e) {
      reply.clear().position(4);
      reply.put(ChannelProtocol.ERROR).put(errorKind(e));
      ChannelWire.putMessage(reply, message(e));
    }
  }

  private void open(ByteBuffer request, ByteBuffer reply) {
    long attempt = request.getLong();
    long timeoutMs = request.getLong();
    int id = nextComm++;
    Communicator comm =
        source.open(
            attempt, timeoutMs > 0 ? Duration.ofMillis(timeoutMs) : null, () -> comms.remove(id));
    comms.put(id, comm);
    reply
        .put(ChannelProtocol.OK)
        .putInt(id)
        .putInt(comm.rank())
        .putInt(comm.nRanks())
        .putLong(comm.config().timeout().toMillis())
        .put((byte) (comm.idleMode() == IdleMode.SPIN && comm.config().pythonCallBox() ? 1 : 0));
  }

  private void collective(ByteBuffer r) throws IOException {
    Communicator comm = comms.get(r.getInt(r.position()));
    PreparedCollective call = last;
    if (call == null || call.comm() != comm || !call.sameRequest(r)) {
      dropLast();
      if (comm == null) {
        throw new IllegalArgumentException("the communicator is closed");
      }
      if (r.get(r.position() + 4) == ChannelProtocol.BARRIER) {
        barrier(comm);
        return;
      }
      call = PreparedCollective.parse(r, comm, segments);
      last = call;
    }
    try {
      call.run();
    } catch (CclException e) {
      dropLast();
      segments.taint();
      throw e;
    }
  }

  /** Forgets the kept request and closes its views. */
  private void dropLast() {
    if (last != null) {
      last.close();
      last = null;
    }
  }

  private void barrier(Communicator comm) {
    if (barrierWord == null) {
      barrierWord = HostDevice.INSTANCE.allocate(Integer.BYTES);
    }
    comm.allReduce(barrierWord, barrierWord, 1, DataType.INT32, ReduceOp.SUM);
  }

  /**
   * The error's kind for Python: a mismatch or timeout anywhere in the cause chain names the
   * failure (the engine reports them wrapped, as the abort they caused), else the outermost kind.
   */
  private static byte errorKind(RuntimeException e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof CclMismatchException) {
        return ChannelProtocol.E_MISMATCH;
      }
      if (t instanceof CclTimeoutException) {
        return ChannelProtocol.E_TIMEOUT;
      }
    }
    if (e instanceof CclAbortedException || e instanceof CclRemoteException) {
      return ChannelProtocol.E_ABORT;
    }
    if (e instanceof IllegalArgumentException || e instanceof IndexOutOfBoundsException) {
      return ChannelProtocol.E_ARGUMENT;
    }
    return ChannelProtocol.E_OTHER;
  }

  private static String message(RuntimeException e) {
    String m = e.getMessage();
    return m == null || m.isEmpty() ? e.getClass().getSimpleName() : m;
  }

  /** Aborts what the worker left open, so its peers fail now; unmaps its segments. */
  private void end() {
    dropLast();
    boolean leftOpen = !comms.isEmpty();
    for (Communicator comm : comms.values()) {
      LOG.warn(
          "Python worker {} left rank {} of {} open: aborting it so that its peers fail now",
          peerPid,
          comm.rank(),
          comm.nRanks());
      comm.abort();
      comm.close();
    }
    comms.clear();
    if (segments != null) {
      if (leftOpen) {
        segments.taint();
      }
      segments.close();
    }
    if (barrierWord != null) {
      barrierWord.close();
    }
    close();
    onEnd.run();
  }

  @Override
  public String toString() {
    return "WorkerSession[pid " + peerPid + "]";
  }
}
