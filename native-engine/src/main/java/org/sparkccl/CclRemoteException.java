package org.sparkccl;

/**
 * Another rank failed and told this one why; the message is that rank's own. A mismatch that
 * another rank saw arrives as {@link CclMismatchException} instead, the same kind on every rank.
 */
public class CclRemoteException extends CclException {
  public CclRemoteException(String message) {
    super(message);
  }
}
