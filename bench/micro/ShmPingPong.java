import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;

/**
 * The floor of a hop through shared memory between two JVM processes: a busy-polled ping-pong of
 * one 8-byte flag per cache line over a file in /dev/shm, with LINES lines written and awaited per
 * message (1: a message that shares the flag's line, as the LL protocol's small messages do; 4: as
 * many lines as the simple FIFO moves for one). Prints the one-way time of 5 rounds of 200,000
 * round trips. Run: java bench/micro/ShmPingPong.java [LINES] (or compiled: java -cp DIR ShmPingPong)
 */
public class ShmPingPong {
  private static final VarHandle LONGS =
      MethodHandles.byteBufferViewVarHandle(long[].class, ByteOrder.nativeOrder());
  private static final int LINE = 128;
  private static final int TRIPS = 200_000;

  public static void main(String[] args) throws Exception {
    int lines = args.length > 0 ? Integer.parseInt(args[0]) : 1;
    if (args.length > 1) {
      side(Path.of(args[1]), lines, false);
      return;
    }
    Path file = Files.createTempFile(Path.of("/dev/shm"), "shm-ping-pong-", "");
    try {
      // the second process: this one's command line (source file or class, whichever ran this),
      // with the file it shares
      ProcessHandle.Info me = ProcessHandle.current().info();
      List<String> cmd = new ArrayList<>();
      cmd.add(me.command().orElseThrow());
      List<String> jvmAndMain = List.of(me.arguments().orElseThrow());
      cmd.addAll(jvmAndMain.subList(0, jvmAndMain.size() - args.length));
      cmd.add(Integer.toString(lines));
      cmd.add(file.toString());
      Process pong = new ProcessBuilder(cmd).inheritIO().start();
      side(file, lines, true);
      pong.waitFor();
    } finally {
      Files.deleteIfExists(file);
    }
  }

  private static void side(Path file, int lines, boolean ping) throws Exception {
    try (FileChannel ch =
        FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
      MappedByteBuffer m = ch.map(FileChannel.MapMode.READ_WRITE, 0, 2L * lines * LINE);
      int mine = ping ? 0 : lines * LINE;
      int theirs = ping ? lines * LINE : 0;
      // the second process announces itself before the first round is timed
      if (ping) {
        await(m, theirs, lines, -1);
      } else {
        send(m, mine, lines, -1);
      }
      for (int round = 0; round < 5; round++) {
        long t0 = System.nanoTime();
        for (long i = 1; i <= TRIPS; i++) {
          long seq = (long) round * TRIPS + i;
          if (ping) {
            send(m, mine, lines, seq);
            await(m, theirs, lines, seq);
          } else {
            await(m, theirs, lines, seq);
            send(m, mine, lines, seq);
          }
        }
        if (ping) {
          System.out.printf(
              "shared-memory ping-pong, %d line(s): one way %.3f us%n",
              lines, (System.nanoTime() - t0) / 1e3 / TRIPS / 2);
        }
      }
    }
  }

  private static void send(MappedByteBuffer m, int at, int lines, long seq) {
    for (int l = 0; l < lines; l++) {
      LONGS.setRelease(m, at + l * LINE, seq);
    }
  }

  private static void await(MappedByteBuffer m, int at, int lines, long seq) {
    for (int l = 0; l < lines; l++) {
      while ((long) LONGS.getAcquire(m, at + l * LINE) != seq) {
        Thread.onSpinWait();
      }
    }
  }
}
