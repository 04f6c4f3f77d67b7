package org.sparkccl.comm;

import java.nio.ByteBuffer;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import org.sparkccl.CclException;
import org.sparkccl.bootstrap.Bootstrap;
import org.sparkccl.transport.FailureNotice;
import org.sparkccl.transport.local.LocalPipe;

/**
 * The ring between ranks that are threads of this JVM: in-memory pipes. Kernels that read the
 * previous rank's send slots in place (GPU kernels on one device) make the pipes copy nothing; a
 * barrier makes sure every rank has published its channels before any looks them up.
 *
 * <p>Each rank publishes this JVM's random identity, so the ranks can tell whether they all run in
 * one process whatever brought them together (threads with a {@code LocalBootstrap}, or barrier
 * tasks of one Spark executor that met through the plugin): with host kernels {@code
 * transport=auto} takes this ring when they do, as NCCL prefers its P2P transport within a node
 * over the network.
 */
final class LocalRing implements RingTransport {
  /** A channel of a rank of a communicator, for ranks of one JVM to find each other's. */
  private record ChannelId(long token, int rank, int channel) {}

  private static final ConcurrentHashMap<ChannelId, CommChannel> CHANNELS =
      new ConcurrentHashMap<>();

  /** This JVM's identity: random, so two processes never share it. */
  private static final byte[] THIS_JVM =
      ByteBuffer.allocate(Long.BYTES).putLong(new SecureRandom().nextLong()).array();

  @Override
  public String name() {
    return "local";
  }

  /** This JVM's random identity, as every rank of this ring publishes it. */
  static byte[] thisJvm() {
    return THIS_JVM.clone();
  }

  @Override
  public byte[] localInfo() {
    return thisJvm();
  }

  @Override
  public String unavailableReason() {
    return null;
  }

  /**
   * No: the tuner's costs are those of loopback sockets, which trees and recursive doubling use,
   * while this ring moves memory to memory; with 4 thread ranks the ring was ahead of both at 8 B
   * to 32 KiB on a 2-core VM ({@code docs/benchmarks.md}), so {@code algo=auto} keeps to it.
   */
  @Override
  public long tunedUpTo() {
    return -1;
  }

  @Override
  public String refusedBy(byte[][] infos) {
    int processes = (int) Arrays.stream(infos).map(ByteBuffer::wrap).distinct().count();
    return processes == 1 ? null : "the ranks run in " + processes + " processes, not one JVM";
  }

  @Override
  public void connect(
      CommContext ctx, Bootstrap bootstrap, long token, int next, int prev, byte[][] infos) {
    int rank = ctx.rank;
    boolean shared = ctx.channels[0].kernel.readsSenderSlots();
    // a neighbour's failure fails this rank at once, through the proxy's error path, which passes
    // it on around the ring
    Consumer<String> failed =
        message ->
            ctx.proxy.execute(
                () -> {
                  throw FailureNotice.raise(message);
                });
    for (CommChannel ch : ctx.channels) {
      ch.send = LocalPipe.sender(token, rank, next, ch.id, ctx.proxy::wake, failed);
      ch.recv =
          LocalPipe.receiver(
              token, prev, rank, ch.id, ctx.proxy::wake, failed, shared ? ch.recvFifo : null);
      CHANNELS.put(new ChannelId(token, rank, ch.id), ch);
    }
    try {
      bootstrap.allGather(new byte[0], ctx.config.timeout());
      for (CommChannel ch : ctx.channels) {
        CommChannel sender = CHANNELS.get(new ChannelId(token, prev, ch.id));
        if (sender == null) {
          // the identities matched, yet the previous rank did not publish here
          throw new CclException(
              "rank "
                  + rank
                  + ": transport=local but rank "
                  + prev
                  + " did not publish its channels in this JVM; expected ranks that are threads"
                  + " of one JVM");
        }
        if (shared) {
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
