package org.sparkccl.spark;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

/**
 * An all-gather among the tasks of a barrier stage, kept by the driver plugin and reached through
 * the plugin's RPC channel. {@code BarrierTaskContext.allGather} does the same but polls its answer
 * once a second, so each call costs a second or more; this one answers in milliseconds. Each task
 * posts its bytes under a key naming the stage attempt and the call, and asks again until every
 * rank has posted.
 */
final class Rendezvous {
  /** Entries nobody completed in this long are dropped (their stage died or was retried). */
  private static final long STALE_NANOS = 30L * 60 * 1_000_000_000L;

  /** More ranks than a barrier stage could run; the bound keeps a bad post's allocation small. */
  static final int MAX_RANKS = 1 << 16;

  /** A rank's bytes for one all-gather, posted (and re-posted, idempotently) by its task. */
  record Post(String key, int rank, int nRanks, byte[] payload) {
    /**
     * The message as plain bytes: the executor's RPC layer deserializes replies with Spark's own
     * class loader, which does not see classes of jars added with {@code --jars}.
     */
    byte[] encode() {
      return Wire.write(
          out -> {
            out.writeUTF(key);
            out.writeInt(rank);
            out.writeInt(nRanks);
            Wire.writeBytes(out, payload);
          });
    }

    static Post decode(byte[] message) {
      return Wire.read(
          message, in -> new Post(in.readUTF(), in.readInt(), in.readInt(), Wire.readBytes(in)));
    }
  }

  /** Every rank's bytes once all have posted ({@code all != null}), else who is missing. */
  record Reply(byte[][] all, List<Integer> missing) {
    byte[] encode() {
      return Wire.write(
          out -> {
            out.writeBoolean(all != null);
            if (all != null) {
              out.writeInt(all.length);
              for (byte[] b : all) {
                Wire.writeBytes(out, b);
              }
            } else {
              out.writeInt(missing.size());
              for (int r : missing) {
                out.writeInt(r);
              }
            }
          });
    }

    static Reply decode(byte[] message) {
      return Wire.read(
          message,
          in -> {
            boolean complete = in.readBoolean();
            int n = in.readInt();
            if (n < 0 || n > in.available() / 4) { // each entry takes at least 4 bytes
              throw new IOException(n + " entries in " + in.available() + " bytes");
            }
            if (complete) {
              byte[][] all = new byte[n][];
              for (int r = 0; r < n; r++) {
                all[r] = Wire.readBytes(in);
              }
              return new Reply(all, List.of());
            }
            List<Integer> missing = new ArrayList<>();
            for (int i = 0; i < n; i++) {
              missing.add(in.readInt());
            }
            return new Reply(null, missing);
          });
    }
  }

  /** Data streams over byte arrays, for the two messages above. */
  private static final class Wire {
    interface Writer {
      void write(DataOutputStream out) throws IOException;
    }

    interface Reader<T> {
      T read(DataInputStream in) throws IOException;
    }

    static byte[] write(Writer w) {
      ByteArrayOutputStream bytes = new ByteArrayOutputStream();
      try (DataOutputStream out = new DataOutputStream(bytes)) {
        w.write(out);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      return bytes.toByteArray();
    }

    static <T> T read(byte[] message, Reader<T> r) {
      try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(message))) {
        return r.read(in);
      } catch (IOException e) {
        throw new IllegalArgumentException("a malformed SparkCCL rendezvous message", e);
      }
    }

    static void writeBytes(DataOutputStream out, byte[] b) throws IOException {
      out.writeInt(b.length);
      out.write(b);
    }

    /** A length-prefixed array, its length checked against the bytes left before allocating. */
    static byte[] readBytes(DataInputStream in) throws IOException {
      int n = in.readInt();
      if (n < 0 || n > in.available()) {
        throw new IOException("a length of " + n + " with " + in.available() + " bytes left");
      }
      byte[] b = new byte[n];
      in.readFully(b);
      return b;
    }
  }

  private static final class Entry {
    final byte[][] payloads;
    final boolean[] fetched;
    final long created = System.nanoTime();
    int posted;
    int fetchedCount;

    Entry(int n) {
      payloads = new byte[n][];
      fetched = new boolean[n];
    }
  }

  private final Map<String, Entry> entries = new HashMap<>();

  /** Handles one post on the driver; never blocks. */
  synchronized Reply handle(Post post) {
    sweep();
    // checked before an entry exists: a bad post must neither allocate its claim nor stay behind
    if (post.nRanks() < 1
        || post.nRanks() > MAX_RANKS
        || post.rank() < 0
        || post.rank() >= post.nRanks()) {
      throw new IllegalArgumentException(
          "rendezvous "
              + post.key()
              + ": rank "
              + post.rank()
              + " of "
              + post.nRanks()
              + "; expected 0 <= rank < ranks <= "
              + MAX_RANKS);
    }
    Entry e = entries.computeIfAbsent(post.key(), k -> new Entry(post.nRanks()));
    if (post.nRanks() != e.payloads.length || post.rank() < 0 || post.rank() >= e.payloads.length) {
      throw new IllegalArgumentException(
          "rendezvous "
              + post.key()
              + ": rank "
              + post.rank()
              + " of "
              + post.nRanks()
              + " does not fit the "
              + e.payloads.length
              + " ranks seen first");
    }
    if (e.payloads[post.rank()] == null) {
      e.payloads[post.rank()] = post.payload();
      e.posted++;
    }
    if (e.posted < e.payloads.length) {
      List<Integer> missing = new ArrayList<>();
      for (int r = 0; r < e.payloads.length; r++) {
        if (e.payloads[r] == null) {
          missing.add(r);
        }
      }
      return new Reply(null, missing);
    }
    if (!e.fetched[post.rank()]) {
      e.fetched[post.rank()] = true;
      e.fetchedCount++;
    }
    if (e.fetchedCount == e.payloads.length) {
      entries.remove(post.key());
    }
    return new Reply(e.payloads.clone(), List.of());
  }

  /** Entries still held; for tests and leak checks. */
  synchronized int size() {
    return entries.size();
  }

  private void sweep() {
    long now = System.nanoTime();
    for (Iterator<Entry> it = entries.values().iterator(); it.hasNext(); ) {
      if (now - it.next().created > STALE_NANOS) {
        it.remove();
      }
    }
  }
}
