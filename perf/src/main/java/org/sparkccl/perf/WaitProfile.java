package org.sparkccl.perf;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.stream.Stream;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordedStackTrace;
import jdk.jfr.consumer.RecordedThread;
import jdk.jfr.consumer.RecordingFile;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * Summarises where threads waited, from the flight recordings {@code bench/waits.sh} makes in every
 * JVM of a perf tool run: parks ({@code jdk.ThreadPark}) and contended monitors ({@code
 * jdk.JavaMonitorEnter}), by kind of thread (numbers folded: {@code sparkccl-proxy-r3} and {@code
 * -r5} are one kind) and by the engine's code that waited (the first two engine frames under the
 * park). A CPU profile does not show a thread that sleeps, and the time of a small collective is
 * mostly hand-offs: a park that should have been a spin, or a wait that ends late, shows here as
 * more waits, or longer ones, at one site.
 *
 * <pre>
 * java -cp 'perf/target/lib/*:perf/target/sparkccl-perf-0.1.0-SNAPSHOT.jar' \
 *     org.sparkccl.perf.WaitProfile bench/build/waits --calls 40200
 * </pre>
 *
 * Figures are per rank process (recordings with an engine thread), and with {@code --calls} (every
 * call a rank made) per call.
 */
@Command(
    name = "wait-profile",
    mixinStandardHelpOptions = true,
    description = "Summarises the parks and monitor waits in the flight recordings of a directory.")
public final class WaitProfile implements Callable<Integer> {
  private static final String ENGINE = "org.sparkccl.";

  @Parameters(index = "0", description = "directory of *.jfr files, one per JVM")
  Path dir;

  @Option(
      names = "--calls",
      description =
          "calls each rank made in all (JIT warm-up, warm-up and timed): figures per call")
  long calls;

  @Option(
      names = "--top",
      description = "sites shown per kind of thread (default ${DEFAULT-VALUE})")
  int top = 8;

  /** Waits of one kind of thread at one site: how many, and how long in all. */
  static final class Tally {
    long count;
    long nanos;

    void add(long waits, long waitedNanos) {
      count += waits;
      nanos += waitedNanos;
    }
  }

  /** What the recordings of one run hold: per kind of thread, per site. */
  static final class Waits {
    final Map<String, Map<String, Tally>> byThread = new TreeMap<>();
    int rankProcesses;

    Tally at(String thread, String site) {
      return byThread
          .computeIfAbsent(thread, t -> new TreeMap<>())
          .computeIfAbsent(site, x -> new Tally());
    }

    /** Adds {@code other}'s waits, one rank process's. */
    void addProcess(Waits other) {
      rankProcesses++;
      other.byThread.forEach(
          (thread, sites) -> sites.forEach((site, t) -> at(thread, site).add(t.count, t.nanos)));
    }
  }

  public static void main(String[] args) {
    System.exit(new CommandLine(new WaitProfile()).execute(args));
  }

  @Override
  public Integer call() {
    if (!Files.isDirectory(dir)) {
      System.err.println(
          "wait-profile: " + dir + " is not a directory; expected the OUT_DIR of bench/waits.sh");
      return 2;
    }
    Waits waits;
    try {
      waits = read(dir);
    } catch (IOException e) {
      System.err.println("wait-profile: reading the recordings in " + dir + " failed: " + e);
      return 1;
    }
    if (waits.rankProcesses == 0) {
      System.err.println("wait-profile: no recording in " + dir + " holds an engine thread's wait");
      return 1;
    }
    print(waits, calls, top, System.out);
    return 0;
  }

