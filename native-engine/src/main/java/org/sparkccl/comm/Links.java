package org.sparkccl.comm;

import org.sparkccl.transport.socket.SocketTransport;

/**
 * A connected communicator's links: the socket listener (point-to-point links always use it), the
 * ring transport its channels run over, the point-to-point links, and rank 0's random token that
 * names this communicator on the wire.
 */
record Links(SocketTransport sockets, RingTransport ring, PeerLinks peers, long token) {}
