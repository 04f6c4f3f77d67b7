package org.sparkccl.spark;

import com.codahale.metrics.Gauge;
import com.codahale.metrics.MetricRegistry;
import java.util.List;
import java.util.Map;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkContext;
import org.apache.spark.api.plugin.DriverPlugin;
import org.apache.spark.api.plugin.ExecutorPlugin;
import org.apache.spark.api.plugin.PluginContext;
import org.apache.spark.api.plugin.SparkPlugin;
import org.sparkccl.comm.EngineStats;
import org.sparkccl.config.Transport;
import org.sparkccl.spark.worker.WorkerChannelServer;

/**
 * The SparkCCL Spark plugin: {@code --conf spark.plugins=org.sparkccl.spark.SparkCCLPlugin}.
 *
 * <p>Driver side: fails fast where barrier mode cannot work (dynamic allocation, a fractional GPU
 * per task while the GPU backend is asked for) and checks the {@code spark.ccl.*} keys; the
 * task-slot check runs when a collective is submitted ({@link SparkCCL}), since only then is the
 * partition count known. The driver side also keeps the barrier tasks' rendezvous ({@link
 * Rendezvous}), which makes forming a communicator take milliseconds instead of Spark's one-second
 * barrier polling. Executor side: boots the engine once per executor ({@link ExecutorEngine}:
 * configuration and device, chosen from the executor's {@code gpu} resource) and publishes the
 * engine's counters in Spark's metrics system, and serves the executor's Python workers their
 * collectives ({@link WorkerChannelServer}, reached by {@code sparkccl.communicator()}).
 */
public final class SparkCCLPlugin implements SparkPlugin {
  @Override
  public DriverPlugin driverPlugin() {
    Rendezvous rendezvous = new Rendezvous();
    return new DriverPlugin() {
      @Override
      public Map<String, String> init(SparkContext sc, PluginContext ctx) {
        checkDriverConf(sc.getConf());
        return Map.of();
      }

      @Override
      public Object receive(Object message) {
        if (message instanceof byte[] post) {
          return rendezvous.handle(Rendezvous.Post.decode(post)).encode();
        }
        throw new IllegalArgumentException("SparkCCL driver plugin: unknown message " + message);
      }
    };
  }

  @Override
  public ExecutorPlugin executorPlugin() {
    return new ExecutorPlugin() {
      private WorkerChannelServer pythonChannel;

      @Override
      public void init(PluginContext ctx, Map<String, String> extraConf) {
        ExecutorEngine engine =
            ExecutorEngine.boot(ctx.conf(), ctx.resources(), ctx.executorID(), ctx);
        registerMetrics(ctx.metricRegistry());
        // spark.ccl.python.channel=false: no socket and no thread for Python workers
        if (engine.config().pythonChannel()) {
          pythonChannel = WorkerChannelServer.startForExecutor(PythonTasks.INSTANCE);
        }
      }

      @Override
      public void onTaskStart() {
        PythonTasks.INSTANCE.taskStarted();
      }

      @Override
      public void shutdown() {
        if (pythonChannel != null) {
          pythonChannel.close();
        }
        ExecutorEngine.shutdown();
      }
    };
  }

  /**
   * Publishes the engine's counters as gauges in Spark's metrics system: collectives completed and
   * failed, bytes, the last algorithm and bus bandwidth and the mean latency of each kind seen so
   * far.
   */
  static void registerMetrics(MetricRegistry registry) {
    registry.register("collectivesCompleted", (Gauge<Long>) EngineStats::collectivesCompleted);
    registry.register("collectivesFailed", (Gauge<Long>) EngineStats::collectivesFailed);
    registry.register("bytes", (Gauge<Long>) EngineStats::bytes);
    registry.register("lastAlgBwGBps", (Gauge<Double>) EngineStats::lastAlgBwGBps);
    registry.register("lastBusBwGBps", (Gauge<Double>) EngineStats::lastBusBwGBps);
    for (String kind :
        List.of("allReduce", "broadcast", "reduce", "allGather", "reduceScatter", "sendRecv")) {
      registry.register(
          "meanLatencyUs." + kind,
          (Gauge<Double>) () -> EngineStats.meanLatencyUs().getOrDefault(kind, 0.0));
    }
  }

  /** Throws with a clear message where a barrier-mode job would hang or fail later. */
  static void checkDriverConf(SparkConf conf) {
    if (conf.getBoolean("spark.dynamicAllocation.enabled", false)) {
      throw new IllegalStateException(
          "SparkCCL needs barrier mode, which does not work with dynamic allocation:"
              + " set spark.dynamicAllocation.enabled=false");
    }
    String master = conf.get("spark.master", "");
    boolean oneJvm = master.equals("local") || master.startsWith("local[");
    if (SparkConfKeys.engineConfig(conf).transport() == Transport.LOCAL && !oneJvm) {
      throw new IllegalStateException(
          "spark.ccl.transport=local joins ranks that are threads of one JVM, but under master "
              + (master.isEmpty() ? "(unset)" : master)
              + " barrier tasks meet across executors: use auto (which takes the in-memory ring"
              + " wherever every task runs in one JVM, as in local mode), ucx or socket");
    }
    String mode = DeviceChoice.mode(conf.get(SparkConfKeys.DEVICE, DeviceChoice.AUTO));
    String taskGpus = conf.get("spark.task.resource.gpu.amount", null);
    if (mode.equals(DeviceChoice.CUDA) && taskGpus != null) {
      double amount = Double.parseDouble(taskGpus.trim());
      if (amount != Math.rint(amount)) {
        throw new IllegalStateException(
            "spark.task.resource.gpu.amount="
                + taskGpus
                + " shares a GPU between tasks, but "
                + SparkConfKeys.DEVICE
                + "=cuda gives each barrier task (rank) a GPU of its own:"
                + " set spark.task.resource.gpu.amount=1");
      }
    }
  }
}
