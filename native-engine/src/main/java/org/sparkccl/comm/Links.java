package org.sparkccl.comm;

import org.sparkccl.transport.socket.SocketTransport;

/**
 * A connected communicator's links: the socket listener (point-to-point links always use it), the
 * ring transport its channels run over, and the point-to-point links.
 */
record Links(SocketTransport sockets, RingTransport ring, PeerLinks peers) {
  /**
   * Whether the ring and every point-to-point edge lie in shared memory, on every rank alike: the
   * tuner then takes its shared-memory constants ({@code tuner.shm.*}).
   */
  boolean inSharedMemory() {
    return ring.inMemory() && peers.allSharedUpTo() > 0;
  }
}
