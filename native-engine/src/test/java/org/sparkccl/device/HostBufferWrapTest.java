package org.sparkccl.device;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sparkccl.memory.DirectMemory;

class HostBufferWrapTest {
  @TempDir Path tmp;

  @Test
  void aWrappedMappingIsReadAndWrittenInPlaceAndCloseLeavesItToItsOwner() throws IOException {
    float[] data = new float[256];
    SplittableRandom rnd = new SplittableRandom(5);
    for (int i = 0; i < data.length; i++) {
      data[i] = (float) rnd.nextDouble() + 0.5f;
    }
    try (FileChannel ch =
        FileChannel.open(
            tmp.resolve("seg"),
            StandardOpenOption.CREATE_NEW,
            StandardOpenOption.READ,
            StandardOpenOption.WRITE)) {
      MappedByteBuffer mapped = ch.map(FileChannel.MapMode.READ_WRITE, 0, 4L * data.length);
      mapped.order(ByteOrder.nativeOrder());
      long outstanding = DirectMemory.outstandingBytes();
      HostBuffer buf = HostBuffer.wrap(mapped);
      assertEquals(4L * data.length, buf.byteSize());
      buf.copyFromHost(data, 0);
      float[] seen = new float[data.length];
      mapped.asFloatBuffer().get(seen); // the owner's view sees what the buffer wrote
      assertArrayEquals(data, seen);
      buf.close();
      assertTrue(buf.isClosed());
      assertEquals(outstanding, DirectMemory.outstandingBytes(), "wrap neither counts nor frees");
      mapped.putFloat(0, 7f); // still the owner's memory after close
      assertEquals(7f, mapped.getFloat(0));
      DirectMemory.unmap(mapped);
    }
  }

  @Test
  void refusesHeapMemoryAndTheWrongByteOrder() {
    assertThrows(IllegalArgumentException.class, () -> HostBuffer.wrap(ByteBuffer.allocate(8)));
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> HostBuffer.wrap(ByteBuffer.allocateDirect(8).order(ByteOrder.BIG_ENDIAN)));
    assertTrue(e.getMessage().contains("machine's order"), e.getMessage());
  }
}
