package org.sparkccl.comm;

import org.sparkccl.transport.socket.SocketTransport;

/**
 * A connected communicator's links: the socket listener (point-to-point links always use it), the
 * ring transport its channels run over, and the point-to-point links.
 */
record Links(SocketTransport sockets, RingTransport ring, PeerLinks peers) {}
