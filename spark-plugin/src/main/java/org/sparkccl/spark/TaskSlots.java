package org.sparkccl.spark;

import java.util.Locale;
import java.util.function.IntFunction;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkContext;
import scala.Tuple2;

/**
 * How many tasks an application can run at once, read from its master and configuration, so that a
 * barrier stage that cannot get a slot for every task fails at once with what to change, instead of
 * in Spark's own check, which retries every 15 s for minutes first.
 *
 * <pre>{@code
 * TaskSlots.check(sc.getConf(), rdd.getNumPartitions());   // throws when they cannot all run
 * TaskSlots slots = TaskSlots.of(conf);                    // null where the master does not tell
 * }</pre>
 *
 * <p>Local masters ({@code local}, {@code local[N]}, {@code local[*]}, {@code local[N,F]}, {@code
 * local[*,F]}) and {@code local-cluster[E,C,M]} always tell. Other masters tell where the executors
 * are fixed: YARN and Kubernetes ({@code spark.executor.instances} executors of {@code
 * spark.executor.cores}, 2 of 1 core unless set), standalone ({@code spark.cores.max}), any master
 * with both keys set. Dynamic allocation is refused, as Spark refuses it for barrier stages.
 *
 * @param count the tasks that can run at once
 * @param source how the count follows from the configuration, for messages
 * @param remedy what to change for a number of tasks, for messages
 */
public record TaskSlots(int count, String source, IntFunction<String> remedy) {
  // Spark's own forms (SparkMasterRegex), spaces included.
  private static final Pattern LOCAL_N = Pattern.compile("local\\[\\s*([0-9]+|\\*)\\s*\\]");
  private static final Pattern LOCAL_N_FAILURES =
      Pattern.compile("local\\[\\s*([0-9]+|\\*)\\s*,\\s*([0-9]+)\\s*\\]");
  private static final Pattern LOCAL_CLUSTER =
      Pattern.compile("local-cluster\\[\\s*([0-9]+)\\s*,\\s*([0-9]+)\\s*,\\s*([0-9]+)\\s*\\]");

  /**
   * Throws, saying how many slots there are and what to change, when {@code tasks} barrier tasks
   * cannot all run at once in the application of {@code conf}; returns where they can or where the
   * master does not tell.
   *
   * @throws IllegalArgumentException when they cannot, or when dynamic allocation is on
   */
  public static void check(SparkConf conf, int tasks) {
    TaskSlots slots = of(conf);
    if (slots != null && tasks > slots.count) {
      throw new IllegalArgumentException(
          "SparkCCL: the barrier stage needs "
              + tasks
              + " task slots at once but master "
              + conf.get("spark.master", "")
              + " offers "
              + slots.count
              + " ("
              + slots.source
              + "); use at most "
              + slots.count
              + " partitions or tasks, or "
              + slots.remedy.apply(tasks));
    }
  }

  /** {@link #check(SparkConf, int)} for a running application; the form PySpark calls. */
  public static void check(SparkContext sc, int tasks) {
    check(sc.getConf(), tasks);
  }

  /**
   * The slots of the application of {@code conf}, or {@code null} where the master does not tell.
   */
  public static TaskSlots of(SparkConf conf) {
    return of(conf, Runtime.getRuntime().availableProcessors());
  }

