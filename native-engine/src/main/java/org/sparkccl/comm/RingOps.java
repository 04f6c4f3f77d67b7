package org.sparkccl.comm;

import org.sparkccl.proxy.RecvProxyOp;
import org.sparkccl.proxy.SendProxyOp;

/**
 * The last few proxy operations of each ring channel, so that a launch restarts one the proxy has
 * finished with instead of making a new one: back-to-back collectives on a channel then allocate no
 * operations. An operation still held by the proxy (collectives launched faster than they finish)
 * is left alone and a new one takes its place. Used under the launch lock only.
 */
final class RingOps {
  /** Operations kept per channel and direction: more than collectives usually in flight. */
  private static final int DEPTH = 4;

  private final SendProxyOp[][] sends;
  private final RecvProxyOp[][] recvs;
  private final int[] nextSend;
  private final int[] nextRecv;

  RingOps(int channels) {
    sends = new SendProxyOp[channels][DEPTH];
    recvs = new RecvProxyOp[channels][DEPTH];
    nextSend = new int[channels];
    nextRecv = new int[channels];
  }

  /** A finished send operation of channel {@code c} to restart, or null: then {@link #keep}. */
  SendProxyOp reusableSend(int c) {
    SendProxyOp op = sends[c][nextSend[c]];
    if (op != null && op.isUnlinked()) {
      nextSend[c] = (nextSend[c] + 1) % DEPTH;
      return op;
    }
    return null;
  }

  /** A finished receive operation of channel {@code c} to restart, or null: then {@link #keep}. */
  RecvProxyOp reusableRecv(int c) {
    RecvProxyOp op = recvs[c][nextRecv[c]];
    if (op != null && op.isUnlinked()) {
      nextRecv[c] = (nextRecv[c] + 1) % DEPTH;
      return op;
    }
    return null;
  }

  /** Keeps a new send operation of channel {@code c} for reuse. */
  void keep(int c, SendProxyOp op) {
    sends[c][nextSend[c]] = op;
    nextSend[c] = (nextSend[c] + 1) % DEPTH;
  }

  /** Keeps a new receive operation of channel {@code c} for reuse. */
  void keep(int c, RecvProxyOp op) {
    recvs[c][nextRecv[c]] = op;
    nextRecv[c] = (nextRecv[c] + 1) % DEPTH;
  }
}
