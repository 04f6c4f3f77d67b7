package org.sparkccl.transport.ucx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.openucx.jucx.ucp.UcpContext;
import org.openucx.jucx.ucp.UcpEndpoint;
import org.openucx.jucx.ucp.UcpEndpointParams;
import org.openucx.jucx.ucp.UcpParams;
import org.openucx.jucx.ucp.UcpRequest;
import org.openucx.jucx.ucp.UcpWorker;
import org.openucx.jucx.ucp.UcpWorkerParams;
import org.sparkccl.Communicator;
import org.sparkccl.DataType;
import org.sparkccl.NeedsUcx;
import org.sparkccl.RankHarness;
import org.sparkccl.ReduceOp;
import org.sparkccl.SecretBootstrap;
import org.sparkccl.auth.ChallengeResponse;
import org.sparkccl.bootstrap.LocalBootstrap;
import org.sparkccl.config.CclConfig;
import org.sparkccl.config.Transport;

/**
 * UCX control notices prove the communicator's secret: a stranger that read the bootstrap exchange
 * (so it has every worker address) and sends the control tag from its own UCX worker is refused and
 * changes nothing; ranks whose secrets differ do not form a UCX ring.
 */
@DisplayName("UCX notices prove the communicator's secret")
class UcxNoticeAuthTest {
  private static final Duration WAIT = Duration.ofSeconds(60);
  private static final byte[] APP = "application secret".getBytes(StandardCharsets.UTF_8);

  @BeforeEach
  void needsUcx() {
    NeedsUcx.assume("UcxNoticeAuthTest");
  }

  private static CclConfig config(Duration timeout) {
    return CclConfig.builder().transport(Transport.UCX).nChannels(1).timeout(timeout).build();
  }

  @Test
  @Timeout(120)
  @DisplayName(
      "forged notices from another UCX worker are refused; the ring still reduces correctly")
  void forgedNoticesAreRefusedAndChangeNothing() throws Exception {
    long liveBefore = UcxTransport.liveObjects();
    LocalBootstrap.Group group = LocalBootstrap.group(3);
    SecretBootstrap[] boots = new SecretBootstrap[3];
    Communicator[] comms = new Communicator[3];
    RankHarness.run(
        3,
        WAIT,
        r -> {
          boots[r] = new SecretBootstrap(group.rank(r), APP);
          comms[r] = Communicator.create(boots[r], config(Duration.ofSeconds(30)));
        });
    try {
      assertEquals("ucx", comms[1].ringTransport());
      byte[][] exchange = boots[0].firstExchange();
      UcxRankInfo target = ucxInfo(exchange[1]);
      // what the eavesdropper can compute: the exchanged secret is in clear, the bound one is not
      byte[] exchanged = rankZeroSecret(exchange[0]);
      byte[] bound = ChallengeResponse.bind(APP, exchanged);
      SplittableRandom random = new SplittableRandom(42);
      byte[] text = "forged: rank 0 failed".getBytes(StandardCharsets.UTF_8);
      List<ByteBuffer> forged = new ArrayList<>();
      // 1. the format before notices were signed: header and text, no counter, no MAC
      ByteBuffer old = ByteBuffer.allocateDirect(20 + text.length).order(ByteOrder.BIG_ENDIAN);
      old.putInt(ControlInbox.FAIL).putInt(0).putInt(0).putInt(0).putInt(text.length).put(text);
      forged.add(old.flip());
      // 2. the right layout, signed under a random key, to rank 1's receiving end from rank 0
      forged.add(failFromRankZero(new NoticeMac(randomSecret(random), 0, 1, 0, false), 1L << 40));
      // 3. signed with the exchanged secret, which a stranger reading the exchange has
      forged.add(failFromRankZero(new NoticeMac(exchanged, 0, 1, 0, false), 1L << 40));
      // 4. the real key of another route (rank 0 to rank 2), sent to rank 1 as from rank 0
      forged.add(failFromRankZero(new NoticeMac(bound, 0, 2, 0, false), 1L << 40));
      // 5. the real key and route, but counter 0, which rank 0's proof already used: a replay
      forged.add(failFromRankZero(new NoticeMac(bound, 0, 1, 0, false), 0));
      // 6. a close to rank 1's sending end, as from rank 2, without the secret
      forged.add(
          ControlInbox.notice(
              ControlInbox.CLOSE,
              2,
              0,
              true,
              7,
              new byte[0],
              new NoticeMac(randomSecret(random), 2, 1, 0, true)));
      long refusedBefore = UcxTransport.refusedNotices();
      sendFromStranger(target.workerAddress(), forged);
      long end = System.nanoTime() + WAIT.toNanos();
      while (UcxTransport.refusedNotices() - refusedBefore < forged.size()
          && System.nanoTime() < end) {
        Thread.sleep(5);
      }
      assertEquals(
          forged.size(),
          UcxTransport.refusedNotices() - refusedBefore,
          "every forged notice refused, nothing else");
      // the communicator is unaffected: random data, checked against a reference
      assertNull(
          RankHarness.allReduceAndCheck(
              comms, 100_003, DataType.FLOAT32, ReduceOp.SUM, false, random.nextLong(), WAIT));
      assertNull(
          RankHarness.allReduceAndCheck(
              comms, 7, DataType.INT64, ReduceOp.MAX, true, random.nextLong(), WAIT));
    } finally {
      RankHarness.closeAll(comms, WAIT);
    }
    assertEquals(liveBefore, UcxTransport.liveObjects(), "UCX objects left after close");
  }

