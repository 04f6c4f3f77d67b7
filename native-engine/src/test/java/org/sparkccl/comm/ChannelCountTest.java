package org.sparkccl.comm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.Arrays;
import java.util.function.Function;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.sparkccl.CclException;
import org.sparkccl.Communicator;
import org.sparkccl.DataType;
import org.sparkccl.RankHarness;
import org.sparkccl.ReduceOp;
import org.sparkccl.bootstrap.Bootstrap;
import org.sparkccl.comm.ChannelCount.RankView;
import org.sparkccl.config.CclConfig;
import org.sparkccl.config.IdleMode;
import org.sparkccl.config.Transport;
import org.sparkccl.device.HostDevice;

/**
 * {@code nChannels=auto}: two channels only where every rank's ring runs over sockets between host
 * buffers, its waits may spin, and every host's cores cover its ranks' polling threads with two
 * channels (a kernel thread each, and the proxy); the same count on every rank.
 */
@DisplayName("nChannels=auto")
class ChannelCountTest {
  private static final Duration WAIT = Duration.ofSeconds(60);

  private static RankView rank(String host, int cores) {
    return new RankView(host, true, IdleMode.AUTO, 0, cores, 0);
  }

  private static RankView[] ranks(int n, String host, int cores) {
    RankView[] out = new RankView[n];
    Arrays.fill(out, rank(host, cores));
    return out;
  }

  @Test
  @DisplayName("gives two channels where the host's cores cover three threads a rank, else one")
  void followsTheCores() {
    assertEquals(2, ChannelCount.choose(ranks(4, "a", 16)), "4 ranks on 16 cores: 12 threads");
    assertEquals(2, ChannelCount.choose(ranks(5, "a", 16)), "5 ranks on 16 cores: 15 threads");
    assertEquals(1, ChannelCount.choose(ranks(6, "a", 16)), "6 ranks on 16 cores: 18 threads");
    assertEquals(1, ChannelCount.choose(ranks(8, "a", 16)), "8 ranks on 16 cores: 24 threads");
    assertEquals(1, ChannelCount.choose(ranks(2, "a", 2)), "the 2-core VM: 6 threads");
    assertEquals(2, ChannelCount.choose(ranks(1, "a", 3)), "one rank a host, 3 cores");
  }

  @Test
  @DisplayName(
      "keeps one channel where any rank's host, mode, transport, cap or helpers forbid two")
  void anyRankThatCannotTakeTwoKeepsOne() {
    RankView[] twoHosts = {rank("a", 16), rank("a", 16), rank("b", 4), rank("b", 4)};
    assertEquals(1, ChannelCount.choose(twoHosts), "host b: 6 threads on 4 cores");
    twoHosts[2] = rank("b", 8);
    twoHosts[3] = rank("b", 8);
    assertEquals(2, ChannelCount.choose(twoHosts), "host b: 6 threads on 8 cores");
    for (IdleMode mode : IdleMode.values()) {
      RankView[] views = ranks(2, "a", 64);
      views[1] = new RankView("a", true, mode, 0, 64, 0);
      boolean spins = mode == IdleMode.AUTO || mode == IdleMode.SPIN;
      assertEquals(spins ? 2 : 1, ChannelCount.choose(views), "one rank with idle=" + mode);
    }
    RankView[] gpu = ranks(2, "a", 64);
    gpu[0] = new RankView("a", false, IdleMode.AUTO, 0, 64, 0);
    assertEquals(1, ChannelCount.choose(gpu), "a rank with GPU buffers");
    RankView[] capped = ranks(4, "a", 16);
    capped[3] = new RankView("a", true, IdleMode.AUTO, 0, 16, 2);
    assertEquals(1, ChannelCount.choose(capped), "idle.cpusPerRank=2: 8 cores for 12 threads");
    RankView[] helpers = ranks(4, "a", 16);
    helpers[0] = new RankView("a", true, IdleMode.AUTO, 1, 16, 0);
    assertEquals(1, ChannelCount.choose(helpers), "a socket helper a connection: 7 threads a rank");
  }

