package org.sparkccl.examples;

import java.io.Serializable;
import java.util.List;
import org.apache.spark.SparkEnv;
import org.sparkccl.memory.DirectMemory;
import scala.jdk.javaapi.CollectionConverters;
import scala.runtime.AbstractFunction1;

/**
 * What a barrier task sees of its executor: its id and process id, how many TCP sockets the process
 * listens on (Spark's own and any the engine left), the engine threads still alive (not counting
 * the executor's Python channel, which lives as long as the executor) and the engine's off-heap
 * bytes still allocated (waiting up to 10 s for the last two to drain, since the last stage's tasks
 * close their communicators as they finish). A line reads {@code <id> pid=<pid> listeners=<n>
 * threads=<n> offHeapBytes=<n>}.
 */
final class ExecutorProbe
    extends AbstractFunction1<scala.collection.Iterator<Integer>, scala.collection.Iterator<String>>
    implements Serializable {
  @Override
  public scala.collection.Iterator<String> apply(scala.collection.Iterator<Integer> input) {
    long deadline = System.nanoTime() + 10_000_000_000L;
    long threads;
    long bytes;
    do {
      threads =
          Thread.getAllStackTraces().keySet().stream()
              .filter(t -> t.getName().startsWith("sparkccl-") && !executorService(t.getName()))
              .count();
      bytes = DirectMemory.outstandingBytes();
      if (threads == 0 && bytes == 0) {
        break;
      }
      try {
        Thread.sleep(50);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        break;
      }
    } while (System.nanoTime() < deadline);
    String line =
        SparkEnv.get().executorId()
            + " pid="
            + ProcessHandle.current().pid()
            + " listeners="
            + listeningSockets()
            + " threads="
            + threads
            + " offHeapBytes="
            + bytes;
    return CollectionConverters.asScala(List.of(line).iterator());
  }

  /**
   * The Python workers' channel: one listener thread (and its watchdog) that the executor plugin
   * keeps for the executor's whole life, not something a communicator left behind.
   */
  private static boolean executorService(String threadName) {
    return threadName.equals("sparkccl-worker-channel")
        || threadName.equals("sparkccl-worker-channel-watchdog");
  }

  /** Rows of {@code /proc/self/net/tcp*} in state LISTEN whose inode is one of this process's. */
  private static long listeningSockets() {
    try {
      java.util.Set<String> inodes = new java.util.HashSet<>();
      try (var fds = java.nio.file.Files.list(java.nio.file.Path.of("/proc/self/fd"))) {
        for (java.nio.file.Path fd : (Iterable<java.nio.file.Path>) fds::iterator) {
          try {
            String link = java.nio.file.Files.readSymbolicLink(fd).toString();
            if (link.startsWith("socket:[")) {
              inodes.add(link.substring(8, link.length() - 1));
            }
          } catch (java.io.IOException e) {
            // closed meanwhile
          }
        }
      }
      long n = 0;
      for (String file : new String[] {"/proc/self/net/tcp", "/proc/self/net/tcp6"}) {
        for (String row : java.nio.file.Files.readAllLines(java.nio.file.Path.of(file))) {
          String[] f = row.trim().split("\\s+");
          if (f.length > 9 && f[3].equals("0A") && inodes.contains(f[9])) {
            n++;
          }
        }
      }
      return n;
    } catch (java.io.IOException e) {
      return -1;
    }
  }
}
