package org.sparkccl.spark;

import java.util.Map;
import org.apache.logging.log4j.Logger;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkEnv;
import org.apache.spark.api.plugin.PluginContext;
import org.apache.spark.resource.ResourceInformation;
import org.sparkccl.config.CclConfig;
import org.sparkccl.config.Transport;
import org.sparkccl.device.Device;
import org.sparkccl.device.DeviceSpec;
import org.sparkccl.transport.ucx.UcxTransport;
import org.sparkccl.util.EngineLog;

/**
 * What the executor plugin boots once per executor JVM and every barrier task of it shares: the
 * engine configuration read from {@code spark.ccl.*} and the chosen device. Without the plugin (it
 * is optional for local tests) the first task boots it from the executor's conf instead.
 */
public final class ExecutorEngine {
  private static final Logger LOG = EngineLog.logger(ExecutorEngine.class);
  private static volatile ExecutorEngine current;

  private final CclConfig config;
  private final String deviceMode;
  private final DeviceChoice device;
  private final PluginContext plugin;

  private ExecutorEngine(
      CclConfig config, String deviceMode, DeviceChoice device, PluginContext plugin) {
    this.config = withDevice(config, device.device()); // the executor's, on its device
    this.deviceMode = deviceMode;
    this.device = device;
    this.plugin = plugin;
  }

  /**
   * Boots the engine of this executor from its conf and resources (Spark's {@code gpu} entry, when
   * present, names the GPU); logs one line saying which device and why.
   */
  static synchronized ExecutorEngine boot(
      SparkConf conf,
      Map<String, ResourceInformation> resources,
      String executorId,
      PluginContext plugin) {
    CclConfig config = SparkConfKeys.engineConfig(conf);
    String mode = conf.get(SparkConfKeys.DEVICE, DeviceChoice.AUTO);
    DeviceChoice choice =
        DeviceChoice.choose(mode, gpuAddresses(resources), SparkConfKeys.gpuBackend());
    current = new ExecutorEngine(config, mode, choice, plugin);
    LOG.info(
        "SparkCCL engine on executor {}: device {} ({}), transport {}, config {}",
        executorId,
        choice.device().name(),
        choice.reason(),
        startTransport(config),
        config);
    return current;
  }

  /**
   * Starts UCX once for the executor when the configuration may use it, so its one-time start-up is
   * not paid inside the first barrier task; says what the rings will use.
   */
  private static String startTransport(CclConfig config) {
    Transport transport = config.transport();
    if (transport != Transport.AUTO && transport != Transport.UCX) {
      return transport.toString();
    }
    if (config.encrypt()) {
      return transport + " (encrypt=true: rings use sockets, which encrypt; UCX does not)";
    }
    long t0 = System.nanoTime();
    String missing;
    try {
      missing = UcxTransport.warmUp();
    } catch (LinkageError e) {
      missing = "the Jucx classes are not on the classpath: " + e;
    }
    if (missing == null) {
      return transport + " (UCX started in " + (System.nanoTime() - t0) / 1_000_000 + " ms)";
    }
    return transport
        + " (UCX unavailable: "
        + missing
        + "; rings use sockets"
        + (transport == Transport.UCX ? ", or fail, since transport=ucx" : "")
        + ")";
  }

  /** The booted engine; boots it from {@code SparkEnv}'s conf when the plugin did not. */
  public static ExecutorEngine get() {
    ExecutorEngine e = current;
    if (e != null) {
      return e;
    }
    synchronized (ExecutorEngine.class) {
      if (current == null) {
        SparkEnv env = SparkEnv.get();
        boot(env.conf(), Map.of(), env.executorId(), null);
      }
      return current;
    }
  }

  /** Forgets the booted engine when the executor shuts down. */
  static synchronized void shutdown() {
    current = null;
  }

  /** The plugin's channel to the driver, or {@code null} when the plugin is not enabled. */
  PluginContext pluginContext() {
    return plugin;
  }

  /** The executor's engine configuration, with its device. */
  public CclConfig config() {
    return config;
  }

  /** The configuration for one task: the executor's, on the task's device. */
  public CclConfig configFor(Map<String, ResourceInformation> taskResources) {
    Device task = deviceFor(taskResources);
    return task == device.device() ? config : withDevice(config, task);
  }

  private static CclConfig withDevice(CclConfig config, Device device) {
    return config.toBuilder().device(DeviceSpec.parse(device.name())).build();
  }

  /** The executor's device: its {@code gpu} resource when usable, else host memory. */
  public Device device() {
    return device.device();
  }

  /**
   * The device for one task: the task's own {@code gpu} resource address when Spark assigned one
   * (several GPU tasks per executor), else the executor's.
   */
  public Device deviceFor(Map<String, ResourceInformation> taskResources) {
    String[] addresses = gpuAddresses(taskResources);
    if (addresses.length == 0) {
      return device.device();
    }
    return DeviceChoice.choose(deviceMode, addresses, SparkConfKeys.gpuBackend()).device();
  }

  private static String[] gpuAddresses(Map<String, ResourceInformation> resources) {
    ResourceInformation gpu = resources == null ? null : resources.get("gpu");
    return gpu == null ? new String[0] : gpu.addresses();
  }
}
