package org.sparkccl.comm;

import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.sparkccl.CclException;
import org.sparkccl.bootstrap.Bootstrap;
import org.sparkccl.config.CclConfig;
import org.sparkccl.config.IdleMode;
import org.sparkccl.config.Transport;
import org.sparkccl.device.Device;
import org.sparkccl.device.HostDevice;
import org.sparkccl.idle.AutoIdle;

/**
 * Resolves {@code nChannels=auto} to one count that every rank agrees on, before the channels are
 * made (their connections, FIFOs and kernel threads exist from the start).
 *
 * <p>Two channels where every rank's ring runs over sockets between host buffers ({@code
 * transport=socket}, {@code device=host}), its waits may spin ({@code idle} {@code auto} or {@code
 * spin}), and every host's cores cover its ranks' polling threads with two channels; one elsewhere.
 * Each channel's kernel thread moves its own sockets, so two channels move a rank's bytes on two
 * cores. On a 16-core host, 4 ranks over sockets, two channels took 0.69-0.89 of one channel's time
 * for allReduce at 512 KiB-16 MiB and won at 2-8 MiB for the other collectives; at 8 ranks, whose
 * two threads a rank fill the 16 cores, they gained nothing, and at 6 ranks with waits that back
 * off they lost (docs/benchmarks.md, "Two channels where the cores allow them"). Shared memory, UCX
 * and GPU rings were not measured with two channels and keep one.
 *
 * <pre>{@code
 * CclConfig resolved = ChannelCount.resolve(config, bootstrap, device); // nChannels 1 or 2
 * }</pre>
 */
final class ChannelCount {
  /** What {@code auto} gives where the ranks qualify. */
  static final int TWO = 2;

  /**
   * Opens every rank's message, so that a rank whose exchange is another one (its {@code nChannels}
   * is a count, not {@code auto}) is named instead of misread.
   */
  private static final int MAGIC = 0x4e434831;

  private ChannelCount() {}

  /** What one rank says for the choice ({@code hostBuffers}: {@code device=host}). */
  record RankView(
      String host, boolean hostBuffers, IdleMode idle, int socketThreads, int cores, int cap) {}

  /**
   * {@code config} with {@code nChannels=auto} resolved; any other count unchanged. With {@code
   * transport=socket} the ranks agree through one exchange (every such rank must call it); with any
   * other transport, or one rank, it is one channel and no exchange, so that the default transport
   * pays nothing for the choice.
   */
  static CclConfig resolve(CclConfig config, Bootstrap bootstrap, Device device) {
    if (config.nChannels() != CclConfig.CHANNELS_AUTO) {
      return config;
    }
    boolean exchange = bootstrap.nRanks() > 1 && config.transport() == Transport.SOCKET;
    int channels = exchange ? choose(exchange(config, bootstrap, device)) : 1;
    return config.toBuilder().nChannels(channels).build();
  }

  /** The same count on every rank, from what every rank said. */
  static int choose(RankView[] ranks) {
    String[] hosts = new String[ranks.length];
    for (int r = 0; r < ranks.length; r++) {
      hosts[r] = ranks[r].host();
    }
    Map<String, Integer> onHost = HostIdentity.ranksPerHost(hosts);
    for (RankView r : ranks) {
      boolean mayTwo = r.idle() == IdleMode.AUTO || r.idle() == IdleMode.SPIN;
      // where idle=auto would spin with two channels: spin alone does not make the cores
      int threads = AutoIdle.pollingThreadsPerRank(TWO, r.socketThreads());
      if (!r.hostBuffers()
          || !mayTwo
          || !AutoIdle.spinsWhenBusy(
              IdleMode.AUTO, onHost.get(r.host()), threads, r.cores(), r.cap())) {
        return 1;
      }
    }
    return TWO;
  }

  private static RankView[] exchange(CclConfig config, Bootstrap bootstrap, Device device) {
    byte[] host = HostIdentity.local().getBytes(StandardCharsets.UTF_8);
    boolean hostBuffers = device instanceof HostDevice;
    ByteBuffer out = ByteBuffer.allocate(4 + 1 + 1 + 4 + 4 + 4 + 4 + host.length);
    out.putInt(MAGIC).put((byte) (hostBuffers ? 1 : 0)).put((byte) config.idle().ordinal());
    out.putInt(config.socketThreads()).putInt(CommContext.availableCores());
    out.putInt(config.idleCpusPerRank()).putInt(host.length).put(host);
    byte[][] all = bootstrap.allGather(out.array(), config.timeout());
    IdleMode[] modes = IdleMode.values();
    RankView[] views = new RankView[all.length];
    for (int r = 0; r < all.length; r++) {
      try {
        ByteBuffer in = ByteBuffer.wrap(all[r]);
        if (in.getInt() != MAGIC) {
          throw new BufferUnderflowException();
        }
        boolean buffers = in.get() != 0;
        int mode = in.get();
        int threads = in.getInt();
        int cores = in.getInt();
        int cap = in.getInt();
        int length = in.getInt();
        if (mode < 0 || mode >= modes.length || length < 0 || length > in.remaining()) {
          throw new BufferUnderflowException();
        }
        byte[] theirs = new byte[length];
        in.get(theirs);
        views[r] =
            new RankView(
                new String(theirs, StandardCharsets.UTF_8),
                buffers,
                modes[mode],
                threads,
                cores,
                cap);
      } catch (BufferUnderflowException e) {
        throw new CclException(
            "rank "
                + bootstrap.rank()
                + ": rank "
                + r
                + " sent "
                + all[r].length
                + " unreadable bytes for nChannels=auto; expected every rank to have"
                + " nChannels=auto and this engine's version");
      }
    }
    return views;
  }
}
