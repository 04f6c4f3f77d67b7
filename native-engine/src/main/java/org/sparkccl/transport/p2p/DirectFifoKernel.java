package org.sparkccl.transport.p2p;

/**
 * A channel kernel that can talk to the next rank's kernel on the same host without the proxy: its
 * send side can write into a receive FIFO another rank exported ({@link EdgeKind}). The CUDA kernel
 * is one; a host-memory channel kernel becomes one through {@code transport.shm.SharedRingFifos}.
 */
public interface DirectFifoKernel {
  /**
   * The GPU's PCI bus id: one name for the device in every process of the host; {@link
   * SameHostInfo#HOST_MEMORY} for a host-memory kernel.
   */
  String deviceId();

  /** Whether this kernel's GPU can write into the GPU named {@code deviceId} (or is it). */
  boolean reaches(String deviceId);

  /**
   * Allocates this channel's receive FIFO for a direct edge and points the kernel's receive side at
   * it: control block in a shared-memory file, slots in this GPU ({@link EdgeKind#PEER}) or in the
   * file ({@link EdgeKind#SHM}).
   *
   * @param name a name unique on the host for this communicator, rank and channel
   */
  FifoHandle exportRecv(EdgeKind kind, String name);

  /** Opens the next rank's receive FIFO and points the kernel's send side at it. */
  void importSend(FifoHandle handle);

  /**
   * Sizes the kernel's grid once the ring's edges are set: {@code ranksOnDevice} ranks of the
   * communicator (this one included) run {@code channels} channels each on this kernel's GPU.
   */
  void fitGrid(int ranksOnDevice, int channels);

  /** Blocks that run the channel on the GPU. */
  int blocks();

  /**
   * Once the ring's edges are set: whether the previous rank's kernel ({@code prev}) and the next
   * rank's ({@code next}) run on this kernel's device over direct edges, so that the fences
   * ordering their FIFOs need cover only that device. Nothing by default.
   */
  default void peersOnThisDevice(boolean prev, boolean next) {}

  /** Unlinks the shared-memory file of the exported FIFO; the mappings stay until close. */
  void unlinkExported();

  /**
   * The processes of the previous and the next rank on this channel's direct edges ({@code -1}
   * where the edge is not direct), once the ring is set up: a wait on a direct edge can then notice
   * that the other process died instead of waiting for the timeout. Nothing by default.
   */
  default void watchPeers(long prevPid, long nextPid) {}

  /**
   * The calls this rank and the previous one post for each other in the exported FIFO's file
   * ({@link CallBoard}), or null where the edge has none (the default: a GPU kernel's calls are
   * announced over the network).
   */
  default CallBoard recvBoard() {
    return null;
  }

  /** The same for the next rank's FIFO, once {@link #importSend} opened it. */
  default CallBoard sendBoard() {
    return null;
  }

  /**
   * Frees what {@link #exportRecv} and {@link #importSend} made and points the kernel at its own
   * FIFOs again, for a ring that fell back to another transport before any collective ran.
   */
  void dropDirect();
}
