package org.sparkccl.comm;

import org.sparkccl.proxy.OpSite;

/**
 * The {@link OpSite}s of each ring channel's two proxy operations, made on the first launch (the
 * peers are known once the ring is connected) and reused by every later one.
 */
final class RingSites {
  private final int rank;
  private final OpSite[] sends;
  private final OpSite[] recvs;

  RingSites(int rank, int channels) {
    this.rank = rank;
    this.sends = new OpSite[channels];
    this.recvs = new OpSite[channels];
  }

  OpSite send(CommChannel ch) {
    OpSite s = sends[ch.id];
    if (s == null) {
      s = new OpSite(rank, "sending to rank " + ch.send.peer() + " (channel " + ch.id + ")");
      sends[ch.id] = s;
    }
    return s;
  }

  OpSite recv(CommChannel ch) {
    OpSite s = recvs[ch.id];
    if (s == null) {
      s = new OpSite(rank, "receiving from rank " + ch.recv.peer() + " (channel " + ch.id + ")");
      recvs[ch.id] = s;
    }
    return s;
  }
}
