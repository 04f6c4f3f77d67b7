package org.sparkccl.transport.ucx;

import org.openucx.jucx.UcxCallback;
import org.openucx.jucx.ucp.UcpRequest;

/** Records how a UCX request ended; UCX calls it on the proxy thread, inside progress. */
class Completion extends UcxCallback {
  private boolean done;
  private String error;

  @Override
  public void onSuccess(UcpRequest request) {
    done = true;
  }

  @Override
  public void onError(int status, String message) {
    error = message + " (UCS status " + status + ")";
    done = true;
  }

  /** Whether it ended, successfully or not; see {@link #error()}. */
  boolean isDone(UcpRequest request) {
    return done || (request != null && request.isCompleted());
  }

  /** The failure, or null. */
  String error() {
    return error;
  }
}
