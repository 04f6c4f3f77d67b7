package org.sparkccl.spark;

import java.util.HashMap;
import java.util.Map;
import org.apache.spark.SparkConf;
import org.sparkccl.config.CclConfig;
import org.sparkccl.config.Key;
import org.sparkccl.device.cuda.CudaBackend;
import scala.Tuple2;

/**
 * Maps {@code spark.ccl.<key>} onto the engine's keys ({@code spark.ccl.nChannels} is the engine's
 * {@code nChannels}); every key, default and meaning is in {@link CclConfig} and the README. {@link
 * #DEVICE} means more in Spark: the GPU comes from Spark's {@code gpu} resource ({@link
 * DeviceChoice}).
 */
public final class SparkConfKeys {
  public static final String PREFIX = "spark.ccl.";

  /** {@code auto} [default], {@code host} or {@code cuda}: see {@link DeviceChoice}. */
  public static final String DEVICE = PREFIX + "device";

  /** Spark's switch for encrypting its own connections; turns on the engine's {@code encrypt}. */
  static final String NETWORK_CRYPTO = "spark.network.crypto.enabled";

  /** Spark's cores per task: the cap {@code idle=auto} gets for each rank. */
  static final String TASK_CPUS = "spark.task.cpus";

  private SparkConfKeys() {}

  /** The engine configuration in {@code conf}; throws naming the key when a value is bad. */
  public static CclConfig engineConfig(SparkConf conf) {
    Map<String, String> values = new HashMap<>();
    for (Tuple2<String, String> kv : conf.getAllWithPrefix(PREFIX)) {
      values.put(kv._1(), kv._2());
    }
    // a task may keep spark.task.cpus cores busy, so idle=auto spins only within them
    values.putIfAbsent(Key.IDLE_CPUS_PER_RANK.key(), conf.get(TASK_CPUS, "1"));
    // an application that encrypts Spark's traffic wants its collectives encrypted too, unless
    // spark.ccl.encrypt says otherwise
    values.putIfAbsent(Key.ENCRYPT.key(), conf.get(NETWORK_CRYPTO, "false"));
    try {
      return CclConfig.fromMap(values);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(PREFIX + e.getMessage(), e);
    }
  }

  /**
   * The GPU backend of this build: CUDA through JCuda. A lambda rather than a method reference, so
   * an application that left JCuda's jars out fails (and falls back) only when a GPU is asked for,
   * not when the plugin starts.
   */
  static DeviceChoice.GpuBackend gpuBackend() {
    return ordinal -> CudaBackend.device(ordinal);
  }
}
