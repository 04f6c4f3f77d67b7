package org.sparkccl.transport.shm;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.function.LongFunction;
import org.sparkccl.comm.CollectiveCall;
import org.sparkccl.kernel.HostChannelKernel;
import org.sparkccl.kernel.PeerLiveness;
import org.sparkccl.memory.SharedFile;
import org.sparkccl.transport.p2p.CallBoard;
import org.sparkccl.transport.p2p.DirectFifoKernel;
import org.sparkccl.transport.p2p.EdgeKind;
import org.sparkccl.transport.p2p.FifoHandle;
import org.sparkccl.transport.p2p.SameHostInfo;

/**
 * The direct ring edges of one host-memory channel (NCCL's SHM transport for the ring): the channel
 * puts its receive FIFO in a file in {@code /dev/shm}, the previous rank maps it and its kernel
 * writes the slots there, and this rank's kernel reduces straight from them. Between processes of
 * one host a ring step is then one copy into shared memory and one read out of it, where UCX or a
 * loopback socket add the proxy's hand-over, a transport copy and an acknowledgement per fragment.
 *
 * <p>A file holds one {@link SharedFifoRegion}: the FIFO's control block, the call of each slot
 * ({@link SharedSlotCalls}: no proxy checks the calls on this edge) and the slots. The kernel owns
 * the mappings once made and unmaps them when it closes, after its thread stopped.
 *
 * <pre>{@code
 * // in TransportSelector, for each channel of a host-memory communicator on one host:
 * DirectFifoKernel k = new SharedRingFifos(hostKernel, stepSize, rank, nRanks, checks, myCalls);
 * }</pre>
 */
public final class SharedRingFifos implements DirectFifoKernel {
  private final HostChannelKernel kernel;
  private final int stepSize;
  private final int rank;
  private final int nRanks;
  private final boolean checks;
  private final LongFunction<CollectiveCall> myCalls;
  private SharedFile exported;
  private SharedFile imported;
  private CallBoard recvBoard;
  private CallBoard sendBoard;

  /**
   * @param kernel the channel's host kernel
   * @param stepSize the channel's slot size
   * @param checks whether the slots' calls are checked (key {@code checkCalls})
   * @param myCalls this rank's call of a number, for mismatch messages
   */
  public SharedRingFifos(
      HostChannelKernel kernel,
      int stepSize,
      int rank,
      int nRanks,
      boolean checks,
      LongFunction<CollectiveCall> myCalls) {
    this.kernel = kernel;
    this.stepSize = stepSize;
    this.rank = rank;
    this.nRanks = nRanks;
    this.checks = checks;
    this.myCalls = myCalls;
  }

  @Override
  public String deviceId() {
    return SameHostInfo.HOST_MEMORY;
  }

  /** Host memory reaches no GPU: every direct edge of this kernel is {@link EdgeKind#SHM}. */
  @Override
  public boolean reaches(String deviceId) {
    return false;
  }

  @Override
  public synchronized FifoHandle exportRecv(EdgeKind kind, String name) {
    if (kind != EdgeKind.SHM) {
      throw new IllegalArgumentException("a host-memory channel exports SHM FIFOs, not " + kind);
    }
    if (exported != null) {
      throw new IllegalStateException("this channel already exported its receive FIFO");
    }
    Path path = SharedFile.DIRECTORY.resolve(name);
    SharedFile f = SharedFile.create(path, fileBytes());
    ByteBuffer all = f.buffer();
    SharedFifoRegion.initialize(all);
    exported = f;
    recvBoard = CallBoard.over(board(all), true, (rank - 1 + nRanks) % nRanks);
    kernel.closeWith(f);
    kernel.recvDirect(
        SharedFifoRegion.fifo(all, stepSize), calls(all, (rank - 1 + nRanks) % nRanks));
    return new FifoHandle(
        EdgeKind.SHM,
        ProcessHandle.current().pid(),
        stepSize,
        path.toString(),
        SameHostInfo.HOST_MEMORY,
        new byte[0]);
  }

  @Override
  public synchronized void importSend(FifoHandle handle) {
    if (imported != null) {
      throw new IllegalStateException("this channel already opened the next rank's FIFO");
    }
    if (handle.kind() != EdgeKind.SHM || handle.stepSize() != stepSize) {
      throw new IllegalArgumentException(
          "the next rank's FIFO is "
              + handle.kind()
              + " with stepSize "
              + handle.stepSize()
              + "; expected SHM with this rank's stepSize "
              + stepSize);
    }
    SharedFile f = SharedFile.openPublished(Path.of(handle.file()), fileBytes());
    imported = f;
    kernel.closeWith(f);
    ByteBuffer all = f.buffer();
    sendBoard = CallBoard.over(board(all), false, (rank + 1) % nRanks);
    kernel.sendDirect(SharedFifoRegion.fifo(all, stepSize), calls(all, (rank + 1) % nRanks));
  }

  /** The FIFO's region, then the {@link CallBoard} of the edge's two ranks. */
  private long fileBytes() {
    return SharedFifoRegion.bytes(stepSize) + CallBoard.BYTES;
  }

  private ByteBuffer board(ByteBuffer file) {
    return file.slice((int) SharedFifoRegion.bytes(stepSize), CallBoard.BYTES);
  }

  @Override
  public synchronized CallBoard recvBoard() {
    return recvBoard;
  }

  @Override
  public synchronized CallBoard sendBoard() {
    return sendBoard;
  }

  private SharedSlotCalls calls(ByteBuffer region, int peer) {
    return new SharedSlotCalls(SharedFifoRegion.calls(region), rank, peer, checks, myCalls);
  }

  @Override
  public void watchPeers(long prevPid, long nextPid) {
    kernel.watchPeers(PeerLiveness.of(prevPid), PeerLiveness.of(nextPid));
  }

  /** Nothing to size: the host kernel is one thread. */
  @Override
  public void fitGrid(int ranksOnDevice, int channels) {}

  @Override
  public int blocks() {
    return 1;
  }

  @Override
  public synchronized void unlinkExported() {
    if (exported != null) {
      exported.unlink();
    }
  }

  @Override
  public synchronized void dropDirect() {
    kernel.sendDirect(null, null);
    kernel.recvDirect(null, null);
    recvBoard = null;
    sendBoard = null;
    if (exported != null) {
      exported.unlink();
      exported.close();
      exported = null;
    }
    if (imported != null) {
      imported.close();
      imported = null;
    }
  }
}
