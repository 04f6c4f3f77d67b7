package org.sparkccl.comm;

import java.util.concurrent.ConcurrentHashMap;
import org.sparkccl.bootstrap.Bootstrap;
import org.sparkccl.bootstrap.LocalBootstrap;
import org.sparkccl.transport.local.LocalPipe;

/**
 * The ring between ranks that are threads of this JVM: in-memory pipes. Kernels that read the
 * previous rank's send slots in place (GPU kernels on one device) make the pipes copy nothing; a
 * barrier makes sure every rank has published its channels before any looks them up.
 */
final class LocalRing implements RingTransport {
  /** A channel of a rank of a communicator, for ranks of one JVM to find each other's. */
  private record ChannelId(long token, int rank, int channel) {}

  private static final ConcurrentHashMap<ChannelId, CommChannel> CHANNELS =
      new ConcurrentHashMap<>();

  private static final byte[] PRESENT = {1};

  /**
   * @throws IllegalArgumentException when the ranks are not threads of one JVM
   */
  LocalRing(Bootstrap bootstrap) {
    if (!(bootstrap instanceof LocalBootstrap)) {
      throw new IllegalArgumentException(
          "transport=local needs ranks that are threads of one JVM (LocalBootstrap); this rank"
              + " has "
              + bootstrap.getClass().getSimpleName());
    }
  }

  @Override
  public String name() {
    return "local";
  }

  @Override
  public byte[] localInfo() {
    return PRESENT;
  }

  @Override
  public String unavailableReason() {
    return null;
  }

  @Override
  public void connect(
      CommContext ctx, Bootstrap bootstrap, long token, int next, int prev, byte[][] infos) {
    int rank = ctx.rank;
    boolean shared = ctx.channels[0].kernel.readsSenderSlots();
    for (CommChannel ch : ctx.channels) {
      ch.send = LocalPipe.sender(token, rank, next, ch.id, ctx.proxy::wake);
      ch.recv =
          LocalPipe.receiver(
              token, prev, rank, ch.id, ctx.proxy::wake, shared ? ch.recvFifo : null);
      CHANNELS.put(new ChannelId(token, rank, ch.id), ch);
    }
    try {
      bootstrap.allGather(new byte[0], ctx.config.timeout());
      if (shared) {
        for (CommChannel ch : ctx.channels) {
          CommChannel sender = CHANNELS.get(new ChannelId(token, prev, ch.id));
          ch.kernel.readSlotsOf(sender.kernel);
        }
      }
      bootstrap.allGather(new byte[0], ctx.config.timeout());
    } finally {
      // also when a rank timed out or the ranks sit on different GPUs: nothing stays behind
      for (CommChannel ch : ctx.channels) {
        CHANNELS.remove(new ChannelId(token, rank, ch.id));
      }
    }
  }

  @Override
  public String describe(CommContext ctx) {
    return "ranks are threads of one JVM";
  }
}
