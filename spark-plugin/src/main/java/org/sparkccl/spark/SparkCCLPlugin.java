package org.sparkccl.spark;

import com.codahale.metrics.Gauge;
import com.codahale.metrics.MetricRegistry;
import java.util.List;
import java.util.Map;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkContext;
import org.apache.spark.api.plugin.DriverPlugin;
import org.apache.spark.api.plugin.ExecutorPlugin;
import org.apache.spark.api.plugin.PluginContext;
import org.apache.spark.api.plugin.SparkPlugin;
import org.sparkccl.EngineStats;
import org.sparkccl.config.CclConfig;

/**
 * The SparkCCL Spark plugin: {@code --conf spark.plugins=org.sparkccl.spark.SparkCCLPlugin}.
 *
 * <p>Driver side: fails fast where barrier mode cannot work (dynamic allocation) and checks the
 * {@code spark.ccl.*} keys. Executor side: checks the keys again with the executor's conf, logs
 * the engine configuration once and publishes the engine's counters in Spark's metrics system.
 * (Device selection and the UCX context come with the rest of the plugin issue.)
 */
public final class SparkCCLPlugin implements SparkPlugin {
  private static final Logger LOG = LogManager.getLogger(SparkCCLPlugin.class);

  @Override
  public DriverPlugin driverPlugin() {
    return new DriverPlugin() {
      @Override
      public Map<String, String> init(SparkContext sc, PluginContext ctx) {
        checkDriverConf(sc.getConf());
        return Map.of();
      }
    };
  }

  @Override
  public ExecutorPlugin executorPlugin() {
    return new ExecutorPlugin() {
      @Override
      public void init(PluginContext ctx, Map<String, String> extraConf) {
        CclConfig config = SparkConfKeys.engineConfig(ctx.conf());
        LOG.info("SparkCCL engine on executor {} ({}): {}", ctx.executorID(), ctx.hostname(), config);
        registerMetrics(ctx.metricRegistry());
      }
    };
  }

  /**
   * Publishes the engine's counters as gauges in Spark's metrics system: collectives completed
   * and failed, bytes, the last bandwidth and the mean latency of each kind seen so far.
   */
  static void registerMetrics(MetricRegistry registry) {
    registry.register("collectivesCompleted", (Gauge<Long>) EngineStats::collectivesCompleted);
    registry.register("collectivesFailed", (Gauge<Long>) EngineStats::collectivesFailed);
    registry.register("bytes", (Gauge<Long>) EngineStats::bytes);
    registry.register("lastAlgBwGBps", (Gauge<Double>) EngineStats::lastAlgBwGBps);
    for (String kind : List.of("allReduce", "broadcast", "reduce", "allGather", "reduceScatter",
        "sendRecv")) {
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
    SparkConfKeys.engineConfig(conf);
  }
}
