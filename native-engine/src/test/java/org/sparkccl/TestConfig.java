package org.sparkccl;

import org.sparkccl.config.CclConfig;
import org.sparkccl.config.Key;

/**
 * Configuration builders for tests, carrying the transport under test: the system properties {@code
 * sparkccl.transport} and {@code sparkccl.ib.qpsPerConnection}, which the surefire executions of
 * {@code native-engine/pom.xml} set, so the same tests run over each transport.
 */
public final class TestConfig {
  private TestConfig() {}

  /** {@link CclConfig#builder()} with the transport keys of this test run. */
  public static CclConfig.Builder builder() {
    CclConfig run = CclConfig.fromEnvironment();
    return CclConfig.builder().transport(run.transport()).qpsPerConnection(run.qpsPerConnection());
  }

  /** The transport keys of this test run as JVM options, for rank processes. */
  public static String[] jvmOptions() {
    CclConfig run = CclConfig.fromEnvironment();
    return new String[] {
      "-D" + Key.TRANSPORT.systemProperty() + "=" + run.transport(),
      "-D" + Key.IB_QPS_PER_CONNECTION.systemProperty() + "=" + run.qpsPerConnection()
    };
  }
}
