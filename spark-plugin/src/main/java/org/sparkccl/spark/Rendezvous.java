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
import org.sparkccl.bootstrap.TcpBootstrap;

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

  /** The most ranks a rendezvous may have (a barrier stage of more tasks is not plausible). */
  static final int MAX_RANKS = 1 << 16;

  /** The most bytes one rank may post, as the engine's TCP bootstrap allows. */
  static final int MAX_PAYLOAD_BYTES = TcpBootstrap.MAX_CONTRIBUTION_BYTES;

  /** The most rendezvous open at once; more are refused until some complete or go stale. */
  static final int MAX_ENTRIES = 4096;

  /** The most payload bytes held for open rendezvous, all together. */
  static final long MAX_HELD_BYTES = 1L << 30;

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

    /**
     * @throws IllegalArgumentException for a truncated or malformed message, before allocating
     *     anything it sizes
     */
    static Post decode(byte[] message) {
      return Wire.read(
          message,
          in -> {
            String key = in.readUTF();
            int rank = in.readInt();
            int nRanks = in.readInt();
            checkRanks(key, rank, nRanks);
            return new Post(key, rank, nRanks, Wire.readBytes(in));
          });
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
            // every entry takes at least 4 bytes: a count the message cannot hold is refused
            int n = Wire.readCount(in, 4);
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
        T value = r.read(in);
        if (in.available() != 0) {
          throw new IllegalArgumentException(
              "a malformed SparkCCL rendezvous message: "
                  + in.available()
                  + " bytes after its end");
        }
        return value;
      } catch (IOException e) {
        throw new IllegalArgumentException(
            "a malformed SparkCCL rendezvous message of "
                + message.length
                + " bytes: "
                + (e instanceof java.io.EOFException ? "truncated" : e.toString()),
            e);
      }
    }

    /** A count of entries of at least {@code minBytes} each, checked against what is left. */
    static int readCount(DataInputStream in, int minBytes) throws IOException {
      int n = in.readInt();
      if (n < 0 || n > MAX_RANKS || (long) n * minBytes > in.available()) {
        throw new IllegalArgumentException(
            "a SparkCCL rendezvous message with "
                + n
                + " entries in "
                + in.available()
                + " bytes; expected 0.."
                + MAX_RANKS
                + " entries that fit");
      }
      return n;
    }

    static void writeBytes(DataOutputStream out, byte[] b) throws IOException {
      out.writeInt(b.length);
      out.write(b);
    }

    /** A length, checked against the limit and the bytes left before allocating, then bytes. */
    static byte[] readBytes(DataInputStream in) throws IOException {
      int length = in.readInt();
      if (length < 0 || length > MAX_PAYLOAD_BYTES || length > in.available()) {
        throw new IllegalArgumentException(
            "a SparkCCL rendezvous payload of "
                + length
                + " bytes with "
                + in.available()
                + " left; expected 0.."
                + MAX_PAYLOAD_BYTES
                + " bytes that the message holds");
      }
      byte[] b = new byte[length];
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

    long bytes() {
      long sum = 0;
      for (byte[] p : payloads) {
        sum += p == null ? 0 : p.length;
      }
      return sum;
    }
  }

  private final Map<String, Entry> entries = new HashMap<>();
  private long heldBytes;

  /** Refuses a rank outside {@code 0 <= rank < nRanks <= MAX_RANKS}. */
  static void checkRanks(String key, int rank, int nRanks) {
    if (nRanks < 1 || nRanks > MAX_RANKS || rank < 0 || rank >= nRanks) {
      throw new IllegalArgumentException(
          "rendezvous "
              + key
              + ": rank "
              + rank
              + " of "
              + nRanks
              + "; expected 0 <= rank < ranks <= "
              + MAX_RANKS);
    }
  }

  /**
   * Handles one post on the driver; never blocks. Everything a post claims is checked before an
   * entry is made for it.
   */
  synchronized Reply handle(Post post) {
    sweep();
    checkRanks(post.key(), post.rank(), post.nRanks());
    int bytes = post.payload().length;
    if (bytes > MAX_PAYLOAD_BYTES) {
      throw new IllegalArgumentException(
          "rendezvous "
              + post.key()
              + ": rank "
              + post.rank()
              + " posted "
              + bytes
              + " bytes; expected at most "
              + MAX_PAYLOAD_BYTES);
    }
    Entry e = entries.get(post.key());
    if (e == null) {
      if (entries.size() >= MAX_ENTRIES) {
        throw new IllegalArgumentException(
            "rendezvous "
                + post.key()
                + ": "
                + MAX_ENTRIES
                + " rendezvous are already open; expected fewer at once");
      }
      e = new Entry(post.nRanks());
      entries.put(post.key(), e);
    }
    if (post.nRanks() != e.payloads.length) {
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
      if (heldBytes + bytes > MAX_HELD_BYTES) {
        throw new IllegalArgumentException(
            "rendezvous "
                + post.key()
                + ": holding "
                + heldBytes
                + " bytes already, "
                + bytes
                + " more would pass the limit of "
                + MAX_HELD_BYTES);
      }
      e.payloads[post.rank()] = post.payload();
      e.posted++;
      heldBytes += bytes;
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
      heldBytes -= e.bytes();
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
      Entry e = it.next();
      if (now - e.created > STALE_NANOS) {
        it.remove();
        heldBytes -= e.bytes();
      }
    }
  }
}
