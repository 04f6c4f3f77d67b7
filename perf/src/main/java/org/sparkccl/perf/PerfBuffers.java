package org.sparkccl.perf;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.sparkccl.DataType;
import org.sparkccl.device.Device;
import org.sparkccl.device.DeviceBuffer;
import org.sparkccl.device.HostBuffer;
import org.sparkccl.device.cuda.CudaDevice;
import org.sparkccl.device.cuda.MappedMemory;

/**
 * A rank's send and receive buffers on the measured device, with host memory to fill and check
 * them: the buffers themselves on the host, pinned staging memory next to a GPU's buffers.
 */
final class PerfBuffers implements AutoCloseable {
  private final DeviceBuffer send;
  private final DeviceBuffer recv;
  private final ByteBuffer sendHost;
  private final ByteBuffer recvHost;
  private final MappedMemory[] staging;

  private PerfBuffers(
      DeviceBuffer send,
      DeviceBuffer recv,
      ByteBuffer sendHost,
      ByteBuffer recvHost,
      MappedMemory... staging) {
    this.send = send;
    this.recv = recv;
    this.sendHost = sendHost;
    this.recvHost = recvHost;
    this.staging = staging;
  }

  static PerfBuffers allocate(Device device, long bytes) {
    DeviceBuffer send = device.allocate(bytes);
    DeviceBuffer recv = device.allocate(bytes);
    if (send instanceof HostBuffer s && recv instanceof HostBuffer r) {
      return new PerfBuffers(send, recv, s.memory(), r.memory());
    }
    CudaDevice gpu = (CudaDevice) device;
    MappedMemory a = gpu.allocateMapped(bytes);
    MappedMemory b = gpu.allocateMapped(bytes);
    return new PerfBuffers(send, recv, a.buffer(), b.buffer(), a, b);
  }

  DeviceBuffer send() {
    return send;
  }

  DeviceBuffer recv() {
    return recv;
  }

  /** Fills the first {@code count} elements of the send buffer with {@link TestData}. */
  void fillSend(long count, DataType type, long seed, int rank) {
    TestData.fill(sendHost, count, type, seed, rank);
    if (staging.length > 0) {
      send.copyFromHost(
          sendHost.slice(0, (int) (count * type.size())).order(ByteOrder.nativeOrder()), 0);
    }
  }

  /** The receive buffer's first {@code bytes} bytes, readable on the host. */
  ByteBuffer recvOnHost(long bytes) {
    if (staging.length > 0) {
      recv.copyToHost(0, recvHost.slice(0, (int) bytes).order(ByteOrder.nativeOrder()));
    }
    return recvHost;
  }

  @Override
  public void close() {
    send.close();
    recv.close();
    for (MappedMemory m : staging) {
      m.close();
    }
  }
}
