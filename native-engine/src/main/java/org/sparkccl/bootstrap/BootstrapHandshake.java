package org.sparkccl.bootstrap;

import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.nio.ByteBuffer;
import org.sparkccl.CclException;
import org.sparkccl.auth.ChallengeResponse;

/**
 * The opening of a bootstrap connection, both ends. The rank sends its opening (magic, protocol
 * version, rank, rank count) and a nonce; the root answers with its version and, when the versions
 * agree, its nonce and its proof of the secret; the rank checks that proof and sends its own; the
 * root answers with a status. Neither side ever sends the secret.
 */
final class BootstrapHandshake {
  static final int MAGIC = 0x53434252;

  /** The protocol version; raise it whenever the bootstrap's wire format changes. */
  static final int VERSION = 2;

  static final int OPENING_BYTES = 16;

  static final int ACCEPTED = 0;
  static final int RANK_COUNT_DIFFERS = 1;
  static final int RANK_OUT_OF_RANGE = 2;
  static final int RANK_TAKEN = 3;
  static final int BAD_PROOF = 4;

  private BootstrapHandshake() {}

  /** What a rank claims in its opening. */
  record Opening(int magic, int version, int rank, int nRanks) {
    byte[] encode() {
      return ByteBuffer.allocate(OPENING_BYTES)
          .putInt(magic)
          .putInt(version)
          .putInt(rank)
          .putInt(nRanks)
          .array();
    }

    static Opening decode(byte[] b) {
      ByteBuffer in = ByteBuffer.wrap(b);
      return new Opening(in.getInt(), in.getInt(), in.getInt(), in.getInt());
    }
  }

  /**
   * The rank's side: returns once the root has accepted this rank.
   *
   * @throws CclException when the root speaks another version, does not prove the secret, or
   *     refuses this rank (these do not get better by retrying)
   * @throws IOException when the connection fails or the deadline passes
   */
  static void connect(
      Socket s, ChallengeResponse auth, Opening mine, String root, long deadlineNanos)
      throws IOException {
    InputStream in = s.getInputStream();
    DataOutputStream out = new DataOutputStream(s.getOutputStream());
    byte[] opening = mine.encode();
    byte[] myNonce = ChallengeResponse.newNonce();
    out.write(opening);
    out.write(myNonce);
    out.flush();
    int magic = BoundedReads.readInt(s, in, deadlineNanos);
    int version = BoundedReads.readInt(s, in, deadlineNanos);
    if (magic != MAGIC) {
      throw new CclException(
          "rank "
              + mine.rank()
              + ": "
              + root
              + " is not a SparkCCL bootstrap root (magic 0x"
              + Integer.toHexString(magic)
              + ")");
    }
    if (version != mine.version()) {
      throw new CclException(
          "rank "
              + mine.rank()
              + ": the bootstrap root at "
              + root
              + " speaks protocol version "
              + version
              + ", this rank version "
              + mine.version()
              + "; every rank and the root must run the same SparkCCL release");
    }
    byte[] rootNonce = new byte[ChallengeResponse.NONCE_BYTES];
    byte[] rootProof = new byte[ChallengeResponse.PROOF_BYTES];
    BoundedReads.readFully(s, in, rootNonce, deadlineNanos);
    BoundedReads.readFully(s, in, rootProof, deadlineNanos);
    if (!auth.isAcceptorProof(rootProof, opening, myNonce, rootNonce)) {
      throw new CclException(
          "rank "
              + mine.rank()
              + ": the bootstrap root at "
              + root
              + " does not hold this address's secret; expected the exact string"
              + " TcpBootstrapRoot.address() returned (host:port#secret)");
    }
    out.write(auth.connectorProof(opening, myNonce, rootNonce));
    out.flush();
    int status = BoundedReads.readInt(s, in, deadlineNanos);
    if (status != ACCEPTED) {
      throw new CclException(
          "rank "
              + mine.rank()
              + " of "
              + mine.nRanks()
              + ": the bootstrap root at "
              + root
              + " refused it: "
              + refusal(status));
    }
  }

  /**
   * The root's side.
   *
   * @return the rank's opening once it proved the secret and {@code admit} took it
   * @throws IOException naming why the connection is refused (the socket is then closed)
   */
  static Opening accept(Socket s, ChallengeResponse auth, long deadlineNanos, Admission admit)
      throws IOException {
    InputStream in = s.getInputStream();
    DataOutputStream out = new DataOutputStream(s.getOutputStream());
    byte[] opening = new byte[OPENING_BYTES];
    BoundedReads.readFully(s, in, opening, deadlineNanos);
    Opening theirs = Opening.decode(opening);
    out.writeInt(MAGIC);
    out.writeInt(VERSION);
    if (theirs.magic() != MAGIC) {
      out.flush();
      throw new IOException(
          "not a SparkCCL rank (magic 0x" + Integer.toHexString(theirs.magic()) + ")");
    }
    if (theirs.version() != VERSION) {
      out.flush();
      throw new IOException(
          "a rank speaks protocol version " + theirs.version() + ", this root version " + VERSION);
    }
    byte[] theirNonce = new byte[ChallengeResponse.NONCE_BYTES];
    BoundedReads.readFully(s, in, theirNonce, deadlineNanos);
    byte[] myNonce = ChallengeResponse.newNonce();
    out.write(myNonce);
    out.write(auth.acceptorProof(opening, theirNonce, myNonce));
    out.flush();
    byte[] proof = new byte[ChallengeResponse.PROOF_BYTES];
    BoundedReads.readFully(s, in, proof, deadlineNanos);
    int status =
        auth.isConnectorProof(proof, opening, theirNonce, myNonce)
            ? admit.admit(theirs)
            : BAD_PROOF;
    out.writeInt(status);
    out.flush();
    if (status != ACCEPTED) {
      throw new IOException(
          "refused rank " + theirs.rank() + " of " + theirs.nRanks() + ": " + refusal(status));
    }
    return theirs;
  }

  /** Decides whether a rank that proved the secret may join. */
  @FunctionalInterface
  interface Admission {
    /** Returns {@link #ACCEPTED} or why not. */
    int admit(Opening opening);
  }

  static String refusal(int status) {
    return switch (status) {
      case RANK_COUNT_DIFFERS -> "its rank count differs from the root's";
      case RANK_OUT_OF_RANGE -> "its rank is out of range";
      case RANK_TAKEN -> "another connection already took that rank";
      case BAD_PROOF -> "it did not prove the root's secret";
      default -> "status " + status;
    };
  }
}
