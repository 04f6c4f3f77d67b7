package org.sparkccl.transport.socket;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.security.GeneralSecurityException;
import javax.crypto.AEADBadTagException;
import javax.crypto.Cipher;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;

/**
 * A socket whose bytes travel sealed: cut into records of at most {@link #RECORD_BYTES}, each
 * encrypted and authenticated with AES-256-GCM from the JDK. Each direction has its own key (see
 * {@link SealingKeys}), fresh for every socket, and its own record counter as the nonce, so a nonce
 * is never used twice under one key, and a record dropped, replayed or reordered fails the next
 * record's check. On the wire a record is {@code int32 length} (of what follows), the ciphertext
 * and a 16-byte tag.
 *
 * <p>A write seals a record from the caller's bytes and reports them moved only once the whole
 * record is in the socket, so a caller that writes until its buffer is empty never leaves half a
 * record behind. A read may decrypt more than the caller asked for; the rest waits here for the
 * next read. Records are sealed from and opened into the caller's buffers where they fit, through
 * heap buffers of one record (nothing off-heap to free). The JDK's cipher allocates small objects
 * on every record (a parameter object and its own state, a few KiB per 64 KiB record), which is the
 * price of its API; a wire that is not sealed ({@link PlainWire}) allocates nothing.
 */
final class SealedWire implements Wire {
  /** Most plaintext bytes in one record: small enough to buffer, large enough to amortise. */
  static final int RECORD_BYTES = 64 << 10;

  static final int TAG_BYTES = 16;
  static final int LENGTH_BYTES = 4;
  private static final int MAX_SEALED = TAG_BYTES + RECORD_BYTES;

  private final SocketChannel channel;
  private final Direction out;
  private final Direction in;
  private final ByteBuffer none = ByteBuffer.allocate(0);
  private final ByteBuffer[] one = new ByteBuffer[1];

  /** The record on its way out; empty when none. */
  private ByteBuffer sealed;

  /** The caller's buffers the record on its way covers, and how much of each. */
  private ByteBuffer[] covered = new ByteBuffer[2];

  private int[] coveredBytes = new int[2];
  private int nCovered;

  /** Bytes read from the socket and not yet opened (write mode: position is the fill). */
  private ByteBuffer received;

  /** An opened record's plaintext the caller has not taken yet (read mode). */
  private ByteBuffer opened;

  SealedWire(SocketChannel channel, SecretKeySpec sendKey, SecretKeySpec receiveKey) {
    this.channel = channel;
    this.out = new Direction(sendKey);
    this.in = new Direction(receiveKey);
  }

  @Override
  public SocketChannel channel() {
    return channel;
  }

  @Override
  public synchronized int write(ByteBuffer src) throws IOException {
    one[0] = src;
    try {
      return (int) write(one);
    } finally {
      one[0] = null;
    }
  }

  @Override
  public synchronized long write(ByteBuffer[] srcs) throws IOException {
    long moved = 0;
    while (true) {
      if (nCovered > 0) {
        if (!flush()) {
          return moved;
        }
        moved += release();
      }
      if (!anyRemaining(srcs)) {
        return moved;
      }
      seal(srcs);
    }
  }

  private static boolean anyRemaining(ByteBuffer[] srcs) {
    for (ByteBuffer b : srcs) {
      if (b.hasRemaining()) {
        return true;
      }
    }
    return false;
  }

  /** Seals the next record from {@code srcs}, leaving their positions where they were. */
  private void seal(ByteBuffer[] srcs) throws IOException {
    if (sealed == null) {
      sealed = ByteBuffer.allocate(LENGTH_BYTES + MAX_SEALED);
    }
    if (covered.length < srcs.length) {
      covered = new ByteBuffer[srcs.length];
      coveredBytes = new int[srcs.length];
    }
    Cipher c = out.next(Cipher.ENCRYPT_MODE);
    sealed.clear().position(LENGTH_BYTES);
    int budget = RECORD_BYTES;
    try {
      for (ByteBuffer b : srcs) {
        int n = Math.min(b.remaining(), budget);
        if (n == 0) {
          continue;
        }
        int position = b.position();
        int limit = b.limit();
        b.limit(position + n);
        c.update(b, sealed);
        b.limit(limit).position(position);
        covered[nCovered] = b;
        coveredBytes[nCovered++] = n;
        budget -= n;
        if (budget == 0) {
          break;
        }
      }
      c.doFinal(none, sealed);
    } catch (GeneralSecurityException e) {
      throw new IOException("sealing a record failed: " + e, e);
    }
    sealed.putInt(0, sealed.position() - LENGTH_BYTES).flip();
  }

