package org.sparkccl.comm;

import org.sparkccl.CclAbortedException;
import org.sparkccl.CclException;

/**
 * A communicator's sticky failure, like NCCL's async error: the first failure wins and every later
 * call sees it. Also whether the communicator was closed. Safe from any thread.
 */
final class FailureState {
  private final int rank;
  private volatile CclException failure;
  private volatile boolean closed;

  FailureState(int rank) {
    this.rank = rank;
  }

  /** Records {@code e} unless a failure is already recorded; returns whether it was the first. */
  synchronized boolean record(CclException e) {
    if (failure != null) {
      return false;
    }
    failure = e;
    return true;
  }

  /** The failure, or null while the communicator is healthy. */
  CclException get() {
    return failure;
  }

  /** Marks the communicator closed; returns whether it was open. */
  synchronized boolean close() {
    boolean wasOpen = !closed;
    closed = true;
    return wasOpen;
  }

  /** Throws when the communicator has failed or is closed. */
  void checkUsable() {
    CclException f = failure;
    if (f != null) {
      throw new CclAbortedException(
          "rank " + rank + ": communicator is aborted: " + f.getMessage(), f);
    }
    if (closed) {
      throw new IllegalStateException("rank " + rank + ": communicator is closed");
    }
  }

  /** The error a call {@code what} gets when the communicator failed with {@code cause}. */
  CclAbortedException aborted(String what, CclException cause) {
    return new CclAbortedException(
        "rank " + rank + ": " + what + " failed: " + cause.getMessage(), cause);
  }

  /** Wraps anything thrown into a {@link CclException} that names this rank. */
  CclException asCcl(Throwable e, String what) {
    return e instanceof CclException c
        ? c
        : new CclException("rank " + rank + ": " + what + " failed: " + e, e);
  }
}
