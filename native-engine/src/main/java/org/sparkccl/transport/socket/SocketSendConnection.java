package org.sparkccl.transport.socket;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import org.sparkccl.transport.NetRequest;
import org.sparkccl.transport.SendConnection;

/** The sending end of a socket connection. */
final class SocketSendConnection extends SocketConnection implements SendConnection {
  private final ByteBuffer[] gather = new ByteBuffer[2];

  SocketSendConnection(
      String description, int peer, SocketChannel control, SocketChannel[] data, int nThreads,
      Selector proxySelector, Runnable wakeProxy) throws IOException {
    super(description, peer, control, data, nThreads, proxySelector, wakeProxy);
  }

  @Override
  public NetRequest postSend(ByteBuffer slot, int size, long step) {
    SocketRequest r = new SocketRequest(this, slot, step);
    r.size = size;
    r.inline = isInline(size);
    r.payload = slot.slice(0, size);
    r.header.putLong(0, step).putInt(8, size).putInt(12, 0);
    queue.add(r);
    progress();
    return r;
  }

  @Override
  void progress() {
    try {
      SocketRequest r;
      while ((r = queue.peek()) != null) {
        if (r.inline) {
          gather[0] = r.header;
          gather[1] = r.payload;
          control.write(gather);
          if (r.payload.hasRemaining()) {
            interest(SelectionKey.OP_WRITE);
            return;
          }
        } else {
          control.write(r.header);
          if (r.header.hasRemaining()) {
            interest(SelectionKey.OP_WRITE);
            return;
          }
          r.chunks = dispatchChunks(r.payload, r.size, true);
        }
        r.controlDone = true;
        queue.poll();
      }
      interest(0);
    } catch (IOException e) {
      throw failure("sending failed", e);
    }
  }
}
