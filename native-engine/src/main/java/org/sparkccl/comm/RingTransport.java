package org.sparkccl.comm;

import org.sparkccl.bootstrap.Bootstrap;

/**
 * One way to connect the ring channels of a communicator, like an NCCL transport ({@code p2p},
 * {@code shm}, {@code net}). {@link TransportSelector} opens the candidates, publishes each one's
 * {@link #localInfo()} through the bootstrap, and connects the first that every rank has. Adding a
 * transport means implementing this and listing it in {@link TransportSelector}.
 */
interface RingTransport {
  /** The name that logs and {@code Communicator.ringTransport()} show: {@code ucx}, ... */
  String name();

  /**
   * What this rank tells the others (addresses, keys); {@code null} when the transport cannot run
   * on this rank, with the reason in {@link #unavailableReason()}.
   */
  byte[] localInfo();

  /** Why {@link #localInfo()} is null, or null. */
  String unavailableReason();

  /**
   * Why the ranks cannot use this transport together although each has it (given every rank's
   * {@link #localInfo()}), or null when they can. Every rank decides the same from the same infos.
   */
  default String refusedBy(byte[][] infos) {
    return null;
  }

  /** What to tell a user who asked for this transport on a rank that lacks it. */
  default String installHint() {
    return "";
  }

  /**
   * Hands over the communicator's secret (32 bytes), before {@link #connect}: a transport whose
   * connections prove it keeps it; the default ignores it.
   */
  default void useSecret(byte[] secret) {}

  /**
   * Connects every channel's send side to the next rank and receive side to the previous one.
   *
   * @param token rank 0's random number that names this communicator on the wire
   * @param infos every rank's {@link #localInfo()}
   * @throws org.sparkccl.CclException when a connection cannot be made
   */
  void connect(
      CommContext ctx, Bootstrap bootstrap, long token, int next, int prev, byte[][] infos);

  /**
   * Whether the ranks must confirm to each other that {@link #connect} worked before the ring may
   * use it: true where one rank can fail alone (a remote key that does not unpack), so every rank
   * reaches the same decision instead of a timeout.
   */
  default boolean confirmsConnect() {
    return false;
  }

  /**
   * Up to how many bytes a collective on this ring takes the tuner's choice, whose cost model is
   * measured over sockets (which trees, recursive doubling and Rabenseifner use); a larger one runs
   * on the ring unless an algorithm is asked for ({@code algo=tree}, {@code rd}, {@code rh}). A
   * ring the model describes: every size; -1: none.
   */
  default long tunedUpTo() {
    return Long.MAX_VALUE;
  }

  /**
   * Whether this ring's connections send large steps from the collective's buffers and receive them
   * into its output ({@link org.sparkccl.algorithm.ChannelPlan#IN_PLACE_MIN_BYTES}): sockets. The
   * same on every rank; the tuner then charges the ring less for those bytes.
   */
  default boolean movesInPlace() {
    return false;
  }

  /**
   * Whether this ring's bytes go through sockets that a waiting kernel may read and write itself,
   * as it may not a UCX worker the proxy owns: {@code ring.proxyMinBytes=auto} then gives large
   * rings to the proxy where ranks spin. The same on every rank.
   */
  default boolean overSockets() {
    return false;
  }

  /**
   * Whether every edge of this ring, on every rank, is a shared-memory FIFO that the two ranks'
   * kernels write and read themselves: the same answer on every rank once connected. The tuner then
   * takes its shared-memory constants. Not the in-memory ring of threads ({@link LocalRing}): its
   * hop cost 14 to 17 us at 8 B with 4 thread ranks on a 16-core host, where recursive doubling
   * took 4 to 6 us, so there the tuner keeps its usual constants.
   */
  default boolean inMemory() {
    return false;
  }

  /** Called once the ring runs on this transport: hands its progress to the proxy thread. */
  default void start(CommContext ctx) {}

  /** Releases what {@link #localInfo()} or {@link #connect} set up. */
  default void close(boolean afterFailure) {}

  /** A detail for the INFO line that says which transport the ring uses, or empty. */
  default String describe(CommContext ctx) {
    return "";
  }
}
