package org.sparkccl.algorithm;

/**
 * NCCL's kernel primitives, by what each does with its receive and send FIFOs and with the
 * collective's source and destination buffers.
 */
public enum Primitive {
  /** Send source. */
  SEND(false, true),
  /** Copy source to destination and send it (a root's or an all-gather's own data). */
  COPY_SEND(false, true),
  /** Receive into destination. */
  RECV(true, false),
  /** Receive, reduce with source, send. */
  RECV_REDUCE_SEND(true, true),
  /** Receive, reduce with source into destination: a final result. */
  RECV_REDUCE_COPY(true, false),
  /** Receive, reduce with source into destination and send: a final result passed on. */
  RECV_REDUCE_COPY_SEND(true, true),
  /** Receive into destination and send on. */
  RECV_COPY_SEND(true, true);

  private final boolean receives;
  private final boolean sends;

  Primitive(boolean receives, boolean sends) {
    this.receives = receives;
    this.sends = sends;
  }

  public boolean receives() {
    return receives;
  }

  public boolean sends() {
    return sends;
  }

  /** Whether this primitive writes a fully reduced result (where {@code avg} divides). */
  public boolean isFinalReduction() {
    return this == RECV_REDUCE_COPY || this == RECV_REDUCE_COPY_SEND;
  }
}
