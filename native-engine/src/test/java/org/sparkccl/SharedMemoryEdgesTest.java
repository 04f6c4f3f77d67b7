package org.sparkccl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.SplittableRandom;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.sparkccl.bootstrap.LocalBootstrap;
import org.sparkccl.config.CclConfig;
import org.sparkccl.config.Key;
import org.sparkccl.device.DeviceBuffer;
import org.sparkccl.memory.SharedFile;

/**
 * Trees and recursive doubling between ranks of one host through shared memory ({@code shm=auto}):
 * the edges of up to 64 KiB go through the files and larger ones through sockets, in one
 * communicator, with results checked against the reference and bit-identical on every rank; the
 * files lose their names once mapped and their mappings go at close.
 */
@DisplayName("point-to-point edges through shared memory")
class SharedMemoryEdgesTest {
  private static final Duration WAIT = Duration.ofSeconds(60);

  /** Counts from one element to past the 64 KiB edge limit of float32 (16384 elements). */
  private static final int[] COUNTS = {1, 2, 7, 1000, 16_384, 16_385, 70_001};

  private static CclConfig config(String algo, boolean shm) {
    return TestConfig.builder()
        .shm(shm)
        .timeout(Duration.ofSeconds(30))
        .set(Key.ALGO, algo)
        .build();
  }

  private static void assumeSharedMemory() {
    Assumptions.assumeTrue(
        Files.isDirectory(SharedFile.DIRECTORY),
        "skipped: no " + SharedFile.DIRECTORY + " on this machine, so no shared-memory edges");
  }

  /**
   * {@code ll.maxBytes} of each pass: the default (LL up to 4 KiB, the simple protocol to 64 KiB,
   * sockets above), LL off, and LL for every shared edge.
   */
  private static final String[] LL_MAX_BYTES = {Key.LL_MAX_BYTES.defaultValue(), "0", "64K"};

  @Test
  @DisplayName(
      "rd, rh and tree over 3 and 5 ranks match the reference: LL, simple and socket edges")
  void collectivesMatchTheReference() {
    assumeSharedMemory();
    long[] seed = {0x5EED_0001L};
    int pass = 0;
    for (int n : new int[] {3, 5}) {
      for (String algo : List.of("rd", "rh", "tree")) {
        // each algorithm meets two of the three settings
        String ll = LL_MAX_BYTES[(pass + pass / 3) % LL_MAX_BYTES.length];
        pass++;
        CclConfig config = config(algo, true).toBuilder().set(Key.LL_MAX_BYTES, ll).build();
        Communicator[] comms = RankHarness.createAll(n, config, WAIT);
        RankHarness.closingAfter(
            comms,
            WAIT,
            () -> {
              assertTrue(
                  sharedMappings() > 0,
                  n + " ranks, algo=" + algo + ": no shared-memory FIFO is mapped");
              for (int count : COUNTS) {
                for (DataType t : List.of(DataType.FLOAT32, DataType.INT32)) {
                  String what =
                      n + " ranks, algo=" + algo + ", ll.maxBytes=" + ll + ", " + count + " x " + t;
                  assertNull(
                      RankHarness.allReduceAndCheck(
                          comms, count, t, ReduceOp.SUM, count % 2 == 0, seed[0]++, WAIT),
                      what);
                }
              }
            });
      }
    }
  }

  @Test
  @DisplayName("the files lose their names at set-up and their mappings at close")
  void nothingIsLeftBehind() {
    assumeSharedMemory();
    long before = sharedMappings();
    Communicator[] comms = RankHarness.createAll(4, config("rd", true), WAIT);
    RankHarness.closingAfter(
        comms,
        WAIT,
        () -> {
          // 4 ranks, 3 senders each: every rank maps its own file and 3 others
          assertEquals(16, sharedMappings() - before, "mappings of shared FIFOs while open");
          assertEquals(0, sharedNames(), "names in " + SharedFile.DIRECTORY + " after set-up");
          assertNull(
              RankHarness.allReduceAndCheck(
                  comms, 999, DataType.FLOAT64, ReduceOp.MAX, false, 77, WAIT));
        });
    assertEquals(before, sharedMappings(), "mappings of shared FIFOs after close");
  }