  /**
   * Reads every {@code *.jfr} file of {@code dir}; recordings without an engine thread's wait (the
   * perf tool's launcher) are left out.
   */
  static Waits read(Path dir) throws IOException {
    Waits waits = new Waits();
    List<Path> files;
    try (Stream<Path> s = Files.list(dir)) {
      files = s.filter(p -> p.toString().endsWith(".jfr")).sorted().toList();
    }
    for (Path file : files) {
      Waits one = new Waits();
      boolean engine = false;
      try (RecordingFile recording =
          new RecordingFile(file)) { // read as it goes: recordings are big
        while (recording.hasMoreEvents()) {
          RecordedEvent e = recording.readEvent();
          String type = e.getEventType().getName();
          if (!type.equals("jdk.ThreadPark") && !type.equals("jdk.JavaMonitorEnter")) {
            continue;
          }
          RecordedThread t = e.getThread();
          String thread = kind(t == null ? null : t.getJavaName());
          // a rank process's own threads: the launcher has the bootstrap's threads only
          engine |= thread.startsWith("sparkccl-proxy-") || thread.startsWith("sparkccl-kernel-");
          String site = site(e.getStackTrace());
          if (type.equals("jdk.JavaMonitorEnter")) {
            site = "monitor " + simpleName(e.getClass("monitorClass").getName()) + " at " + site;
          }
          one.at(thread, site).add(1, e.getDuration().toNanos());
        }
      }
      if (engine) {
        waits.addProcess(one);
      }
    }
    return waits;
  }

  /** {@code sparkccl-proxy-r3} -> {@code sparkccl-proxy-rN}. */
  static String kind(String threadName) {
    return threadName == null ? "unnamed" : threadName.replaceAll("\\d+", "N");
  }

  /**
   * The first two engine frames of a stack ({@code ProxyThread.busyWait < ProxyThread.loop}), or
   * its first two frames below the JDK's parking where no engine frame is on it.
   */
  static String site(RecordedStackTrace stack) {
    if (stack == null) {
      return "(no stack)";
    }
    List<String> engine = new ArrayList<>();
    List<String> other = new ArrayList<>();
    for (RecordedFrame f : stack.getFrames()) {
      String type = f.getMethod().getType().getName();
      if (type.contains("$$Lambda")) {
        continue; // a lambda's hidden class: its body is the next frame, a method of its own
      }
      String name = simpleName(type) + "." + f.getMethod().getName();
      if (type.startsWith(ENGINE)) {
        engine.add(name);
      } else if (!type.startsWith("jdk.internal.misc.") && !type.endsWith(".LockSupport")) {
        other.add(name);
      }
    }
    List<String> shown = engine.isEmpty() ? other : engine;
    if (shown.isEmpty()) {
      return "(no frame below the park)";
    }
    return String.join(" < ", shown.subList(0, Math.min(2, shown.size())));
  }

  private static String simpleName(String type) {
    return type.substring(type.lastIndexOf('.') + 1);
  }

  /** Per kind of thread, its waits in all and at its busiest sites. */
  static void print(Waits waits, long calls, int top, PrintStream out) {
    int n = waits.rankProcesses;
    String unit = calls > 0 ? "a call of one rank" : "a rank process";
    double per = calls > 0 ? (double) n * calls : n;
    out.printf(
        Locale.ROOT,
        "# waits in %d rank process(es): count and time (us) %s; mean wait (us)%n",
        n,
        unit);
    waits.byThread.forEach(
        (thread, sites) -> {
          long count = sites.values().stream().mapToLong(t -> t.count).sum();
          long nanos = sites.values().stream().mapToLong(t -> t.nanos).sum();
          out.printf(
              Locale.ROOT,
              "## %s: %s waits, %.3f us, mean %.1f us%n",
              thread,
              fmt(count / per),
              nanos / 1e3 / per,
              nanos / 1e3 / Math.max(1, count));
          sites.entrySet().stream()
              .sorted(Comparator.comparingLong((Map.Entry<String, Tally> e) -> -e.getValue().nanos))
              .limit(top)
              .forEach(
                  e ->
                      out.printf(
                          Locale.ROOT,
                          "%12s %12.3f %10.1f  %s%n",
                          fmt(e.getValue().count / per),
                          e.getValue().nanos / 1e3 / per,
                          e.getValue().nanos / 1e3 / e.getValue().count,
                          e.getKey()));
        });
  }

  private static String fmt(double v) {
    return String.format(Locale.ROOT, v >= 100 ? "%.0f" : "%.4f", v);
  }
}
