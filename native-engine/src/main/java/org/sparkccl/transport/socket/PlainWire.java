package org.sparkccl.transport.socket;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;

/** The socket itself: what a connection uses when encryption is off (nothing added per call). */
final class PlainWire implements Wire {
  private final SocketChannel channel;

  PlainWire(SocketChannel channel) {
    this.channel = channel;
  }

  @Override
  public SocketChannel channel() {
    return channel;
  }

  @Override
  public int read(ByteBuffer dst) throws IOException {
    return channel.read(dst);
  }

  @Override
  public int write(ByteBuffer src) throws IOException {
    return channel.write(src);
  }

  @Override
  public long write(ByteBuffer[] srcs) throws IOException {
    return channel.write(srcs);
  }
}
