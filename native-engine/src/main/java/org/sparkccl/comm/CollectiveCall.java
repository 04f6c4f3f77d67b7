package org.sparkccl.comm;

import java.nio.ByteBuffer;
import java.util.function.LongFunction;
import org.sparkccl.CclMismatchException;
import org.sparkccl.DataType;
import org.sparkccl.ReduceOp;

/**
 * What a rank asked for, as every rank must agree on it: the kind of collective, its sequence
 * number on the communicator, count, dtype, operator and root. It travels in the header of every
 * message (24 bytes, no extra round trip), so that a receiver can tell at the first message of a
 * collective whether its neighbour called the same thing.
 */
public record CollectiveCall(
    Kind kind, long seq, long count, DataType dtype, ReduceOp op, int root) {
  /** Collective kinds, named as users call them. */
  public enum Kind {
    ALL_REDUCE("allReduce"),
    BROADCAST("broadcast"),
    REDUCE("reduce"),
    ALL_GATHER("allGather"),
    REDUCE_SCATTER("reduceScatter"),
    /** A point-to-point transfer; {@code root} is the receiving rank, {@code seq} per pair. */
    SEND_RECV("send/recv");

    private final String label;

    Kind(String label) {
      this.label = label;
    }

    public String label() {
      return label;
    }
  }

  public static final int BYTES = 24;

  /** {@code allReduce(count=1024, float32, sum)}, as in error messages. */
  public String signature() {
    StringBuilder b = new StringBuilder(kind.label()).append("(count=").append(count);
    b.append(", ").append(dtype);
    if (op != null) {
      b.append(", ").append(op);
    }
    if (kind == Kind.BROADCAST || kind == Kind.REDUCE) {
      b.append(", root=").append(root);
    } else if (kind == Kind.SEND_RECV) {
      b.append(", to rank ").append(root);
    }
    return b.append(')').toString();
  }

  /** {@code allReduce #17 (count=1024, float32, sum)}, for logs and errors. */
  public String what() {
    String s = signature();
    int paren = s.indexOf('(');
    return s.substring(0, paren) + " #" + seq + " " + s.substring(paren);
  }

  /**
   * Whether two ranks' calls can run together (same collective, same arguments): {@code equals},
   * written out, since a record's generated {@code equals} is linked on its first use, on the path
   * of the first announcement a proxy compares.
   */
  public boolean matches(CollectiveCall other) {
    return other != null
        && seq == other.seq
        && count == other.count
        && root == other.root
        && kind == other.kind
        && dtype == other.dtype
        && op == other.op;
  }

  /**
   * 32 bits of what {@link #encode} writes, the same in every process (a record's {@code hashCode}
   * is not: it takes the enums' identity hashes), for checks that compare one word before they
   * compare the whole call.
   */
  public int fingerprint() {
    long h = seq * 0x9E3779B97F4A7C15L;
    h = (h ^ count) * 0xC2B2AE3D27D4EB4FL;
    h ^= kind.ordinal() | dtype.ordinal() << 8 | (op == null ? 0xFF : op.ordinal()) << 16;
    h = (h ^ root) * 0x165667B19E3779F9L;
    return (int) (h ^ (h >>> 32));
  }

  public void encode(ByteBuffer out, int at) {
    out.putLong(at, seq);
    out.putLong(at + 8, count);
    out.put(at + 16, (byte) kind.ordinal());
    out.put(at + 17, (byte) dtype.ordinal());
    out.put(at + 18, (byte) (op == null ? -1 : op.ordinal()));
    out.put(at + 19, (byte) 0);
    out.putInt(at + 20, root);
  }

  /**
   * Whether bytes {@code [at, at + BYTES)} of {@code in} are this call as {@link #encode} writes
   * it; allocates nothing.
   */
  public boolean isEncodedAt(ByteBuffer in, int at) {
    return in.getLong(at) == seq
        && in.getLong(at + 8) == count
        && in.get(at + 16) == (byte) kind.ordinal()
        && in.get(at + 17) == (byte) dtype.ordinal()
        && in.get(at + 18) == (byte) (op == null ? -1 : op.ordinal())
        && in.getInt(at + 20) == root;
  }

  /**
   * The error when rank {@code rank}, running {@code mine}, receives data that rank {@code peer}
   * sent for {@code theirs}. When their numbers differ and this rank still knows its call of their
   * number ({@code myCalls}), the error compares calls of the same number, which names the cause
   * (rank 0's broadcast #2 against rank 3's allReduce #2) rather than its consequence.
   */
  public static CclMismatchException mismatch(
      int rank,
      CollectiveCall mine,
      int peer,
      CollectiveCall theirs,
      LongFunction<CollectiveCall> myCalls) {
    CollectiveCall compared = mine;
    CollectiveCall sameNumber = theirs.seq() != mine.seq() ? myCalls.apply(theirs.seq()) : null;
    if (sameNumber != null && !sameNumber.matches(theirs)) {
      compared = sameNumber;
    }
    return new CclMismatchException(
        "rank "
            + rank
            + " called "
            + compared.signature()
            + " as operation #"
            + compared.seq()
            + " but rank "
            + peer
            + " called "
            + theirs.signature()
            + " as operation #"
            + theirs.seq());
  }

  // values() clones its array on every call, and a receiver decodes a call per message
  private static final Kind[] KINDS = Kind.values();
  private static final DataType[] TYPES = DataType.values();
  private static final ReduceOp[] OPS = ReduceOp.values();

  /** Decodes what {@link #encode} wrote, or {@code null} for bytes that are no call. */
  public static CollectiveCall decode(ByteBuffer in, int at) {
    int k = in.get(at + 16);
    int t = in.get(at + 17);
    int o = in.get(at + 18);
    if (k < 0 || k >= KINDS.length || t < 0 || t >= TYPES.length || o < -1 || o >= OPS.length) {
      return null;
    }
    return new CollectiveCall(
        KINDS[k],
        in.getLong(at),
        in.getLong(at + 8),
        TYPES[t],
        o < 0 ? null : OPS[o],
        in.getInt(at + 20));
  }
}