  /**
   * {@link #of(SparkConf)} on a machine of {@code localCores} cores (what {@code local[*]} takes).
   *
   * @throws IllegalArgumentException when dynamic allocation is on for a cluster master
   */
  static TaskSlots of(SparkConf conf, int localCores) {
    String master = conf.get("spark.master", "").trim();
    int taskCpus = conf.getInt("spark.task.cpus", 1);
    String perTask = "spark.task.cpus=" + taskCpus;
    if (master.equals("local")) {
      return new TaskSlots(1 / taskCpus, "local: 1 core, " + perTask, localRemedy(taskCpus));
    }
    Matcher local = LOCAL_N.matcher(master);
    if (!local.matches()) {
      local = LOCAL_N_FAILURES.matcher(master);
    }
    if (local.matches()) {
      boolean all = local.group(1).equals("*");
      int cores = all ? localCores : Integer.parseInt(local.group(1));
      return new TaskSlots(
          cores / taskCpus,
          (all ? "local[*]: the " + cores + " cores of this machine" : cores + " cores")
              + ", "
              + perTask,
          localRemedy(taskCpus));
    }
    Matcher cluster = LOCAL_CLUSTER.matcher(master);
    if (cluster.matches()) {
      int executors = Integer.parseInt(cluster.group(1));
      int cores = Integer.parseInt(cluster.group(2));
      String memory = cluster.group(3);
      return ofExecutors(
          conf,
          executors,
          cores,
          executors + " executors x " + cores + " cores",
          tasks ->
              "use more executors or cores, e.g. local-cluster["
                  + executors
                  + ","
                  + Math.max(cores, (tasks + executors - 1) / executors * taskCpus)
                  + ","
                  + memory
                  + "]");
    }
    if (master.startsWith("local")) {
      return null; // a form Spark itself rejects when the context starts
    }
    if (dynamicAllocation(conf)) {
      throw new IllegalArgumentException(
          "SparkCCL: a barrier stage needs a fixed set of executors, but master "
              + master
              + " runs with dynamic allocation on; set spark.dynamicAllocation.enabled=false and"
              + " spark.executor.instances");
    }
    String lower = master.toLowerCase(Locale.ROOT);
    boolean sized = lower.equals("yarn") || lower.startsWith("k8s://");
    if (sized
        || (conf.contains("spark.executor.instances") && conf.contains("spark.executor.cores"))) {
      // YARN's and Kubernetes's defaults: 2 executors of 1 core
      int executors = conf.getInt("spark.executor.instances", 2);
      int cores = conf.getInt("spark.executor.cores", 1);
      return ofExecutors(
          conf,
          executors,
          cores,
          "spark.executor.instances="
              + executors
              + " x spark.executor.cores="
              + cores
              + (sized ? " (unset keys take Spark's defaults, 2 and 1)" : ""),
          tasks -> "raise spark.executor.instances (--num-executors) or spark.executor.cores");
    }
    if (lower.startsWith("spark://") && conf.contains("spark.cores.max")) {
      int max = conf.getInt("spark.cores.max", 0);
      int cores = conf.getInt("spark.executor.cores", max);
      return ofExecutors(
          conf,
          cores > 0 ? max / cores : 0,
          cores,
          "spark.cores.max=" + max + (cores == max ? "" : " in executors of " + cores + " cores"),
          tasks -> "raise spark.cores.max (--total-executor-cores)");
    }
    return null;
  }

  private static IntFunction<String> localRemedy(int taskCpus) {
    return tasks ->
        "use a master with "
            + tasks * taskCpus
            + " cores (tasks x spark.task.cpus), e.g. local["
            + tasks * taskCpus
            + "]";
  }

  private static TaskSlots ofExecutors(
      SparkConf conf, int executors, int cores, String source, IntFunction<String> remedy) {
    int taskCpus = conf.getInt("spark.task.cpus", 1);
    int perExecutor = cores / taskCpus;
    StringBuilder why = new StringBuilder(source).append(", spark.task.cpus=").append(taskCpus);
    // A task that asks for a resource (a GPU) runs only where one is free.
    for (Tuple2<String, String> e : conf.getAllWithPrefix("spark.task.resource.")) {
      if (!e._1().endsWith(".amount")) {
        continue;
      }
      String name = e._1().substring(0, e._1().length() - ".amount".length());
      String executorAmount = conf.get("spark.executor.resource." + name + ".amount", null);
      double perTask = Double.parseDouble(e._2());
      if (executorAmount != null && perTask > 0) {
        int byResource = (int) Math.floor(Double.parseDouble(executorAmount) / perTask + 1e-9);
        if (byResource < perExecutor) {
          perExecutor = byResource;
          why.append(", ").append(byResource).append(" per executor by ").append(name);
        }
      }
    }
    return new TaskSlots(executors * perExecutor, why.toString(), remedy);
  }

  private static boolean dynamicAllocation(SparkConf conf) {
    return conf.getBoolean("spark.dynamicAllocation.enabled", false);
  }
}
