package org.sparkccl.transport;

import org.sparkccl.CclException;
import org.sparkccl.CclMismatchException;
import org.sparkccl.CclRemoteException;

/**
 * The text a failed rank sends its peers, and the exception a peer raises on reading it. A mismatch
 * keeps its kind across the wire: every rank of a mismatched sequence throws {@link
 * CclMismatchException}, whichever rank's slot check saw it first, so that a caller can catch the
 * same kind on every rank. Any other failure arrives as {@link CclRemoteException}.
 */
public final class FailureNotice {
  /** Leads a mismatch's text; a rank's own messages start with "rank", never with this. */
  private static final String MISMATCH = "mismatch: ";

  private FailureNotice() {}

  /**
   * The notice for {@code failure}: its message, marked when a mismatch caused it (the engine may
   * record a mismatch wrapped as the abort it caused).
   */
  public static String of(CclException failure) {
    String message = String.valueOf(failure.getMessage());
    for (Throwable t = failure; t != null; t = t.getCause()) {
      if (t instanceof CclMismatchException) {
        return MISMATCH + message;
      }
    }
    return message;
  }

  /** What a rank told of {@code notice} throws. */
  public static CclException raise(String notice) {
    return notice.startsWith(MISMATCH)
        ? new CclMismatchException(notice.substring(MISMATCH.length()))
        : new CclRemoteException(notice);
  }
}
