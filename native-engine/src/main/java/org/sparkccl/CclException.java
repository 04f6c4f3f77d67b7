package org.sparkccl;

/** A collective failed: a peer died, a connection closed, a transfer stalled, or a call was bad. */
public class CclException extends RuntimeException {
  public CclException(String message) {
    super(message);
  }

  public CclException(String message, Throwable cause) {
    super(message, cause);
  }
}
