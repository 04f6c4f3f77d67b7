package org.sparkccl.device.cuda;

import static jcuda.driver.JCudaDriver.cuIpcCloseMemHandle;
import static jcuda.driver.JCudaDriver.cuIpcGetMemHandle;
import static jcuda.driver.JCudaDriver.cuIpcOpenMemHandle;
import static jcuda.driver.JCudaDriver.cuMemAlloc;
import static jcuda.driver.JCudaDriver.cuMemFree;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.concurrent.ConcurrentHashMap;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUipcMemHandle;
import jcuda.driver.CUipcMem_flags;
import org.sparkccl.fifo.FifoLayout;
import org.sparkccl.memory.SharedFile;
import org.sparkccl.transport.p2p.EdgeKind;
import org.sparkccl.transport.p2p.FifoHandle;

/**
 * The FIFOs of one channel's direct edges (NCCL's P2P and SHM transports): the receive FIFO this
 * rank exports to the previous rank and the next rank's receive FIFO it writes into. The control
 * block (head, tail, sizes, abort) always lies in a shared-memory file, so both kernels and both
 * Java sides see it; the slots lie in the receiver's GPU ({@link EdgeKind#PEER}) or in the file too
 * ({@link EdgeKind#SHM}).
 */
final class DirectFifos implements AutoCloseable {
  /** Slots exported by ranks of this process, by file name: threads cannot open their own IPC. */
  private static final ConcurrentHashMap<String, CUdeviceptr> IN_PROCESS =
      new ConcurrentHashMap<>();

  private static final VarHandle INTS =
      MethodHandles.byteBufferViewVarHandle(int[].class, ByteOrder.nativeOrder());

  /** Device pointers to one FIFO's control block and slots, and the Java view of the control. */
  record Side(CUdeviceptr control, CUdeviceptr data, long dataAddress, ByteBuffer controlView) {}

  private final CudaDevice device;
  private final int stepSize;
  private SharedHostMemory exportedFile;
  private CUdeviceptr exportedSlots;
  private String exportedName;
  private SharedHostMemory importedFile;
  private CUdeviceptr importedSlots;

  DirectFifos(CudaDevice device, int stepSize) {
    this.device = device;
    this.stepSize = stepSize;
  }

  private long fileBytes(EdgeKind kind) {
    return FifoLayout.CONTROL_BYTES
        + (kind == EdgeKind.SHM ? (long) FifoLayout.STEPS * stepSize : 0L);
  }

  /** Allocates the receive FIFO; returns its handle and the side the kernel reads. */
  synchronized FifoHandle exportRecv(EdgeKind kind, String name, Side[] side) {
    if (exportedFile != null) {
      throw new IllegalStateException("this channel already exported its receive FIFO");
    }
    Path path = SharedFile.DIRECTORY.resolve(name);
    exportedFile = SharedHostMemory.create(device, path, fileBytes(kind));
    ByteBuffer control = exportedFile.buffer().slice(0, FifoLayout.CONTROL_BYTES);
    control.order(ByteOrder.nativeOrder());
    for (int i = 0; i < FifoLayout.STEPS; i++) {
      INTS.setRelease(control, FifoLayout.sizeOffset(i), FifoLayout.EMPTY);
    }
    byte[] ipc = new byte[0];
    CUdeviceptr data;
    if (kind == EdgeKind.PEER) {
      device.makeCurrent();
      exportedSlots = new CUdeviceptr();
      cuMemAlloc(exportedSlots, (long) FifoLayout.STEPS * stepSize);
      CUipcMemHandle h = new CUipcMemHandle();
      cuIpcGetMemHandle(h, exportedSlots);
      ipc = IpcHandles.bytes(h);
      exportedName = path.toString();
      IN_PROCESS.put(exportedName, exportedSlots);
      data = exportedSlots;
    } else {
      data = exportedFile.devicePointer(FifoLayout.CONTROL_BYTES);
    }
    long address =
        kind == EdgeKind.PEER
            ? MappedMemory.addressOf(exportedSlots)
            : exportedFile.deviceAddress(FifoLayout.CONTROL_BYTES);
    side[0] = new Side(exportedFile.devicePointer(0), data, address, control);
    return new FifoHandle(
        kind, ProcessHandle.current().pid(), stepSize, path.toString(), device.pciBusId(), ipc);
  }

  /** Opens the next rank's receive FIFO; returns the side the kernel writes. */
  synchronized Side importSend(FifoHandle h) {
    if (importedFile != null) {
      throw new IllegalStateException("this channel already opened the next rank's FIFO");
    }
    if (h.stepSize() != stepSize) {
      throw new IllegalArgumentException(
          "the next rank's FIFO has stepSize " + h.stepSize() + "; this rank's is " + stepSize);
    }
    importedFile = SharedHostMemory.open(device, Path.of(h.file()), fileBytes(h.kind()));
    ByteBuffer control = importedFile.buffer().slice(0, FifoLayout.CONTROL_BYTES);
    control.order(ByteOrder.nativeOrder());
    CUdeviceptr data;
    if (h.kind() == EdgeKind.PEER) {
      if (h.ownerPid() == ProcessHandle.current().pid()) {
        data = IN_PROCESS.get(h.file());
        if (data == null) {
          throw new IllegalStateException("no slots exported in this process as " + h.file());
        }
        device.enablePeerAccess(CudaBackend.deviceByBusId(h.deviceId()));
      } else {
        device.makeCurrent();
        importedSlots = new CUdeviceptr();
        cuIpcOpenMemHandle(
            importedSlots,
            IpcHandles.of(h.ipcHandle()),
            CUipcMem_flags.CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS);
        data = importedSlots;
      }
    } else {
      data = importedFile.devicePointer(FifoLayout.CONTROL_BYTES);
    }
    long address =
        h.kind() == EdgeKind.PEER
            ? MappedMemory.addressOf(data)
            : importedFile.deviceAddress(FifoLayout.CONTROL_BYTES);
    return new Side(importedFile.devicePointer(0), data, address, control);
  }

  /** Removes the exported file's name (the sender has mapped it). */
  synchronized void unlinkExported() {
    if (exportedFile != null) {
      exportedFile.unlink();
    }
  }

  /** Frees and unmaps everything; the kernels on both sides must have stopped. */
  @Override
  public synchronized void close() {
    device.makeCurrent();
    if (importedSlots != null) {
      cuIpcCloseMemHandle(importedSlots);
      importedSlots = null;
    }
    if (importedFile != null) {
      importedFile.close();
      importedFile = null;
    }
    if (exportedSlots != null) {
      IN_PROCESS.remove(exportedName);
      cuMemFree(exportedSlots);
      exportedSlots = null;
    }
    if (exportedFile != null) {
      exportedFile.unlink();
      exportedFile.close();
      exportedFile = null;
    }
  }
}
