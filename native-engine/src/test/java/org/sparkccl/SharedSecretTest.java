package org.sparkccl;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.sparkccl.auth.ChallengeResponse;
import org.sparkccl.bootstrap.LocalBootstrap;
import org.sparkccl.config.CclConfig;
import org.sparkccl.config.Transport;

/**
 * A bootstrap's shared secret (Spark's application secret) binds the communicator's secret: ranks
 * that hold it form a communicator; a rank with another one, which saw the whole exchange, cannot
 * join.
 */
@DisplayName("a shared secret binds the communicator's secret")
class SharedSecretTest {
  private static final Duration WAIT = Duration.ofSeconds(30);

  private static CclConfig config() {
    return CclConfig.builder().transport(Transport.SOCKET).timeout(Duration.ofSeconds(5)).build();
  }

  @Test
  @Timeout(60)
  void ranksWithTheApplicationsSecretJoinAndOneWithAnotherIsRefused() {
    byte[] app = "application secret".getBytes(StandardCharsets.UTF_8);
    byte[] other = "another application".getBytes(StandardCharsets.UTF_8);
    LocalBootstrap.Group good = LocalBootstrap.group(2);
    Communicator[] comms = new Communicator[2];
    RankHarness.run(
        2,
        WAIT,
        r -> comms[r] = Communicator.create(new SecretBootstrap(good.rank(r), app), config()));
    RankHarness.closeAll(comms, WAIT);

    LocalBootstrap.Group mixed = LocalBootstrap.group(2);
    Communicator[] joined = new Communicator[2];
    Throwable[] errors =
        RankHarness.createEach(
            joined,
            WAIT,
            r ->
                Communicator.create(
                    new SecretBootstrap(mixed.rank(r), r == 0 ? app : other), config()));
    RankHarness.closeQuietly(joined);
    for (int r = 0; r < 2; r++) {
      assertNotNull(errors[r], "rank " + r + " must fail");
    }
    String all = String.valueOf(errors[0]) + " | " + errors[1];
    assertTrue(all.contains("did not prove this communicator's secret"), all);
  }

  @Test
  void theBoundSecretNeedsTheSharedOneAndIsFixedByIt() {
    byte[] exchanged = ChallengeResponse.newSecret();
    byte[] app = "app".getBytes(StandardCharsets.UTF_8);
    byte[] bound = ChallengeResponse.bind(app, exchanged);
    assertEquals(ChallengeResponse.SECRET_BYTES, bound.length);
    assertArrayEquals(bound, ChallengeResponse.bind(app.clone(), exchanged.clone()));
    assertTrue(!java.util.Arrays.equals(bound, exchanged), "not the exchanged secret");
    assertTrue(
        !java.util.Arrays.equals(
            bound, ChallengeResponse.bind("apq".getBytes(StandardCharsets.UTF_8), exchanged)),
        "another shared secret gives another secret");
    assertThrows(
        IllegalArgumentException.class, () -> ChallengeResponse.bind(new byte[0], exchanged));
  }
}
