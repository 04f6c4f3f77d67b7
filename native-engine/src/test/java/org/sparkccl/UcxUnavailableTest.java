package org.sparkccl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Where UCX does not load: {@code ucx} says how to install it, {@code auto} falls back. */
class UcxUnavailableTest {
  /** Far above the few seconds the child needs; its communicators time out after 20 s. */
  private static final long CHILD_SECONDS = 90;

  @TempDir Path dir;

  @Test
  @DisplayName(
      "without UCX, transport=ucx fails on every rank with how to install it and auto uses sockets")
  void withoutUcxAskingForItFailsAndAutoFallsBack() throws Exception {
    // The child writes to a file, not a pipe: a read of a pipe would block for as long as a hung
    // child keeps it open, past any deadline of this test.
    Path log = dir.resolve("child.log");
    Process p =
        new ProcessBuilder(
                List.of(
                    Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "-Xmx256m",
                    // Jucx unpacks its JNI library into java.io.tmpdir: an unusable one stops UCX
                    // from loading, as a machine without libucx0 would
                    "-Djava.io.tmpdir=/proc/no-such-dir",
                    "-cp",
                    System.getProperty("java.class.path"),
                    UcxUnavailableMain.class.getName()))
            .redirectErrorStream(true)
            .redirectOutput(log.toFile())
            .start();
    boolean exited;
    try {
      exited = p.waitFor(CHILD_SECONDS, TimeUnit.SECONDS);
    } finally {
      if (p.isAlive()) {
        p.destroyForcibly();
        p.waitFor(10, TimeUnit.SECONDS);
      }
    }
    String out = read(log);
    if (!exited) {
      fail("the child JVM did not exit within " + CHILD_SECONDS + " s; killed. It wrote:\n" + out);
    }
    assertEquals(0, p.exitValue(), out);
    for (int r = 0; r < 2; r++) {
      String ucx = line(out, "transport=ucx rank " + r + ": ");
      assertTrue(ucx.startsWith("ERROR "), ucx);
      assertTrue(ucx.contains("apt-get install libucx0"), "says how to install UCX: " + ucx);
      assertEquals("RING socket", line(out, "transport=auto rank " + r + ": "));
    }
  }

  private static String read(Path log) {
    try {
      return Files.readString(log, StandardCharsets.UTF_8);
    } catch (IOException e) {
      return "(output unreadable: " + e + ")";
    }
  }

  private static String line(String out, String prefix) {
    return out.lines()
        .filter(l -> l.startsWith(prefix))
        .map(l -> l.substring(prefix.length()))
        .findFirst()
        .orElse("missing: " + prefix + " in\n" + out);
  }
}
