package org.sparkccl.kernel;

import org.sparkccl.CclException;

/**
 * Whether the process at the other end of an edge in shared memory still runs, asked during a long
 * wait on that edge: nothing else tells a rank that a peer process died (no socket closes), so
 * without it a killed peer fails the rank only at the timeout. One per edge, used by the one kernel
 * thread that waits on it.
 *
 * <pre>{@code
 * PeerLiveness alive = PeerLiveness.of(peerPid); // null: not watched
 * if (alive.hasExited(waitedNanos)) throw alive.exited("waiting for data from rank 2", waitedNanos);
 * }</pre>
 */
public final class PeerLiveness {
  /**
   * How long a wait lasts before it asks, and how often it asks after that: a killed peer fails
   * this rank within a fraction of a second, and a healthy wait costs one look at /proc every 50
   * ms.
   */
  static final long LIVENESS_NANOS = 50_000_000;

  private final ProcessHandle process;
  private long nextCheck;

  private PeerLiveness(ProcessHandle process) {
    this.process = process;
  }

  /**
   * The watch of process {@code pid} as this one sees it now, or null for none ({@code pid <= 0}),
   * this process, or one it cannot see (another PID namespace sharing {@code /dev/shm}): only a
   * process seen alive here may later count as dead. A handle remembers the process's start, so a
   * reused PID is not it.
   */
  public static PeerLiveness of(long pid) {
    if (pid <= 0 || pid == ProcessHandle.current().pid()) {
      return null;
    }
    return ProcessHandle.of(pid).map(PeerLiveness::new).orElse(null);
  }

  /** The process watched. */
  public long pid() {
    return process.pid();
  }

  /**
   * Whether the process has exited, once the wait has lasted {@link #LIVENESS_NANOS}; asks at most
   * once per {@link #LIVENESS_NANOS}. Allocates nothing.
   */
  boolean hasExited(long waitedNanos) {
    if (waitedNanos < LIVENESS_NANOS) {
      return false;
    }
    long now = System.nanoTime();
    if (now - nextCheck < 0) {
      return false;
    }
    nextCheck = now + LIVENESS_NANOS;
    return !process.isAlive();
  }

  /** The failure of wait {@code what} when {@link #hasExited} said so. */
  CclException exited(String what, long waitedNanos) {
    return new CclException(
        what
            + ": its process "
            + process.pid()
            + " has exited (found after "
            + waitedNanos / 1_000_000
            + " ms of waiting)");
  }
}
