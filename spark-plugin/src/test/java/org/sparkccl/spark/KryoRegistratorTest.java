package org.sparkccl.spark;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.esotericsoftware.kryo.KryoException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.SplittableRandom;
import org.apache.spark.SparkConf;
import org.apache.spark.serializer.KryoSerializer;
import org.apache.spark.serializer.SerializerInstance;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.sparkccl.device.DeviceBuffer;
import org.sparkccl.device.HostBuffer;
import org.sparkccl.device.HostDevice;
import org.sparkccl.memory.DirectMemory;
import scala.reflect.ClassTag$;

@DisplayName("Kryo moves device buffers")
class KryoRegistratorTest {
  @Test
  void aBufferComesBackWithTheSameBytesThroughSparksKryoSerializer() {
    SparkConf conf =
        new SparkConf()
            .set("spark.kryo.registrator", SparkCCLKryoRegistrator.class.getName())
            .set("spark.kryo.registrationRequired", "true");
    SerializerInstance kryo = new KryoSerializer(conf).newInstance();
    for (int size : new int[] {0, 1, 4099, (1 << 20) + 3}) {
      byte[] data = new byte[size];
      new SplittableRandom(size).nextBytes(data);
      try (HostBuffer buf = HostDevice.INSTANCE.allocate(size)) {
        buf.copyFromHost(ByteBuffer.wrap(data).order(ByteOrder.nativeOrder()), 0);
        ByteBuffer bytes = kryo.serialize(buf, ClassTag$.MODULE$.apply(HostBuffer.class));
        try (DeviceBuffer back =
            kryo.deserialize(bytes, ClassTag$.MODULE$.apply(HostBuffer.class))) {
          assertEquals(size, back.byteSize(), "size " + size);
          byte[] got = new byte[size];
          back.copyToHost(0, ByteBuffer.wrap(got).order(ByteOrder.nativeOrder()));
          assertArrayEquals(data, got, "contents, size " + size);
        }
      }
    }
  }

  @Test
  void malformedInputIsRefusedBeforeAllocatingAndTruncatedInputFreesItsBuffer() {
    SparkConf conf =
        new SparkConf()
            .set("spark.kryo.registrator", SparkCCLKryoRegistrator.class.getName())
            .set("spark.kryo.registrationRequired", "true");
    SerializerInstance kryo = new KryoSerializer(conf).newInstance();
    byte[] data = new byte[4099];
    new SplittableRandom(5).nextBytes(data);
    ByteBuffer good;
    try (HostBuffer buf = HostDevice.INSTANCE.allocate(data.length)) {
      buf.copyFromHost(ByteBuffer.wrap(data).order(ByteOrder.nativeOrder()), 0);
      good = kryo.serialize(buf, ClassTag$.MODULE$.apply(HostBuffer.class));
    }
    byte[] bytes = new byte[good.remaining()];
    good.get(bytes);
    // the length is the 8 bytes before the data, which end the message
    int lengthAt = bytes.length - data.length - 8;
    // in whichever byte order this Kryo output writes longs
    ByteOrder order =
        ByteBuffer.wrap(bytes).getLong(lengthAt) == data.length
            ? ByteOrder.BIG_ENDIAN
            : ByteOrder.LITTLE_ENDIAN;
    assertEquals(data.length, ByteBuffer.wrap(bytes).order(order).getLong(lengthAt));
    long before = DirectMemory.outstandingBytes();
    for (long bad : new long[] {-1, Long.MIN_VALUE, data.length + 1L, 1L << 40, Long.MAX_VALUE}) {
      byte[] forged = bytes.clone();
      ByteBuffer.wrap(forged).order(order).putLong(lengthAt, bad);
      KryoException e =
          assertThrows(
              KryoException.class,
              () ->
                  kryo.deserialize(
                      ByteBuffer.wrap(forged), ClassTag$.MODULE$.apply(HostBuffer.class)),
              "length " + bad);
      assertTrue(e.getMessage().contains("a serialized SparkCCL buffer of " + bad), e.getMessage());
    }
    SplittableRandom rnd = new SplittableRandom(9);
    for (int i = 0; i < 200; i++) {
      // cut anywhere inside the data: read through a stream, so the length cannot be checked first
      byte[] cut = java.util.Arrays.copyOf(bytes, lengthAt + 8 + rnd.nextInt(data.length));
      // Spark's stream turns Kryo's "buffer underflow" into an EOFException
      Throwable e =
          assertThrows(
              Throwable.class,
              () ->
                  kryo.deserializeStream(new java.io.ByteArrayInputStream(cut))
                      .readObject(ClassTag$.MODULE$.apply(HostBuffer.class)));
      assertTrue(
          e instanceof KryoException || e instanceof java.io.EOFException, "cut at " + cut.length);
    }
    assertEquals(before, DirectMemory.outstandingBytes(), "every partly read buffer is freed");
  }
}