  @Test
  @DisplayName(
      "leaves a count alone; one channel, no exchange, for one rank or a transport not socket")
  void countsAndSingleRanks() {
    CclConfig three = CclConfig.builder().nChannels(3).build();
    assertSame(three, ChannelCount.resolve(three, failingBootstrap(2), HostDevice.INSTANCE));
    CclConfig auto = CclConfig.builder().transport(Transport.SOCKET).build();
    assertEquals(CclConfig.CHANNELS_AUTO, auto.nChannels());
    assertEquals(
        1, ChannelCount.resolve(auto, failingBootstrap(1), HostDevice.INSTANCE).nChannels());
    for (Transport t : Transport.values()) {
      if (t != Transport.SOCKET) {
        CclConfig other = auto.toBuilder().transport(t).build();
        assertEquals(
            1,
            ChannelCount.resolve(other, failingBootstrap(4), HostDevice.INSTANCE).nChannels(),
            "transport=" + t + ": one channel, no exchange");
      }
    }
  }

  @Test
  @DisplayName("names a rank whose exchange is not nChannels=auto's")
  void aRankWithAnotherCountIsNamed() {
    Bootstrap other = bootstrap(2, mine -> new byte[][] {mine, new byte[] {1, 2, 3, 4, 5, 6, 7}});
    CclConfig auto = CclConfig.builder().transport(Transport.SOCKET).build();
    CclException e =
        assertThrows(
            CclException.class, () -> ChannelCount.resolve(auto, other, HostDevice.INSTANCE));
    assertTrue(
        e.getMessage().contains("rank 1 sent 7 unreadable bytes for nChannels=auto"),
        e.getMessage());
  }

  @Test
  @DisplayName("gives two socket ranks of this machine the count its cores allow, and they agree")
  void realRanksAgreeAndComputeRightly() {
    int cores = Runtime.getRuntime().availableProcessors();
    // two ranks of this host, a kernel thread per channel and the proxy: 2 x 3 threads for two
    int expected = 2 * 3 <= cores ? 2 : 1;
    CclConfig config =
        CclConfig.builder().transport(Transport.SOCKET).timeout(Duration.ofSeconds(30)).build();
    Communicator[] comms = RankHarness.createAll(2, config, WAIT);
    try {
      for (Communicator c : comms) {
        assertEquals(
            expected, c.config().nChannels(), "rank " + c.rank() + ", " + cores + " cores");
      }
      assertNull(
          RankHarness.allReduceAndCheck(
              comms, 300_001, DataType.FLOAT32, ReduceOp.SUM, false, 7, WAIT));
    } finally {
      RankHarness.closeAll(comms, WAIT);
    }
    CclConfig backoff = config.toBuilder().idle(IdleMode.BACKOFF).build();
    Communicator[] backingOff = RankHarness.createAll(2, backoff, WAIT);
    try {
      for (Communicator c : backingOff) {
        assertEquals(1, c.config().nChannels(), "idle=backoff, rank " + c.rank());
      }
    } finally {
      RankHarness.closeAll(backingOff, WAIT);
    }
  }

  private static Bootstrap failingBootstrap(int n) {
    return bootstrap(
        n,
        mine -> {
          throw new AssertionError("no exchange expected");
        });
  }

  /** A bootstrap of {@code n} ranks, this one rank 0, whose exchange {@code gather} answers. */
  private static Bootstrap bootstrap(int n, Function<byte[], byte[][]> gather) {
    return new Bootstrap() {
      @Override
      public int rank() {
        return 0;
      }

      @Override
      public int nRanks() {
        return n;
      }

      @Override
      public byte[][] allGather(byte[] mine, Duration timeout) {
        return gather.apply(mine);
      }
    };
  }
}
