package org.sparkccl.comm;

import org.sparkccl.transport.socket.SocketTransport;

/**
 * A connected communicator's links: the socket listener (point-to-point links always use it), the
 * ring transport its channels run over, the point-to-point links, and whether every rank's threads
 * spin while work is in flight ({@link org.sparkccl.idle.AutoIdle#spinsWhenBusy}, the same on every
 * rank: the tuner then takes {@code tuner.spin.*}), and whether every host has twice the cores its
 * ranks' polling threads take ({@link org.sparkccl.idle.AutoIdle#sparesCores}: {@code
 * ring.proxyMinBytes=auto} then gives large rings to the proxy thread).
 */
record Links(
    SocketTransport sockets,
    RingTransport ring,
    PeerLinks peers,
    boolean everyRankSpins,
    boolean coresToSpare) {
  /**
   * Whether the ring and every point-to-point edge lie in shared memory, on every rank alike: the
   * tuner then takes its shared-memory constants ({@code tuner.shm.*}).
   */
  boolean inSharedMemory() {
    return ring.inMemory() && peers.allSharedUpTo() > 0;
  }
}
