package org.sparkccl.transport.socket;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.charset.StandardCharsets;
import org.sparkccl.comm.CollectiveCall;
import org.sparkccl.idle.IdleStrategies;
import org.sparkccl.transport.FailureNotice;
import org.sparkccl.transport.NetRequest;
import org.sparkccl.transport.RecvConnection;

/** The receiving end of a socket connection. */
final class SocketRecvConnection extends SocketConnection implements RecvConnection {
  SocketRecvConnection(
      String description,
      int peer,
      Wire control,
      Wire[] data,
      int nThreads,
      IdleStrategies idle,
      Selector proxySelector,
      Runnable wakeProxy)
      throws IOException {
    super(
        description,
        peer,
        new StagedReadWire(control),
        data,
        nThreads,
        idle,
        proxySelector,
        wakeProxy);
  }

  /** A socket reads into any direct memory; a sealed one opens records into it. */
  @Override
  public boolean readsIntoAnyMemory() {
    return true;
  }

  @Override
  public NetRequest postRecv(ByteBuffer slot, long step) {
    SocketRequest r = request(slot, step);
    queue.add(r);
    progress();
    return r;
  }

  @Override
  void progress() {
    try {
      SocketRequest r;
      while ((r = queue.peek()) != null) {
        if (r.header.hasRemaining()) {
          read(r.header);
          if (r.header.hasRemaining()) {
            interest(SelectionKey.OP_READ);
            return;
          }
          parseHeader(r);
        }
        if (r.inline) {
          if (r.payload.hasRemaining()) {
            read(r.payload);
            if (r.payload.hasRemaining()) {
              interest(SelectionKey.OP_READ);
              return;
            }
          }
        } else if (r.chunks == null) {
          r.chunks = dispatchChunks(r.payload, r.size, false);
        }
        r.controlDone = true;
        queue.poll();
      }
      interest(0);
    } catch (IOException e) {
      throw failure("receiving failed", e);
    }
  }

  /** Reads a failure notice's text (the peer has stopped sending: a short blocking wait). */
  private String readNotice(int size) throws IOException {
    ByteBuffer text = ByteBuffer.allocate(Math.max(0, Math.min(size, 64 << 10)));
    long deadline = System.nanoTime() + 1_000_000_000L;
    while (text.hasRemaining() && System.nanoTime() < deadline) {
      if (wire.read(text) < 0) {
        break;
      }
    }
    return new String(text.array(), 0, text.position(), StandardCharsets.UTF_8);
  }

  /** Reads what is there; throws when the peer has closed. */
  private void read(ByteBuffer into) throws IOException {
    if (wire.read(into) < 0) {
      throw failure("connection closed by the peer (did the peer process die or abort?)", null);
    }
  }

  @Override
  public void announce(CollectiveCall call) {
    ByteBuffer frame = ByteBuffer.allocate(SocketRequest.HEADER_BYTES);
    frame.putLong(0, -1).putInt(8, 0).putInt(12, SocketRequest.FLAG_ANNOUNCE);
    call.encode(frame, SocketRequest.CALL_OFFSET);
    if (!writeFrame(wire, frame)) {
      throw failure("announcing the call failed (the socket is closed now)", null);
    }
  }

  @Override
  public void notifyPeer(boolean failed, String message) {
    writeFrame(wire, failed ? SocketRequest.FLAG_ABORT : SocketRequest.FLAG_CLOSE, message);
  }

  private void parseHeader(SocketRequest r) throws IOException {
    long step = r.header.getLong(0);
    int size = r.header.getInt(8);
    if (r.header.getInt(12) == SocketRequest.FLAG_ABORT) {
      throw FailureNotice.raise(readNotice(size));
    }
    r.call = CollectiveCall.decode(r.header, SocketRequest.CALL_OFFSET);
    if (step != r.step || size < 0 || size > r.slot.capacity()) {
      throw failure(
          "protocol error: got step "
              + step
              + " of "
              + size
              + " bytes, expected step "
              + r.step
              + " of at most "
              + r.slot.capacity()
              + " bytes",
          null);
    }
    r.size = size;
    r.inline = isInline(size);
    r.payload = r.payloadOf(size);
  }
}
