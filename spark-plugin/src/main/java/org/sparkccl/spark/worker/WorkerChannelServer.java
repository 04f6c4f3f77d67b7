package org.sparkccl.spark.worker;

import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.logging.log4j.Logger;
import org.sparkccl.auth.ChallengeResponse;
import org.sparkccl.util.EngineLog;

/**
 * The executor's end of the channel its Python workers use to run collectives on the executor's
 * engine ({@code sparkccl.communicator()} in a barrier task): a Unix domain socket in a private
 * folder ({@link ChannelFiles}), a fresh secret per executor, one thread per connected worker.
 *
 * <pre>{@code
 * try (WorkerChannelServer server =
 *     WorkerChannelServer.start(ChannelFiles.baseDir(), SharedSegments.SHM, source)) {
 *   // Python workers of this JVM connect to server.socketPath()
 * }
 * }</pre>
 */
public final class WorkerChannelServer implements AutoCloseable {
  private static final Logger LOG = EngineLog.logger(WorkerChannelServer.class);

  /** A worker that has not proved the secret within this long is dropped. */
  static final Duration HANDSHAKE_TIMEOUT = Duration.ofSeconds(10);

  /** Connected workers at most; more are refused (an executor runs a few tasks at once). */
  static final int MAX_SESSIONS = 256;

  private static final AtomicInteger THREADS = new AtomicInteger();

  private final Path dir;
  private final ServerSocketChannel server;
  private final ChallengeResponse auth;
  private final CommunicatorSource source;
  private final Path shmDir;
  private final ScheduledExecutorService watchdog;
  private final Set<WorkerSession> sessions = ConcurrentHashMap.newKeySet();
  private final Duration handshakeTimeout;
  private final Thread acceptor;
  private volatile boolean closed;

  private WorkerChannelServer(
      Path base, Path shmDir, CommunicatorSource source, Duration handshakeTimeout)
      throws IOException {
    this.handshakeTimeout = handshakeTimeout;
    byte[] secret = ChallengeResponse.newSecret();
    this.auth = new ChallengeResponse(secret);
    this.dir = ChannelFiles.publish(base, ProcessHandle.current().pid(), secret);
    this.source = source;
    this.shmDir = shmDir;
    this.server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
    server.bind(UnixDomainSocketAddress.of(dir.resolve(ChannelFiles.SOCKET)));
    this.watchdog =
        Executors.newSingleThreadScheduledExecutor(
            r -> daemon(r, "sparkccl-worker-channel-watchdog"));
    this.acceptor = daemon(this::acceptLoop, "sparkccl-worker-channel");
    acceptor.start();
  }

  /**
   * Publishes a channel under {@code base} (normally {@link ChannelFiles#baseDir()}) for workers
   * whose segments live in {@code shmDir} (normally {@code /dev/shm}).
   *
   * @throws IOException when the folder is not private or the socket cannot be bound
   */
  public static WorkerChannelServer start(Path base, Path shmDir, CommunicatorSource source)
      throws IOException {
    return new WorkerChannelServer(base, shmDir, source, HANDSHAKE_TIMEOUT);
  }

  /** {@link #start} with another handshake deadline; for tests. */
  static WorkerChannelServer start(
      Path base, Path shmDir, CommunicatorSource source, Duration handshakeTimeout)
      throws IOException {
    return new WorkerChannelServer(base, shmDir, source, handshakeTimeout);
  }

  /**
   * The executor's channel in the standard places, or {@code null} (logged) when it cannot be
   * published: Java tasks still work, Python tasks get a clear error.
   */
  public static WorkerChannelServer startForExecutor(CommunicatorSource source) {
    try {
      WorkerChannelServer s = start(ChannelFiles.baseDir(), SharedSegments.SHM, source);
      LOG.info("SparkCCL channel for Python workers at {}", s.socketPath());
      return s;
    } catch (IOException | RuntimeException e) {
      LOG.warn("SparkCCL channel for Python workers not started: {}", e.toString());
      return null;
    }
  }

  /** The socket workers connect to. */
  public Path socketPath() {
    return dir.resolve(ChannelFiles.SOCKET);
  }

  /** The file holding the secret, readable by this user only. */
  public Path secretPath() {
    return dir.resolve(ChannelFiles.SECRET);
  }

  /** Workers connected now; for tests and leak checks. */
  public int sessionCount() {
    return sessions.size();
  }

  private void acceptLoop() {
    while (!closed) {
      SocketChannel ch;
      try {
        ch = server.accept();
      } catch (IOException e) {
        if (!closed) {
          LOG.warn("SparkCCL worker channel stopped accepting: {}", e.toString());
        }
        return;
      }
      if (sessions.size() >= MAX_SESSIONS) {
        LOG.warn(
            "refused a Python worker: {} are connected, the most this executor serves",
            MAX_SESSIONS);
        closeQuietly(ch);
        continue;
      }
      WorkerSession[] self = new WorkerSession[1];
      self[0] =
          new WorkerSession(
              ch, auth, source, shmDir, watchdog, handshakeTimeout, () -> sessions.remove(self[0]));
      sessions.add(self[0]);
      daemon(self[0], "sparkccl-worker-session-" + THREADS.incrementAndGet()).start();
    }
  }

  /** Stops accepting, drops every worker (aborting what they left open) and deletes the files. */
  @Override
  public void close() {
    closed = true;
    closeQuietly(server);
    sessions.forEach(WorkerSession::close);
    try {
      acceptor.join(handshakeTimeout.toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    watchdog.shutdownNow();
    try {
      ChannelFiles.deleteTree(dir);
    } catch (IOException e) {
      LOG.warn("could not delete {}: {}", dir, e.toString());
    }
  }

  private static Thread daemon(Runnable r, String name) {
    Thread t = new Thread(r, name);
    t.setDaemon(true);
    return t;
  }

  private static void closeQuietly(java.io.Closeable c) {
    try {
      c.close();
    } catch (IOException e) {
      // closing anyway
    }
  }
}