  @Test
  @DisplayName(
      "a rank that sends at once after set-up never meets a FIFO its peer is still opening")
  void sendingRightAfterSetUpIsSafe() {
    assumeSharedMemory();
    // The ranks leave the set-up rounds at different times: a rank that returns first may publish
    // its first slice while its peer is still opening its end of the FIFO. Each rank calls at once
    // after its own set-up, as barrier tasks do; int32, so the expected sums are exact.
    int count = 16;
    SplittableRandom rnd = new SplittableRandom(0x5EED_0002L);
    for (int i = 0; i < 60; i++) {
      int n = 2 + (i % 3);
      int[][] inputs = new int[n][count];
      long[] expected = new long[count];
      for (int r = 0; r < n; r++) {
        for (int k = 0; k < count; k++) {
          inputs[r][k] = rnd.nextInt(-1_000_000, 1_000_000);
          expected[k] += inputs[r][k];
        }
      }
      LocalBootstrap.Group group = LocalBootstrap.group(n);
      String round = "round " + i + ", " + n + " ranks";
      RankHarness.assertNoErrors(
          RankHarness.runCollect(
              n,
              WAIT,
              r -> {
                try (Communicator comm = Communicator.create(group.rank(r), config("rd", true));
                    DeviceBuffer buf = comm.device().allocate(4L * count)) {
                  ByteBuffer in = ByteBuffer.allocate(4 * count).order(ByteOrder.nativeOrder());
                  in.asIntBuffer().put(inputs[r]);
                  buf.copyFromHost(in, 0);
                  comm.allReduce(buf, buf, count, DataType.INT32, ReduceOp.SUM);
                  ByteBuffer out = ByteBuffer.allocate(4 * count).order(ByteOrder.nativeOrder());
                  buf.copyToHost(0, out);
                  for (int k = 0; k < count; k++) {
                    assertEquals(
                        (int) expected[k],
                        out.getInt(4 * k),
                        round + ", rank " + r + ", element " + k);
                  }
                }
              }),
          round);
    }
  }

  @ParameterizedTest(name = "rank 0 calls count={0}, the others 20")
  @ValueSource(ints = {10, 5000})
  @DisplayName("a mismatch reaches every rank at once on the in-memory ring, too")
  void aMismatchReachesEveryRankOnTheInMemoryRing(int firstCount) {
    assumeSharedMemory();
    // 10 against 20 elements: both sides' edges take the LL protocol; 5000 (20,000 bytes) against
    // 20: rank 0's take the simple one, so the two ends wait on different FIFOs and only the
    // comparison of posted calls can tell them apart.
    // Spark's local mode: thread ranks on the in-memory ring, small calls on shared edges. Ranks 0
    // and 1 meet the mismatch; 2 and 3 wait on them, with no operation of their own on the ring,
    // and must hear of it from the ring's failure notices rather than at their timeout.
    int n = 4;
    CclConfig config =
        CclConfig.builder()
            .transport(org.sparkccl.config.Transport.LOCAL)
            .timeout(Duration.ofSeconds(30))
            .set(Key.ALGO, "rd")
            .build();
    Communicator[] comms = RankHarness.createAll(n, config, WAIT);
    Throwable[] errors = new Throwable[n];
    long[] millis = new long[n];
    try {
      RankHarness.runCollect(
          n,
          WAIT,
          r -> {
            int count = r == 0 ? firstCount : 20;
            long t0 = System.nanoTime();
            try (DeviceBuffer buf = comms[r].device().allocate(4L * count)) {
              comms[r].allReduce(buf, buf, count, DataType.FLOAT32, ReduceOp.SUM);
            } catch (RuntimeException e) {
              errors[r] = e;
            } finally {
              millis[r] = (System.nanoTime() - t0) / 1_000_000;
            }
          });
    } finally {
      RankHarness.closeQuietly(comms);
    }
    for (int r = 0; r < n; r++) {
      assertTrue(errors[r] instanceof CclException, "rank " + r + ": " + errors[r]);
      String m = errors[r].getMessage();
      assertTrue(m.contains("called allReduce(count="), "rank " + r + " names the calls: " + m);
      assertTrue(millis[r] < 5_000, "rank " + r + " failed after " + millis[r] + " ms: " + m);
    }
  }

  @Test
  @DisplayName("shm=off maps nothing")
  void offKeepsSockets() {
    long before = sharedMappings();
    Communicator[] comms = RankHarness.createAll(3, config("rd", false), WAIT);
    RankHarness.closingAfter(
        comms,
        WAIT,
        () -> {
          assertEquals(before, sharedMappings(), "mappings of shared FIFOs with shm=off");
          assertNull(
              RankHarness.allReduceAndCheck(
                  comms, 1000, DataType.FLOAT32, ReduceOp.SUM, true, 78, WAIT));
        });
  }

  /** This process's mappings of point-to-point FIFO files (their names end in -p<rank>-<pid>). */
  private static long sharedMappings() {
    try (Stream<String> lines = Files.lines(Path.of("/proc/self/maps"))) {
      return lines.filter(l -> l.matches(".*/dev/shm/sparkccl-[0-9a-f]{16}-p\\d+-\\d+.*")).count();
    } catch (IOException e) {
      throw new AssertionError("cannot read /proc/self/maps: " + e, e);
    }
  }

  private static long sharedNames() {
    String pid = Long.toString(ProcessHandle.current().pid());
    try (Stream<Path> files = Files.list(SharedFile.DIRECTORY)) {
      return files
          .map(p -> p.getFileName().toString())
          .filter(f -> f.matches("sparkccl-[0-9a-f]{16}-p\\d+-" + pid))
          .count();
    } catch (IOException e) {
      throw new AssertionError("cannot list " + SharedFile.DIRECTORY + ": " + e, e);
    }
  }
}
