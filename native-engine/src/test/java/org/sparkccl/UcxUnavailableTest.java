package org.sparkccl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sparkccl.bootstrap.TcpBootstrapRoot;

/**
 * Where UCX does not load: {@code ucx} says how to install it, {@code auto} falls back (the ring
 * between processes of one host then wraps sockets instead of UCX).
 */
class UcxUnavailableTest {
  /** Far above the few seconds the child needs; its communicators time out after 20 s. */
  private static final long CHILD_SECONDS = 90;

  @TempDir Path dir;

  @Test
  @DisplayName(
      "without UCX, transport=ucx fails on every rank with how to install it, and auto uses the"
          + " in-memory ring between threads and shared memory between processes of one host")
  void withoutUcxAskingForItFailsAndAutoFallsBack() throws Exception {
    String threads = runChildren(List.of());
    for (int r = 0; r < 2; r++) {
      String ucx = line(threads, "transport=ucx rank " + r + ": ");
      assertTrue(ucx.startsWith("ERROR "), ucx);
      assertTrue(ucx.contains("apt-get install libucx0"), "says how to install UCX: " + ucx);
      assertEquals("RING local", line(threads, "transport=auto rank " + r + ": "));
    }
    try (TcpBootstrapRoot root = TcpBootstrapRoot.start("127.0.0.1", 2)) {
      String processes = runChildren(List.of(root.address()));
      for (int r = 0; r < 2; r++) {
        // the ring's edges go through shared memory; its notices, and trees, over sockets
        assertEquals("RING shm", line(processes, "transport=auto process rank " + r + ": "));
      }
    }
  }

  /**
   * Runs one child without UCX, or (with a bootstrap root) two children that are the two ranks;
   * returns everything they wrote.
   */
  private String runChildren(List<String> root) throws Exception {
    int children = root.isEmpty() ? 1 : 2;
    List<Process> ps = new ArrayList<>();
    StringBuilder out = new StringBuilder();
    try {
      for (int c = 0; c < children; c++) {
        List<String> cmd =
            new ArrayList<>(
                List.of(
                    Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "-Xmx256m",
                    // Jucx unpacks its JNI library into java.io.tmpdir: an unusable one stops UCX
                    // from loading, as a machine without libucx0 would
                    "-Djava.io.tmpdir=/proc/no-such-dir",
                    "-cp",
                    System.getProperty("java.class.path"),
                    UcxUnavailableMain.class.getName()));
        if (!root.isEmpty()) {
          cmd.add(root.get(0));
          cmd.add(Integer.toString(c));
        }
        // The child writes to a file, not a pipe: a read of a pipe would block for as long as a
        // hung child keeps it open, past any deadline of this test.
        ps.add(
            new ProcessBuilder(cmd)
                .redirectErrorStream(true)
                .redirectOutput(log(root, c).toFile())
                .start());
      }
      for (int c = 0; c < children; c++) {
        Process p = ps.get(c);
        boolean exited = p.waitFor(CHILD_SECONDS, TimeUnit.SECONDS);
        String written = read(log(root, c));
        out.append(written);
        if (!exited) {
          fail(
              "a child JVM did not exit within "
                  + CHILD_SECONDS
                  + " s; killed. It wrote:\n"
                  + written);
        }
        assertEquals(0, p.exitValue(), written);
      }
    } finally {
      for (Process p : ps) {
        if (p.isAlive()) {
          p.destroyForcibly();
          p.waitFor(10, TimeUnit.SECONDS);
        }
      }
    }
    return out.toString();
  }

  private Path log(List<String> root, int child) {
    return dir.resolve((root.isEmpty() ? "threads" : "process" + child) + ".log");
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
