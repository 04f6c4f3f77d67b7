package org.sparkccl.comm;

import java.nio.charset.StandardCharsets;
import org.sparkccl.bootstrap.Bootstrap;
import org.sparkccl.transport.RecvConnection;
import org.sparkccl.transport.socket.SocketTransport;

/** The ring over sockets (NCCL's socket {@code net}): available wherever the listener is. */
final class SocketRing implements RingTransport {
  private final SocketTransport sockets;

  SocketRing(SocketTransport sockets) {
    this.sockets = sockets;
  }

  @Override
  public String name() {
    return "socket";
  }

  @Override
  public byte[] localInfo() {
    return sockets.address().getBytes(StandardCharsets.UTF_8);
  }

  @Override
  public String unavailableReason() {
    return null;
  }

  @Override
  public void connect(
      CommContext ctx, Bootstrap bootstrap, long token, int next, int prev, byte[][] infos) {
    long deadline = System.nanoTime() + ctx.timeoutNanos;
    String nextAddress = new String(infos[next], StandardCharsets.UTF_8);
    for (CommChannel ch : ctx.channels) {
      ch.send =
          sockets.connect(
              nextAddress, next, ch.id, token, ctx.proxy.selector(), ctx.proxy::wake, deadline);
    }
    RecvConnection[] recvs =
        sockets.accept(
            prev, ctx.channels.length, token, ctx.proxy.selector(), ctx.proxy::wake, deadline);
    for (CommChannel ch : ctx.channels) {
      ch.recv = recvs[ch.id];
    }
  }
}
