package org.sparkccl.memory;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Direct memory that runs out gives an exception that says what to change, not the JVM's {@code
 * OutOfMemoryError}: a launch that needs a new FIFO then fails its communicator, and so every rank,
 * at once. In a child JVM with a 4 MiB limit, so that the test neither depends on this JVM's limit
 * nor touches gigabytes to reach it.
 */
class DirectMemoryLimitTest {
  @TempDir Path dir;

  @Test
  @DisplayName("direct memory past the JVM's limit throws IllegalStateException naming the cure")
  void exhaustedDirectMemoryIsAnExceptionThatNamesTheCure() throws Exception {
    Path out = dir.resolve("child.txt");
    Process p =
        new ProcessBuilder(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx64m",
                "-XX:MaxDirectMemorySize=4m",
                "-cp",
                System.getProperty("java.class.path"),
                DirectMemoryLimitMain.class.getName(),
                Integer.toString(1 << 20),
                Integer.toString(8 << 20))
            .redirectErrorStream(true)
            .redirectOutput(out.toFile())
            .start();
    boolean done = p.waitFor(60, TimeUnit.SECONDS);
    if (!done) {
      p.destroyForcibly();
    }
    String text = Files.readString(out, StandardCharsets.UTF_8);
    assertTrue(done, "the child did not finish in 60 s: " + text);
    assertEquals(0, p.exitValue(), text);
    List<String> lines = text.lines().toList();
    assertTrue(lines.contains("fits: 1048576"), text);
    String tooBig =
        lines.stream().filter(l -> l.startsWith("too big: ")).findFirst().orElse("(none)");
    assertTrue(tooBig.startsWith("too big: java.lang.IllegalStateException: "), tooBig);
    for (String word : List.of("8388608 bytes wanted", "1048576 held", "buffSize", "MaxDirect")) {
      assertTrue(tooBig.contains(word), "\"" + word + "\" missing from: " + tooBig);
    }
    // the failed allocation is not counted as held
    assertTrue(lines.contains("outstanding: 1048576"), text);
  }
}
