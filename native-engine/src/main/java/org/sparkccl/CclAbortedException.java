package org.sparkccl;

/** The communicator was aborted (by {@link Communicator#abort()} or by an earlier failure). */
public class CclAbortedException extends CclException {
  public CclAbortedException(String message, Throwable cause) {
    super(message, cause);
  }
}
