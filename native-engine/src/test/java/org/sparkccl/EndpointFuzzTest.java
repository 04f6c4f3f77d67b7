package org.sparkccl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link FuzzMain} in a JVM of 64 MiB heap and 32 MiB direct memory: random and malformed frames to
 * the bootstrap roots and the data-plane listeners while a real communicator forms and works:
 * 10,000 frames (about 35 s on a 2-core machine; {@code -Dsparkccl.fuzz.frames} changes it).
 */
@DisplayName("endpoint fuzzing")
class EndpointFuzzTest {
  /** One WARN line per refused connection, from the root or a data-plane listener. */
  private static final Pattern REFUSAL =
      Pattern.compile(
          "WARN .*(bootstrap root: refused|refused a peer connection"
              + "|a peer connection failed during its handshake|accepting a peer connection failed)");

  /** Connections a closing listener may drop from its backlog without accepting them. */
  private static final long BACKLOG_RACES = 8;

  @TempDir Path dir;

  @Test
  @DisplayName(
      "random and malformed frames to every listening endpoint: nothing crashes, no off-heap growth,"
          + " one log line per refused connection, and a communicator formed meanwhile works")
  void fuzzedEndpointsRefuseEveryBadConnectionAndKeepWorking() throws Exception {
    int frames = Integer.getInteger("sparkccl.fuzz.frames", 10_000);
    File log = dir.resolve("fuzz.log").toFile();
    Process p =
        new ProcessBuilder(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx64m",
                "-XX:MaxDirectMemorySize=32m",
                "-XX:+UseSerialGC",
                "-XX:ErrorFile=" + dir.resolve("hs_err_%p.log"),
                "-cp",
                System.getProperty("java.class.path"),
                FuzzMain.class.getName(),
                Integer.toString(frames))
            .redirectErrorStream(true)
            .redirectOutput(log)
            .start();
    long t0 = System.nanoTime();
    boolean exited = p.waitFor(280, TimeUnit.SECONDS);
    if (!exited) {
      p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
    }
    String out = Files.readString(log.toPath(), StandardCharsets.UTF_8);
    List<String> lines = out.lines().toList();
    String summary =
        lines.stream().filter(l -> l.matches("^(CONNECTED|FUZZ|OFFHEAP|OK|FAILED).*")).toList()
            + "";
    assertTrue(exited, "still running after 280 s:\n" + tail(out));
    assertFalse(out.contains("OutOfMemoryError"), tail(out));
    assertFalse(out.contains("A fatal error has been detected"), tail(out));
    assertEquals(0, p.exitValue(), "failed:\n" + tail(out));
    assertTrue(lines.contains("OK"), tail(out));
    Matcher m = Pattern.compile("(?m)^CONNECTED (\\d+)$").matcher(out);
    assertTrue(m.find(), tail(out));
    long connected = Long.parseLong(m.group(1));
    long refusals = lines.stream().filter(l -> REFUSAL.matcher(l).find()).count();
    System.out.printf(
        "EndpointFuzzTest: %s; %d refusal lines; %d s%n",
        summary, refusals, (System.nanoTime() - t0) / 1_000_000_000L);
    // A connection the kernel completed in a listener's backlog just before that listener closed
    // (the joined root closes its own mid-fuzz) never reaches our code: it is reset unaccepted and
    // logs nothing, yet the client counted it as connected. A few such races are allowed; a
    // refusal without its line, or a line too many, is not.
    assertTrue(
        refusals <= connected && connected - refusals <= BACKLOG_RACES,
        "one log line per connection the endpoints accepted: "
            + connected
            + " connected, "
            + refusals
            + " refusal lines");
    Matcher o = Pattern.compile("OFFHEAP communicatorBytes=(\\d+) peak=(\\d+)").matcher(out);
    assertTrue(o.find(), tail(out));
    long frameLimit = 16L << 20;
    assertTrue(
        Long.parseLong(o.group(2)) <= Long.parseLong(o.group(1)) + frameLimit,
        "off-heap peak past the communicator's own bytes + the 16 MiB frame limit: " + summary);
  }

  private static String tail(String s) {
    return s.length() <= 6000 ? s : "..." + s.substring(s.length() - 6000);
  }
}
