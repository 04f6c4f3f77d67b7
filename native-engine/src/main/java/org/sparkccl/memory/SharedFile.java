package org.sparkccl.memory;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;

/**
 * A file in shared memory that processes of one host map, each seeing the same bytes. The creator
 * makes it readable by its own user only and writes every page of it, so that a full {@code
 * /dev/shm} fails here, with a message, rather than later as a {@code SIGBUS} in whichever thread
 * first touches a page the file system could not give. It removes the name once the other sides
 * have mapped the file; the pages live until every side has unmapped them.
 *
 * <pre>{@code
 * try (SharedFile f = SharedFile.create(SharedFile.DIRECTORY.resolve("sparkccl-x"), 4096)) {
 *   f.buffer().putLong(0, 42);
 *   f.unlink();
 * }
 * }</pre>
 */
public final class SharedFile implements AutoCloseable {
  /** Where the files live: the shared-memory file system of Linux. */
  public static final Path DIRECTORY = Path.of("/dev/shm");

  private static final int ZERO_CHUNK = 64 << 10;

  private final Path path;
  private final MappedByteBuffer mapped;
  private boolean closed;

  private SharedFile(Path path, long bytes, boolean create) {
    this.path = path;
    try (FileChannel ch = create ? createFile(path) : openFile(path)) {
      if (create) {
        zeroFill(ch, bytes);
      } else if (ch.size() != bytes) {
        throw new IllegalArgumentException(
            path + " has " + ch.size() + " bytes; expected " + bytes);
      }
      this.mapped = ch.map(FileChannel.MapMode.READ_WRITE, 0, bytes);
    } catch (IOException e) {
      if (create) {
        deleteQuietly(path);
      }
      throw new UncheckedIOException(
          "cannot " + (create ? "create" : "open") + " shared memory " + path + ": " + e, e);
    }
  }

  /** Creates the file of {@code bytes} zeroed bytes (it must not exist) and maps it. */
  public static SharedFile create(Path path, long bytes) {
    return new SharedFile(path, bytes, true);
  }

  /** Maps a file another side created; its size must be {@code bytes}. */
  public static SharedFile open(Path path, long bytes) {
    return new SharedFile(path, bytes, false);
  }

  /**
   * As {@link #open}, for a path another rank published: only an engine file ({@code
   * /dev/shm/sparkccl-*}), so that a peer cannot make this process map any file its user can write.
   *
   * @throws IllegalArgumentException for another path
   */
  public static SharedFile openPublished(Path path, long bytes) {
    if (!DIRECTORY.equals(path.getParent())
        || !path.getFileName().toString().startsWith("sparkccl-")) {
      throw new IllegalArgumentException(
          "a file outside " + DIRECTORY + " or not named sparkccl-*: " + path);
    }
    return open(path, bytes);
  }

  private static FileChannel createFile(Path path) throws IOException {
    Set<OpenOption> options =
        Set.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.READ, StandardOpenOption.WRITE);
    return FileChannel.open(
        path,
        options,
        PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
  }

  private static FileChannel openFile(Path path) throws IOException {
    return FileChannel.open(path, StandardOpenOption.READ, StandardOpenOption.WRITE);
  }

  private static void zeroFill(FileChannel ch, long bytes) throws IOException {
    ByteBuffer zeros = ByteBuffer.allocate((int) Math.min(ZERO_CHUNK, Math.max(bytes, 1)));
    long at = 0;
    while (at < bytes) {
      zeros.clear().limit((int) Math.min(zeros.capacity(), bytes - at));
      at += ch.write(zeros, at);
    }
  }

  private static void deleteQuietly(Path path) {
    try {
      Files.deleteIfExists(path);
    } catch (IOException ignored) {
      // the error being reported is the one that matters
    }
  }

  /** The whole file, native order; shares its bytes with every other mapping of the file. */
  public ByteBuffer buffer() {
    return mapped.duplicate().order(ByteOrder.nativeOrder());
  }

  /** The mapping itself, for callers that register it with a device. */
  public MappedByteBuffer mapped() {
    return mapped;
  }

  public Path path() {
    return path;
  }

  /** Removes the file's name; mappings stay valid. Idempotent. */
  public void unlink() {
    try {
      Files.deleteIfExists(path);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot remove " + path + ": " + e, e);
    }
  }

  /** Unmaps; no thread may touch the memory afterwards. Idempotent. */
  @Override
  public synchronized void close() {
    if (!closed) {
      closed = true;
      DirectMemory.unmap(mapped);
    }
  }
}