  @Test
  @Timeout(60)
  @DisplayName("ranks with different secrets do not form a UCX ring")
  void ranksWithAnotherSecretDoNotConnect() {
    long liveBefore = UcxTransport.liveObjects();
    LocalBootstrap.Group group = LocalBootstrap.group(2);
    byte[] other = "another application".getBytes(StandardCharsets.UTF_8);
    Communicator[] comms = new Communicator[2];
    Throwable[] errors =
        RankHarness.createEach(
            comms,
            WAIT,
            r ->
                Communicator.create(
                    new SecretBootstrap(group.rank(r), r == 0 ? APP : other),
                    config(Duration.ofSeconds(3))));
    RankHarness.closeQuietly(comms);
    for (int r = 0; r < 2; r++) {
      assertNotNull(errors[r], "rank " + r + " must fail");
      assertTrue(
          String.valueOf(errors[r].getMessage())
              .contains("did not prove this communicator's secret over UCX"),
          String.valueOf(errors[r]));
    }
    assertEquals(liveBefore, UcxTransport.liveObjects(), "UCX objects left after the failure");
  }

  /** A failure notice as from rank 0 to rank 1's receiving end of channel 0. */
  private static ByteBuffer failFromRankZero(NoticeMac mac, long counter) {
    byte[] text = "forged: rank 0 failed".getBytes(StandardCharsets.UTF_8);
    return ControlInbox.notice(ControlInbox.FAIL, 0, 0, false, counter, text, mac);
  }

  private static byte[] randomSecret(SplittableRandom random) {
    byte[] s = new byte[ChallengeResponse.SECRET_BYTES];
    random.nextBytes(s);
    return s;
  }

  /** Rank 0's random secret, as the address exchange carries it (see TransportSelector). */
  private static byte[] rankZeroSecret(byte[] rankZeroExchange) {
    ByteBuffer in = ByteBuffer.wrap(rankZeroExchange);
    in.getLong();
    byte[] secret = new byte[in.getInt()];
    in.get(secret);
    return secret;
  }

  /** A rank's UCX details from its part of the exchange (one ring candidate: transport=ucx). */
  private static UcxRankInfo ucxInfo(byte[] rankExchange) {
    ByteBuffer in = ByteBuffer.wrap(rankExchange);
    in.getLong();
    skipField(in); // the secret (empty but on rank 0)
    skipField(in); // the socket address
    assertEquals(1, in.getInt(), "one ring candidate");
    byte[] info = new byte[in.getInt()];
    in.get(info);
    return UcxRankInfo.decode(info, 1);
  }

  private static void skipField(ByteBuffer in) {
    int length = in.getInt();
    in.position(in.position() + length);
  }

  /** Sends each notice with the control tag from a worker of a UCX context of its own. */
  private static void sendFromStranger(byte[] workerAddress, List<ByteBuffer> notices)
      throws Exception {
    try (UcpContext context = new UcpContext(new UcpParams().requestTagFeature());
        UcpWorker worker = context.newWorker(new UcpWorkerParams())) {
      ByteBuffer address = ByteBuffer.allocateDirect(workerAddress.length).put(workerAddress);
      address.flip();
      UcpEndpoint ep =
          worker.newEndpoint(new UcpEndpointParams().setUcpAddress(address).setName("stranger"));
      long end = System.nanoTime() + WAIT.toNanos();
      for (ByteBuffer n : notices) {
        Completion done = new Completion();
        UcpRequest r = ep.sendTaggedNonBlocking(n, ControlInbox.TAG, done);
        while (!done.isDone(r) && System.nanoTime() < end) {
          worker.progress();
        }
        assertNull(done.error(), "the stranger's send itself works");
        assertTrue(done.isDone(r), "the stranger's send completed");
      }
      UcpRequest closing = ep.closeNonBlockingFlush();
      while (!closing.isCompleted() && System.nanoTime() < end) {
        worker.progress();
      }
    }
  }
}
