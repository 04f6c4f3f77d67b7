package org.sparkccl;

import static org.junit.jupiter.api.Assertions.fail;

import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.sparkccl.CollectiveCase.Kind;
import org.sparkccl.CollectiveCase.Spec;
import org.sparkccl.config.Algorithm;
import org.sparkccl.config.CclConfig;
import org.sparkccl.config.Transport;
import org.sparkccl.memory.SharedFile;

/**
 * Every algorithm x protocol x transport, each collective it runs, against {@link Reference} at 1
 * to 9 ranks (threads of this JVM) and awkward counts, with the results every rank holds alike
 * (allReduce, broadcast, allGather) compared bit for bit across ranks: data-parallel training keeps
 * its replicas equal only if every rank gets the very same bytes.
 *
 * <p>The test run takes every setup with a reduced set of cases: one dtype (and op) per count,
 * rotating. {@code -Dsparkccl.matrix=full} runs every dtype and op at more counts ({@code
 * bench/run-matrix.sh}).
 */
@DisplayName("every algorithm x protocol x transport at 1-9 ranks, bit-identical on every rank")
class CollectiveMatrixTest {
  private static final Duration WAIT = Duration.ofSeconds(60);
  private static final boolean FULL = "full".equals(System.getProperty("sparkccl.matrix"));

  /**
   * How slots and point-to-point messages travel. Ring steps take the ring transport; trees,
   * recursive doubling and halving take the point-to-point edges: sockets, or shared memory with
   * the LL protocol (flag and data in one line) or the simple one (counters beside the slots).
   */
  enum Link {
    SOCKET(Transport.SOCKET, false, 0, 0, "ring and edges on sockets"),
    SOCKET_PROXY(
        Transport.SOCKET,
        false,
        0,
        1,
        "ring on sockets, its bytes moved by the proxy thread alone (ring.proxyMinBytes)"),
    UCX(Transport.UCX, false, 0, 0, "ring on UCX, edges on sockets"),
    SHM_LL(Transport.LOCAL, true, 64 << 10, 0, "ring in memory, edges in shared memory by LL"),
    SHM_SIMPLE(Transport.LOCAL, true, 0, 0, "ring in memory, edges in shared memory, simple");

    final Transport transport;
    final boolean shm;
    final int llMaxBytes;
    final long ringProxyMinBytes;
    final String text;

    Link(Transport transport, boolean shm, int llMaxBytes, long ringProxyMinBytes, String text) {
      this.transport = transport;
      this.shm = shm;
      this.llMaxBytes = llMaxBytes;
      this.ringProxyMinBytes = ringProxyMinBytes;
      this.text = text;
    }
  }

  /** One set of communicators: a link, a rank count and a forced algorithm. */
  record Setup(Link link, int ranks, Algorithm algo) {
    CclConfig config() {
      return CclConfig.builder()
          .transport(link.transport)
          .shm(link.shm)
          .llMaxBytes(link.llMaxBytes)
          .ringProxyMinBytes(link.ringProxyMinBytes)
          .buffSize(64 << 10) // 8 KiB slots: the larger counts span several
          .nChannels(1)
          .algo(algo)
          .timeout(Duration.ofSeconds(30))
          .build();
    }

    /** The collectives {@link #algo} runs itself (the others would fall back to rings). */
    List<Kind> kinds() {
      boolean pow2 = Integer.bitCount(ranks) == 1;
      return switch (algo) {
        case RING, AUTO -> List.of(Kind.values());
        case TREE -> List.of(Kind.ALL_REDUCE, Kind.BROADCAST, Kind.REDUCE);
        case RD -> pow2 ? List.of(Kind.ALL_REDUCE, Kind.ALL_GATHER) : List.of(Kind.ALL_REDUCE);
        case RH -> pow2 ? List.of(Kind.ALL_REDUCE, Kind.REDUCE_SCATTER) : List.of(Kind.ALL_REDUCE);
      };
    }

    @Override
    public String toString() {
      return link + " (" + link.text + "), " + ranks + " rank(s), algo " + algo;
    }
  }

  static Stream<Setup> setups() {
    int[] ranks = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    List<Setup> out = new ArrayList<>();
    for (Link link : Link.values()) {
      for (int n : ranks) {
        for (Algorithm algo :
            new Algorithm[] {Algorithm.RING, Algorithm.TREE, Algorithm.RD, Algorithm.RH}) {
          // one rank runs no algorithm at all: one setup of it per link
          if (n == 1 && algo != Algorithm.RING) {
            continue;
          }
          out.add(new Setup(link, n, algo));
        }
      }
    }
    return out.stream();
  }

  /**
   * The cases of one setup: each of its collectives at each count, the root moving round the ranks
   * and the placement alternating. Counts: one element, a few, a prime that fits one 8 KiB slot as
   * float32, a prime that spans several slots. The test run takes one dtype (and op) per count,
   * rotating; the full run every dtype and op at each count, and adds zero, two, 255, and primes
   * past the 64 KiB limit of shared-memory edges and past 512 KiB.
   */
  static List<Spec> cases(Setup s, int salt) {
    int[] counts =
        FULL
            ? new int[] {0, 1, 2, 7, 255, 1013, 5003, 16_411, 70_001}
            : new int[] {1, 7, 1013, 5003};
    List<Spec> out = new ArrayList<>();
    int i = salt;
    for (Kind kind : s.kinds()) {
      List<Object[]> pairs = kind.reduces() ? Reference.ALL_PAIRS : Reference.DTYPES_ONLY;
      for (int count : counts) {
        for (Object[] p : FULL ? pairs : List.<Object[]>of(pairs.get(i * 7 % pairs.size()))) {
          int root = kind.rooted() ? (i * 5 + 3) % s.ranks() : 0;
          boolean inPlace = (i + i / pairs.size()) % 2 == 1;
          out.add(new Spec(kind, (DataType) p[0], (ReduceOp) p[1], count, root, inPlace));
          i++;
        }
      }
    }
    return out;
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("setups")
  void everyCollectiveOfTheAlgorithmMatchesTheReferenceAlikeOnEveryRank(Setup s) {
    if (s.link().shm) {
      Assumptions.assumeTrue(
          Files.isDirectory(SharedFile.DIRECTORY),
          "skipped: no " + SharedFile.DIRECTORY + " on this machine, so no shared-memory edges");
    }
    Communicator[] comms = RankHarness.createAll(s.ranks(), s.config(), WAIT);
    if (s.ranks() > 1 && !comms[0].ringTransport().equals(s.link().transport.toString())) {
      RankHarness.closeQuietly(comms);
      fail(s + ": the ring runs on " + comms[0].ringTransport() + ", not " + s.link().transport);
    }
    CollectivesTest.runCases(
        s.toString(),
        comms,
        cases(s, s.ranks() + s.algo().ordinal() * 3 + s.link().ordinal()),
        1_000L * s.link().ordinal() + 100L * s.ranks() + 10L * s.algo().ordinal());
  }
}
