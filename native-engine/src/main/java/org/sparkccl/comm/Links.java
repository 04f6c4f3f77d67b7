package org.sparkccl.comm;

import org.sparkccl.transport.socket.SocketTransport;

/**
 * A connected communicator's links: the socket listener (point-to-point links always use it), the
 * ring transport its channels run over, the point-to-point links, and whether every rank's threads
 * spin while work is in flight ({@link org.sparkccl.idle.AutoIdle#spinsWhenBusy}, the same on every
 * rank: the tuner then takes {@code tuner.spin.*}), and the smallest ring collective whose
 * transfers the proxy thread moves alone ({@code ring.proxyMinBytes} resolved by {@link
 * CollectiveLauncher#proxyMinBytes}; 0: none).
 */
record Links(
    SocketTransport sockets,
    RingTransport ring,
    PeerLinks peers,
    boolean everyRankSpins,
    long ringProxyMinBytes) {
  /**
   * Whether the ring and every point-to-point edge lie in shared memory, on every rank alike: the
   * tuner then takes its shared-memory constants ({@code tuner.shm.*}).
   */
  boolean inSharedMemory() {
    return ring.inMemory() && peers.allSharedUpTo() > 0;
  }
}
