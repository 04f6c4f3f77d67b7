package org.sparkccl.spark;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

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
}
