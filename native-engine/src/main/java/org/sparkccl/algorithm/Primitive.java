package org.sparkccl.algorithm;

/** The kernel primitives of the seed, by what each does with its receive and send FIFOs. */
public enum Primitive {
  SEND(false, true),
  RECV(true, false),
  RECV_REDUCE_SEND(true, true),
  RECV_REDUCE_COPY_SEND(true, true),
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
}
