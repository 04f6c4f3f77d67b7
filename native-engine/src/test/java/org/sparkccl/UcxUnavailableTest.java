package org.sparkccl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** Where UCX does not load: {@code ucx} says how to install it, {@code auto} falls back. */
class UcxUnavailableTest {
  @Test
  @DisplayName(
      "without UCX, transport=ucx fails on every rank with how to install it and auto uses sockets")
  void withoutUcxAskingForItFailsAndAutoFallsBack() throws Exception {
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
            .start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(60, TimeUnit.SECONDS), out);
    assertEquals(0, p.exitValue(), out);
    for (int r = 0; r < 2; r++) {
      String ucx = line(out, "transport=ucx rank " + r + ": ");
      assertTrue(ucx.startsWith("ERROR "), ucx);
      assertTrue(ucx.contains("apt-get install libucx0"), "says how to install UCX: " + ucx);
      assertEquals("RING socket", line(out, "transport=auto rank " + r + ": "));
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
