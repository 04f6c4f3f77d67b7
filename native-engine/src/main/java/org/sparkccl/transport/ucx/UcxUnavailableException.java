package org.sparkccl.transport.ucx;

import org.sparkccl.CclException;

/** The UCX native libraries do not load on this machine; the message says why. */
public final class UcxUnavailableException extends CclException {
  public UcxUnavailableException(String message) {
    super(message);
  }
}
