package org.sparkccl.kernel;

import java.util.function.Supplier;
import org.sparkccl.CclTimeoutException;

/** What a kernel checks while it waits: abort and the no-progress deadline. */
public interface KernelGuard {
  /** Throws when the communicator is aborted. */
  void checkAbort();

  /** Nanoseconds a wait may last without progress. */
  long timeoutNanos();

  /** Describes a stalled wait for error messages ("no data from rank 3 (channel 1)"). */
  String describe(boolean sending);

  /** Between parks of a wait on {@code what}: throws on abort or past the timeout. */
  default void checkWait(long waitedNanos, String what) {
    checkAbort();
    if (waitedNanos > timeoutNanos()) {
      throw timedOut(waitedNanos, what);
    }
  }

  /** As above, with the text built only when it throws. */
  default void checkWait(long waitedNanos, Supplier<String> what) {
    checkAbort();
    if (waitedNanos > timeoutNanos()) {
      throw timedOut(waitedNanos, what.get());
    }
  }

  private CclTimeoutException timedOut(long waitedNanos, String what) {
    return new CclTimeoutException(
        what
            + " for "
            + waitedNanos / 1_000_000
            + " ms (timeout "
            + timeoutNanos() / 1_000_000
            + " ms)");
  }
}
