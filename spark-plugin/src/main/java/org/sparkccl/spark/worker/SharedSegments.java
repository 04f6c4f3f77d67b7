package org.sparkccl.spark.worker;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import org.sparkccl.device.HostBuffer;
import org.sparkccl.memory.DirectMemory;

/**
 * The shared-memory segments one Python worker made ({@code sparkccl.empty} and friends): files in
 * {@code /dev/shm} that the worker maps with {@code mmap} and this executor with {@code
 * FileChannel.map}, so that collectives read and write the worker's numpy arrays in place. A file
 * is deleted as soon as both sides have it mapped, so nothing is left in {@code /dev/shm} when
 * either process dies. Owned by the worker's session thread; not thread-safe.
 */
final class SharedSegments implements AutoCloseable {
  static final Path SHM = Path.of("/dev/shm");
  static final int MAX_SEGMENTS = 65_536;
  static final long MAX_SEGMENT_BYTES = Integer.MAX_VALUE - 8;

  private final Path dir;
  private final long peerPid;
  private final Pattern names;
  private final Map<Integer, MappedByteBuffer> segments = new HashMap<>();
  private final Set<Integer> pinned = new HashSet<>();
  private int nextId = 1;
  private boolean tainted;

  /**
   * @param dir where the worker makes its segments ({@link #SHM} but in tests)
   * @param peerPid the worker's process id: its segments are named {@code
   *     sparkccl-<uid>-<pid>-<suffix>}
   */
  SharedSegments(Path dir, long peerPid) {
    this.dir = dir;
    this.peerPid = peerPid;
    this.names =
        Pattern.compile(
            Pattern.quote("sparkccl-" + ChannelFiles.uid() + "-" + peerPid + "-")
                + "[0-9a-z]{1,40}");
  }

  /**
   * Maps the worker's segment {@code name} of {@code bytes} bytes and deletes its file.
   *
   * @return the segment's id for later requests
   * @throws IllegalArgumentException naming what is wrong with the name, file or size
   */
  int map(String name, long bytes) throws IOException {
    if (!names.matcher(name).matches()) {
      throw new IllegalArgumentException(
          "segment name " + name + " is not this worker's; expected " + names.pattern());
    }
    if (bytes <= 0 || bytes > MAX_SEGMENT_BYTES) {
      throw new IllegalArgumentException(
          "segment of " + bytes + " bytes; expected 1.." + MAX_SEGMENT_BYTES);
    }
    if (segments.size() >= MAX_SEGMENTS) {
      throw new IllegalArgumentException(
          "the worker holds " + segments.size() + " shared segments, the most one may");
    }
    Path file = dir.resolve(name);
    try {
      if (!Files.isRegularFile(file, LinkOption.NOFOLLOW_LINKS)
          || (Integer) Files.getAttribute(file, "unix:uid", LinkOption.NOFOLLOW_LINKS)
              != ChannelFiles.uid()
          || Files.size(file) < bytes) {
        throw new IllegalArgumentException(
            "segment " + name + " is not a file of this user of at least " + bytes + " bytes");
      }
      try (FileChannel ch =
          FileChannel.open(
              file, StandardOpenOption.READ, StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS)) {
        MappedByteBuffer mapped = ch.map(FileChannel.MapMode.READ_WRITE, 0, bytes);
        int id = nextId++;
        segments.put(id, mapped);
        return id;
      }
    } finally {
      Files.deleteIfExists(file);
    }
  }

  /**
   * A host buffer over {@code bytes} bytes of segment {@code id} from {@code offset}; the caller
   * closes it after the collective.
   */
  HostBuffer view(int id, long offset, long bytes) {
    MappedByteBuffer segment = segments.get(id);
    if (segment == null) {
      throw new IllegalArgumentException(
          "no shared segment " + id + " (released, or never mapped)");
    }
    if (offset < 0 || bytes < 0 || offset > segment.capacity() - bytes) {
      throw new IllegalArgumentException(
          "offset="
              + offset
              + " bytes="
              + bytes
              + " is outside segment "
              + id
              + " of "
              + segment.capacity()
              + " bytes");
    }
    return HostBuffer.wrap(segment.slice((int) offset, (int) bytes).order(ByteOrder.nativeOrder()));
  }

  /**
   * The whole of segment {@code id}, kept mapped until the session closes whatever the worker
   * releases: the session polls it ({@link CallBox}), and unmapping it under the poll would crash
   * the executor.
   */
  ByteBuffer pin(int id) {
    MappedByteBuffer segment = segments.get(id);
    if (segment == null) {
      throw new IllegalArgumentException(
          "no shared segment " + id + " (released, or never mapped)");
    }
    pinned.add(id);
    return segment.duplicate();
  }

  /**
   * Remembers that a collective failed: one aborted mid-way may still have a transfer touching a
   * segment, so from now on segments are left for the garbage collector to unmap.
   */
  void taint() {
    tainted = true;
  }

  /** Unmaps segment {@code id}, which the worker no longer uses; unknown ids are ignored. */
  void release(int id) {
    if (pinned.contains(id)) {
      return;
    }
    unmap(id);
  }

  private void unmap(int id) {
    MappedByteBuffer segment = segments.remove(id);
    if (segment != null && !tainted) {
      DirectMemory.unmap(segment);
    }
  }

  int size() {
    return segments.size();
  }

  /** Unmaps every segment and deletes any file of the worker's still in {@code dir}. */
  @Override
  public void close() {
    for (int id : segments.keySet().stream().toList()) {
      unmap(id);
    }
    pinned.clear();
    try (DirectoryStream<Path> left =
        Files.newDirectoryStream(dir, "sparkccl-" + ChannelFiles.uid() + "-" + peerPid + "-*")) {
      for (Path p : left) {
        Files.deleteIfExists(p);
      }
    } catch (IOException e) {
      // best effort: a worker that died between making a file and sending its name
    }
  }
}
