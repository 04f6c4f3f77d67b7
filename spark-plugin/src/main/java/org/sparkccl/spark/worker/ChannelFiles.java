package org.sparkccl.spark.worker;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Comparator;
import java.util.Set;
import java.util.stream.Stream;
import org.sparkccl.auth.ChallengeResponse;

/**
 * Where an executor publishes its Python channel: {@code /tmp/sparkccl-<uid>/<executor pid>/}
 * holding {@code channel.sock} and {@code secret} (hex). The folders are {@code 0700} and the
 * secret {@code 0600}, so only the executor's own user can connect or prove the secret; a folder
 * that another user owns, or that others may enter, is refused rather than used. A Python worker
 * finds its executor by walking its parent processes (worker, PySpark's daemon, the executor JVM).
 */
final class ChannelFiles {
  static final String SOCKET = "channel.sock";
  static final String SECRET = "secret";
  private static final Set<PosixFilePermission> OWNER_ONLY =
      PosixFilePermissions.fromString("rwx------");
  private static final Set<PosixFilePermission> SECRET_MODE =
      PosixFilePermissions.fromString("rw-------");

  private ChannelFiles() {}

  /** The folder of this user's executors on this machine. */
  static Path baseDir() {
    return Path.of("/tmp", "sparkccl-" + uid());
  }

  /** This process's user id (Linux). */
  static int uid() {
    try {
      return (Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid");
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read this process's user id from /proc/self", e);
    }
  }

  /**
   * Makes {@code base/<pid>/} afresh with {@code secret} in it, after checking {@code base} is this
   * user's and private, and removing the folders of executors no longer running.
   *
   * @return the executor's folder
   */
  static Path publish(Path base, long pid, byte[] secret) throws IOException {
    try {
      Files.createDirectory(base, PosixFilePermissions.asFileAttribute(OWNER_ONLY));
    } catch (FileAlreadyExistsException e) {
      // checked below: it must be ours and private
    }
    checkPrivate(base);
    sweepDead(base);
    Path dir = base.resolve(Long.toString(pid));
    deleteTree(dir);
    Files.createDirectory(dir, PosixFilePermissions.asFileAttribute(OWNER_ONLY));
    Path file = dir.resolve(SECRET);
    Files.write(
        Files.createFile(file, PosixFilePermissions.asFileAttribute(SECRET_MODE)),
        ChallengeResponse.hex(secret).getBytes(StandardCharsets.US_ASCII),
        StandardOpenOption.WRITE);
    return dir;
  }

  /** Refuses a folder that is a link, another user's, or open to others. */
  static void checkPrivate(Path dir) throws IOException {
    if (!Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
      throw new IOException(
          dir + " is not a folder (a link?); refusing to publish a channel there");
    }
    int owner = (Integer) Files.getAttribute(dir, "unix:uid", LinkOption.NOFOLLOW_LINKS);
    Set<PosixFilePermission> perms = Files.getPosixFilePermissions(dir, LinkOption.NOFOLLOW_LINKS);
    if (owner != uid() || !perms.equals(OWNER_ONLY)) {
      throw new IOException(
          dir
              + " belongs to user "
              + owner
              + " with mode "
              + PosixFilePermissions.toString(perms)
              + "; expected user "
              + uid()
              + " and rwx------ (remove it, or fix its owner and mode)");
    }
  }

  /** Deletes the folders of executor processes that are gone. */
  private static void sweepDead(Path base) throws IOException {
    try (DirectoryStream<Path> entries = Files.newDirectoryStream(base)) {
      for (Path p : entries) {
        String name = p.getFileName().toString();
        if (name.matches("\\d{1,10}") && ProcessHandle.of(Long.parseLong(name)).isEmpty()) {
          deleteTree(p);
        }
      }
    }
  }

  static void deleteTree(Path dir) throws IOException {
    if (!Files.exists(dir, LinkOption.NOFOLLOW_LINKS)) {
      return;
    }
    try (Stream<Path> all = Files.walk(dir)) {
      for (Path p : all.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    }
  }
}
