package org.sparkccl.spark.worker;

import java.nio.charset.StandardCharsets;

/**
 * The constants of the channel between a Python worker and its executor; {@code
 * python-shim/sparkccl/_channel.py} holds the same. The worker connects and sends its opening
 * ({@link #MAGIC}, then its pid as 8 bytes) and a nonce; the executor answers with its nonce and
 * proof; the worker sends its proof and gets one status byte ({@code ChallengeResponse}, as the
 * bootstrap and the data plane). Then each request frame (type, released segment ids, fields) gets
 * one reply frame: {@link #OK} and the results, or {@link #ERROR}, a kind and the message. A worker
 * whose communicator spins moves its requests into a {@link CallBox} ({@link #BOX}).
 */
final class ChannelProtocol {
  /** Names the protocol and its version; a worker of another version is refused. */
  static final byte[] MAGIC = "SCCLPY02".getBytes(StandardCharsets.US_ASCII);

  static final int OPENING_BYTES = 16;
  static final byte ACCEPTED = 1;
  static final byte REFUSED = 0;

  // requests
  static final int MAP = 1;
  static final int OPEN = 2;
  static final int COLLECTIVE = 3;
  static final int CLOSE = 4;
  static final int PING = 5;

  /**
   * Requests and replies go through a shared segment from now on ({@link CallBox}); the socket
   * carries only wake-ups ({@link #WAKE}).
   */
  static final int BOX = 6;

  /** A wake-up on the socket once requests go through the call box. */
  static final byte WAKE = 'W';

  // collectives
  static final int ALL_REDUCE = 1;
  static final int BROADCAST = 2;
  static final int ALL_GATHER = 3;
  static final int REDUCE_SCATTER = 4;
  static final int BARRIER = 5;

  // replies
  static final byte OK = 0;
  static final byte ERROR = 1;

  // error kinds: sparkccl.CclError and its subclasses
  static final byte E_OTHER = 1;
  static final byte E_MISMATCH = 2;
  static final byte E_TIMEOUT = 3;
  static final byte E_ABORT = 4;
  static final byte E_ARGUMENT = 5;

  private ChannelProtocol() {}
}
