package org.sparkccl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.sparkccl.bootstrap.TcpBootstrapRoot;
import org.sparkccl.memory.SharedFile;

/** Ranks as separate JVMs meeting through a TCP bootstrap root, like the perf tool's ranks. */
@DisplayName("allReduce with ranks as separate processes")
class ProcessAllReduceTest {
  private static final int N = 3;

  @TempDir Path dir;

  private Process start(String root, int rank, String mode, String... props) throws IOException {
    List<String> args = new ArrayList<>(List.of(props));
    args.add(RankProcessMain.class.getName());
    args.addAll(List.of(root, Integer.toString(rank), Integer.toString(N), mode));
    return startJava(rank, args);
  }

  private Process startJava(int rank, List<String> args) throws IOException {
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.add("-Xmx256m");
    cmd.add("-XX:MaxDirectMemorySize=256m");
    cmd.add("-XX:+UseSerialGC");
    cmd.add("-XX:ErrorFile=" + dir.resolve("hs_err_rank" + rank + "_%p.log"));
    cmd.addAll(List.of(TestConfig.jvmOptions()));
    cmd.add("-cp");
    cmd.add(System.getProperty("java.class.path"));
    cmd.addAll(args);
    File out = dir.resolve("rank" + rank + ".log").toFile();
    return new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(out).start();
  }

  private String output(int rank) {
    try {
      return Files.readString(dir.resolve("rank" + rank + ".log"), StandardCharsets.UTF_8);
    } catch (IOException e) {
      return "(no output: " + e + ")";
    }
  }

