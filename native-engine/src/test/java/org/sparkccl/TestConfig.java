package org.sparkccl;

import org.sparkccl.config.CclConfig;
import org.sparkccl.config.Key;

/**
 * Configuration builders for tests, carrying the transport under test: the system properties {@code
 * sparkccl.transport}, {@code sparkccl.ib.qpsPerConnection} and {@code sparkccl.shm}, which the
 * surefire executions of {@code native-engine/pom.xml} set, so the same tests run over each
 * transport (the socket run keeps point-to-point messages on sockets).
 */
public final class TestConfig {
  private TestConfig() {}

  /** {@link CclConfig#builder()} with the transport keys of this test run. */
  public static CclConfig.Builder builder() {
    CclConfig run = CclConfig.fromEnvironment();
    return CclConfig.builder()
        .transport(run.transport())
        .qpsPerConnection(run.qpsPerConnection())
        .shm(run.shm());
  }

  /** The transport keys of this test run as JVM options, for rank processes. */
  public static String[] jvmOptions() {
    CclConfig run = CclConfig.fromEnvironment();
    return new String[] {
      "-D" + Key.TRANSPORT.systemProperty() + "=" + run.transport(),
      "-D" + Key.IB_QPS_PER_CONNECTION.systemProperty() + "=" + run.qpsPerConnection(),
      "-D" + Key.SHM.systemProperty() + "=" + (run.shm() ? "auto" : "off")
    };
  }
}