  /** Writes what is left of the sealed record; true once all of it is in the socket. */
  private boolean flush() throws IOException {
    while (sealed.hasRemaining()) {
      if (channel.write(sealed) == 0) {
        return false;
      }
    }
    return true;
  }

  /** Moves the covered buffers past the bytes the record carried; returns how many. */
  private long release() {
    long n = 0;
    for (int i = 0; i < nCovered; i++) {
      covered[i].position(covered[i].position() + coveredBytes[i]);
      n += coveredBytes[i];
      covered[i] = null;
    }
    nCovered = 0;
    return n;
  }

  @Override
  public int read(ByteBuffer dst) throws IOException {
    if (received == null) {
      received = ByteBuffer.allocate(2 * (LENGTH_BYTES + MAX_SEALED));
      opened = ByteBuffer.allocate(RECORD_BYTES).flip();
    }
    int moved = 0;
    while (dst.hasRemaining()) {
      if (opened.hasRemaining()) {
        moved += take(opened, dst);
        continue;
      }
      int direct = openRecord(dst);
      if (direct >= 0) {
        moved += direct;
      } else {
        int n = channel.read(received);
        if (n < 0) {
          if (moved > 0) {
            return moved;
          }
          if (received.position() > 0) {
            throw new IOException(
                "the connection closed in the middle of a sealed record ("
                    + received.position()
                    + " bytes of it arrived)");
          }
          return -1;
        }
        if (n == 0) {
          return moved;
        }
      }
    }
    return moved;
  }

  /**
   * Opens the first record in {@link #received} if all of it has arrived: straight into {@code dst}
   * when it fits, else into {@link #opened}.
   *
   * @return -1 when no whole record is there, else the bytes put straight into {@code dst}
   */
  private int openRecord(ByteBuffer dst) throws IOException {
    int filled = received.position();
    if (filled < LENGTH_BYTES) {
      return -1;
    }
    int length = received.getInt(0);
    if (length < TAG_BYTES || length > MAX_SEALED) {
      throw new IOException(
          "a sealed record of "
              + length
              + " bytes; expected "
              + TAG_BYTES
              + ".."
              + MAX_SEALED
              + " (the peer does not encrypt, or the stream is corrupt)");
    }
    int end = LENGTH_BYTES + length;
    if (filled < end) {
      return -1;
    }
    Cipher c = in.next(Cipher.DECRYPT_MODE);
    int plain = length - TAG_BYTES;
    boolean direct = dst.remaining() >= plain;
    ByteBuffer target = direct ? dst : opened.clear();
    received.limit(end).position(LENGTH_BYTES);
    try {
      c.doFinal(received, target);
    } catch (AEADBadTagException e) {
      throw new IOException(
          "a sealed record failed its integrity check (altered on the way, or the peer"
              + " holds other keys)",
          e);
    } catch (GeneralSecurityException e) {
      throw new IOException("opening a sealed record failed: " + e, e);
    }
    received.limit(filled).position(end);
    received.compact();
    if (direct) {
      return plain;
    }
    opened.flip();
    return 0;
  }

  private static int take(ByteBuffer from, ByteBuffer to) {
    int n = Math.min(from.remaining(), to.remaining());
    int limit = from.limit();
    from.limit(from.position() + n);
    to.put(from);
    from.limit(limit);
    return n;
  }

  /** One direction's key, record counter and cipher. */
  private static final class Direction {
    private final SecretKeySpec key;
    private final Cipher cipher;
    private final byte[] nonce = new byte[12];
    private long records;

    Direction(SecretKeySpec key) {
      this.key = key;
      try {
        this.cipher = Cipher.getInstance("AES/GCM/NoPadding");
      } catch (GeneralSecurityException e) {
        // every Java platform must provide AES/GCM/NoPadding
        throw new IllegalStateException("AES/GCM is unavailable", e);
      }
    }

    /** The cipher, set up for the next record (nonce: four zero bytes, then the counter). */
    Cipher next(int mode) throws IOException {
      long n = records++;
      for (int i = 0; i < 8; i++) {
        nonce[4 + i] = (byte) (n >>> (56 - 8 * i));
      }
      try {
        cipher.init(mode, key, new GCMParameterSpec(8 * TAG_BYTES, nonce));
      } catch (GeneralSecurityException e) {
        throw new IOException("setting up the cipher failed: " + e, e);
      }
      return cipher;
    }
  }
}
