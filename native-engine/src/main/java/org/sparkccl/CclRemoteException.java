package org.sparkccl;

/** Another rank failed and told this one why; the message is that rank's own. */
public class CclRemoteException extends CclException {
  public CclRemoteException(String message) {
    super(message);
  }
}