  private static void destroyAll(List<Process> ps) {
    for (Process p : ps) {
      p.destroyForcibly();
    }
    for (Process p : ps) {
      try {
        p.waitFor(10, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /**
   * The transport keys under which ranks of one host pass the ring's slots through shared memory:
   * {@code transport=auto} with {@code shm=auto}, whatever this test run's transport.
   */
  private static final String[] SHARED_RING = {"-Dsparkccl.transport=auto", "-Dsparkccl.shm=auto"};

  /**
   * Starts rank {@code r} of {@code N} in {@code mode} with the options {@code common} and then
   * {@code keysOf(r)}, adding each process to {@code ps} as it starts (the caller destroys them).
   */
  private void startRanks(
      String root,
      String mode,
      List<String> common,
      IntFunction<List<String>> keysOf,
      List<Process> ps)
      throws IOException {
    for (int r = 0; r < N; r++) {
      List<String> props = new ArrayList<>(common);
      props.addAll(keysOf.apply(r));
      ps.add(start(root, r, mode, props.toArray(new String[0])));
    }
  }

  /** Starts {@code N} rank processes in {@code mode}; each must exit 0 having printed OK. */
  private void runToOk(String mode, String... keys) throws Exception {
    runToOk(mode, r -> List.of(keys));
  }

  /** As above, rank {@code r} with the keys {@code keysOf(r)}. */
  private void runToOk(String mode, IntFunction<List<String>> keysOf) throws Exception {
    List<Process> ps = new ArrayList<>();
    try (TcpBootstrapRoot root = TcpBootstrapRoot.start("127.0.0.1", N)) {
      List<String> common =
          List.of("-Dsparkccl.timeout=30s", "-Dsparkccl.buffSize=64K", "-Dsparkccl.nChannels=2");
      startRanks(root.address(), mode, common, keysOf, ps);
      for (int r = 0; r < N; r++) {
        boolean exited = ps.get(r).waitFor(120, TimeUnit.SECONDS);
        assertTrue(exited, "rank " + r + " still running after 120 s:\n" + output(r));
        assertEquals(0, ps.get(r).exitValue(), "rank " + r + " failed:\n" + output(r));
        assertTrue(output(r).contains("OK"), "rank " + r + " did not print OK:\n" + output(r));
      }
    } finally {
      destroyAll(ps);
    }
  }

  @Test
  @DisplayName("3 rank processes get the reference result for several dtypes and ops")
  void threeProcessesAgreeWithTheReference() throws Exception {
    runToOk("check");
  }

  @Test
  @DisplayName("3 rank processes run broadcast, reduce, allGather and reduceScatter correctly")
  void threeProcessesRunTheOtherCollectives() throws Exception {
    runToOk("collectives");
  }

  @Test
  @DisplayName("3 rank processes of one host ring through shared memory, correctly and unmapped")
  void threeProcessesRingThroughSharedMemory() throws Exception {
    assumeSharedMemory();
    runToOk("check", SHARED_RING);
    assertSharedRing();
    runToOk("collectives", SHARED_RING);
    assertSharedRing();
  }

  @Test
  @DisplayName("a ring mixing shared-memory and network edges is correct on every rank")
  void ringMixingSharedAndNetworkEdges() throws Exception {
    assumeSharedMemory();
    // ranks 0 and 1 count as one host, rank 2 as another: 0 -> 1 is shared, 1 -> 2 and 2 -> 0 not
    IntFunction<List<String>> keys =
        r -> {
          List<String> k = new ArrayList<>(List.of(SHARED_RING));
          k.add("-Dsparkccl.hostIdentity=" + (r < 2 ? "first" : "second"));
          return k;
        };
    runToOk("check", keys);
    assertTrue(
        Pattern.compile("RING shm\\+\\w+ MAPPED [1-9]").matcher(output(0)).find(),
        "rank 0 should send through shared memory and receive over the network:\n" + output(0));
    assertTrue(
        Pattern.compile("RING \\w+\\+shm MAPPED [1-9]").matcher(output(1)).find(),
        "rank 1 should receive through shared memory and send over the network:\n" + output(1));
    assertTrue(
        Pattern.compile("RING (ucx|socket) MAPPED").matcher(output(2)).find(),
        "rank 2 should use the network only:\n" + output(2));
    runToOk("collectives", keys);
  }

  private void assumeSharedMemory() {
    Assumptions.assumeTrue(
        Files.isDirectory(SharedFile.DIRECTORY),
        "skipped: no " + SharedFile.DIRECTORY + " on this machine, so no shared-memory ring");
  }

  /** Every rank's ring took shared memory on both edges and mapped its FIFOs while open. */
  private void assertSharedRing() {
    for (int r = 0; r < N; r++) {
      String out = output(r);
      assertTrue(
          Pattern.compile("RING shm MAPPED [1-9]").matcher(out).find(),
          "rank " + r + " did not ring through shared memory:\n" + tail(out));
    }
  }

  @Test
  @DisplayName("a mismatched call on the shared-memory ring fails every rank with its reason")
  void mismatchOnTheSharedRingFailsEveryRank() throws Exception {
    assumeSharedMemory();
    List<Process> ps = new ArrayList<>();
    try (TcpBootstrapRoot root = TcpBootstrapRoot.start("127.0.0.1", N)) {
      List<String> timeout = List.of("-Dsparkccl.timeout=20s");
      startRanks(root.address(), "mismatch", timeout, r -> List.of(SHARED_RING), ps);
      for (int r = 0; r < N; r++) {
        boolean exited = ps.get(r).waitFor(60, TimeUnit.SECONDS);
        String out = output(r);
        assertTrue(exited, "rank " + r + " still running 60 s after the mismatch:\n" + tail(out));
        assertEquals(1, ps.get(r).exitValue(), "rank " + r + ":\n" + tail(out));
        assertTrue(out.contains("RING shm"), "rank " + r + " off the shared ring:\n" + tail(out));
      }
      // rank 1 reads a sum's slots, rank 2 a max's: both see the other call in the slots
      for (int r : new int[] {1, 2}) {
        String out = output(r);
        assertTrue(
            out.contains("CclMismatchException") && out.contains("max") && out.contains("sum"),
            "rank " + r + " should name both calls in a mismatch:\n" + tail(out));
      }
    } finally {
      destroyAll(ps);
    }
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(
      strings = {"mismatch-roots", "mismatch-kinds", "mismatch-reduce", "mismatch-reduce-roots"})
  @DisplayName("a small mismatched last call between processes sharing memory fails every rank")
  void smallMismatchedLastCallOnSharedEdgesFailsEveryRank(String mode) throws Exception {
    assumeSharedMemory();
    assertTheMismatchFailsEveryRank(mode, List.of(SHARED_RING), "RING shm");
  }

  /**
   * The same over sockets, every edge a socket and the tree forced: there a tree rank that only
   * sends (a broadcast's root, a reduce's leaves) announces its call to its ring predecessor. For
   * {@code mismatch-reduce-roots} that announcement is all that reveals the mismatch (with no
   * announcement at launch every rank completes and nothing fails); in the other modes a frame that
   * arrives on a socket both ranks share can reveal it too.
   */
  @ParameterizedTest(name = "{0}")
  @ValueSource(
      strings = {"mismatch-roots", "mismatch-kinds", "mismatch-reduce", "mismatch-reduce-roots"})
  @DisplayName("a small mismatched last tree call between processes over sockets fails every rank")
  void smallMismatchedLastTreeCallOverSocketsFailsEveryRank(String mode) throws Exception {
    List<String> sockets =
        List.of("-Dsparkccl.transport=socket", "-Dsparkccl.shm=off", "-Dsparkccl.algo=tree");
    assertTheMismatchFailsEveryRank(mode, sockets, "RING socket");
  }

  /**
   * Runs {@code N} ranks in {@code mode} with {@code keys}: every rank must exit 1 within 30 s on
   * its ring {@code ring}, none by the timeout, and one must name the mismatched calls.
   */
  private void assertTheMismatchFailsEveryRank(String mode, List<String> keys, String ring)
      throws Exception {
    List<Process> ps = new ArrayList<>();
    try (TcpBootstrapRoot root = TcpBootstrapRoot.start("127.0.0.1", N)) {
      // the timeout is far off: a rank that failed by it, not by the mismatch, fails the test
      List<String> timeout = List.of("-Dsparkccl.timeout=40s");
      startRanks(root.address(), mode, timeout, r -> keys, ps);
      boolean named = false;
      for (int r = 0; r < N; r++) {
        boolean exited = ps.get(r).waitFor(30, TimeUnit.SECONDS);
        String out = output(r);
        assertTrue(exited, "rank " + r + " still running 30 s after the mismatch:\n" + tail(out));
        assertEquals(1, ps.get(r).exitValue(), "rank " + r + ":\n" + tail(out));
        assertTrue(out.contains(ring), "rank " + r + " not on " + ring + ":\n" + tail(out));
        assertFalse(out.contains("CclTimeoutException"), "rank " + r + ":\n" + tail(out));
        // a rank whose call failed prints the CclMismatchException; one told after its call
        // returned prints ABORTED beside the engine's log line, which names the calls as well
        named |= out.contains("as operation #1 but rank");
      }
      assertTrue(named, "no rank reported the mismatch of call #1:\n" + tail(output(1)));
    } finally {
      destroyAll(ps);
    }
  }

  @Test
  @DisplayName("killing one rank process mid-run makes the others exit with an error, not hang")
  void killedRankMakesTheOthersFailWithinTheTimeout() throws Exception {
    killOneRank("loop");
  }

  @Test
  @DisplayName(
      "killing a rank on the shared-memory ring makes the others fail before the timeout: a wait"
          + " on a direct edge sees that the process exited")
  void killedRankOnTheSharedRingMakesTheOthersFail() throws Exception {
    assumeSharedMemory();
    assertSurvivorsSawTheExit(killOneRank("loop", SHARED_RING));
  }

  @Test
  @DisplayName(
      "killing a rank amid small allReduces on shared point-to-point edges makes the others fail"
          + " before the timeout")
  void killedRankOnSharedPointToPointEdgesMakesTheOthersFail() throws Exception {
    assumeSharedMemory();
    assertSurvivorsSawTheExit(killOneRank("loop-small", SHARED_RING));
  }

  private static void assertSurvivorsSawTheExit(List<String> errors) {
    for (String e : errors) {
      long ms = Long.parseLong(e.substring(0, e.indexOf(' ')));
      assertTrue(ms < 8_000, "a survivor waited for most of the 10 s timeout: " + e);
    }
    assertTrue(
        errors.stream().anyMatch(e -> e.contains("its process") && e.contains("has exited")),
        "no survivor found that rank 1's process exited: " + errors);
  }

  /**
   * Kills rank 1 of {@code N} rank processes looping in {@code mode} (timeout 10 s) and checks that
   * the others fail, not hang; returns each survivor's {@code "<ms after the kill> <error>"}.
   */
  private List<String> killOneRank(String mode, String... keys) throws Exception {
    List<String> errors = new ArrayList<>();
    List<Process> ps = new ArrayList<>();
    try (TcpBootstrapRoot root = TcpBootstrapRoot.start("127.0.0.1", N)) {
      List<String> timeout = List.of("-Dsparkccl.timeout=10s");
      startRanks(root.address(), mode, timeout, r -> List.of(keys), ps);
      // wait until every rank has finished at least one allReduce
      long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
      for (int r = 0; r < N; r++) {
        while (!output(r).contains("ITER 1")) {
          assertTrue(ps.get(r).isAlive(), "rank " + r + " exited early:\n" + output(r));
          assertTrue(System.nanoTime() < end, "rank " + r + " made no progress:\n" + output(r));
          Thread.sleep(20);
        }
      }
      Thread.sleep(30); // somewhere inside a collective
      ps.get(1).destroyForcibly();
      long killedAt = System.nanoTime();
      assertTrue(ps.get(1).waitFor(10, TimeUnit.SECONDS), "the killed rank did not die");
      for (int r : new int[] {0, 2}) {
        long left = TimeUnit.SECONDS.toNanos(30) - (System.nanoTime() - killedAt);
        boolean exited = ps.get(r).waitFor(Math.max(1, left), TimeUnit.NANOSECONDS);
        long ms = (System.nanoTime() - killedAt) / 1_000_000;
        assertTrue(
            exited,
            "rank "
                + r
                + " still running "
                + ms
                + " ms after rank 1 was killed:\n"
                + tail(output(r)));
        String out = output(r);
        assertFalse(
            out.contains("A fatal error has been detected by the Java Runtime"),
            "rank "
                + r
                + " crashed its JVM (native memory touched after it was freed?) instead"
                + " of failing cleanly:\n"
                + tail(out)
                + crashReport(r));
        assertNotEquals(0, ps.get(r).exitValue(), "rank " + r + " exited 0:\n" + tail(out));
        assertTrue(out.contains("FAILED"), "rank " + r + " printed no error:\n" + tail(out));
        String error = out.substring(out.indexOf("FAILED"));
        assertTrue(error.contains("allReduce"), "the error should name the operation: " + error);
        assertTrue(
            Pattern.compile("rank \\d").matcher(error).find(),
            "the error should name a rank: " + error);
        errors.add(ms + " " + error.lines().findFirst().orElse(""));
      }
    } finally {
      destroyAll(ps);
    }
    return errors;
  }

  @Test
  @DisplayName("a buffer freed as soon as an aborted allReduce returns is never touched again")
  void bufferFreedRightAfterAFailedCallIsNotTouched() throws Exception {
    runsToOk(
        FreeAfterFailureMain.class,
        "the engine touched a buffer after the failed call had returned and the buffer was freed");
  }

  @Test
  @DisplayName(
      "a rank that closes while the others call: they fail at once, naming it, and touch none of"
          + " its memory")
  void closeWhileTheOthersCall() throws Exception {
    runsToOk(
        CloseWhileOthersCallMain.class,
        "a rank wrote into the memory of a rank that had closed its communicator");
  }

  /**
   * Runs {@code main} in a child JVM (if the engine touches freed memory, that JVM crashes or
   * aborts, not this one) and checks it printed OK and exited 0.
   */
  private void runsToOk(Class<?> main, String crashMeans) throws Exception {
    Process p = startJava(0, List.of("-XX:MaxDirectMemorySize=512m", main.getName()));
    try {
      boolean exited = p.waitFor(150, TimeUnit.SECONDS);
      String out = output(0);
      assertTrue(exited, "still running after 150 s:\n" + tail(out));
      assertFalse(
          out.contains("A fatal error has been detected by the Java Runtime"),
          "the JVM crashed: " + crashMeans + ":\n" + tail(out) + crashReport(0));
      assertEquals(
          0,
          p.exitValue(),
          (p.exitValue() == 134
                  ? "aborted (SIGABRT: did malloc find its heap damaged by a write after a free?):\n"
                  : "failed:\n")
              + tail(out));
      assertTrue(out.contains("OK"), "did not print OK:\n" + tail(out));
    } finally {
      destroyAll(List.of(p));
    }
  }

  /** The crashing thread and its top frames from the JVM's error file, if there is one. */
  private String crashReport(int rank) {
    try (var files = Files.list(dir)) {
      for (Path p : (Iterable<Path>) files::iterator) {
        if (p.getFileName().toString().startsWith("hs_err_rank" + rank + "_")) {
          List<String> lines = Files.readAllLines(p);
          StringBuilder b = new StringBuilder("\n--- from " + p.getFileName() + ":\n");
          int from = -1;
          for (int i = 0; i < lines.size(); i++) {
            if (lines.get(i).startsWith("Current thread")) {
              from = i;
              break;
            }
          }
          for (int i = Math.max(0, from); i < Math.min(lines.size(), from + 20); i++) {
            b.append(lines.get(i)).append('\n');
          }
          return b.toString();
        }
      }
    } catch (IOException e) {
      return "\n(no error file: " + e + ")";
    }
    return "";
  }

  private static String tail(String s) {
    return s.length() <= 4000 ? s : "..." + s.substring(s.length() - 4000);
  }
}
