package org.sparkccl.spark;

import java.nio.charset.StandardCharsets;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkEnv;
import org.apache.spark.network.sasl.SecretKeyHolder;

/**
 * The application's secret when {@code spark.authenticate=true}, which every executor of the
 * application holds and Spark never sends in clear; communicators bind their secret to it (see
 * {@code Bootstrap.sharedSecret}), so only the application's own executors can join.
 *
 * <p>Spark 4.2.0 has no plugin API for it. Its {@code SecurityManager} resolves every source
 * ({@code spark.authenticate.secret}, the variable a cluster manager passes to executors, the
 * secret files, the secret local mode generates), so the secret is read from there, through the
 * public {@link SecretKeyHolder} interface that Spark also hands its external shuffle service.
 */
final class AppSecret {
  static final String AUTHENTICATE = "spark.authenticate";

  private AppSecret() {}

  /**
   * The secret's bytes, or {@code null} when {@code spark.authenticate} is off.
   *
   * @throws IllegalStateException when authentication is on and Spark has no secret to give
   */
  static byte[] current() {
    SparkEnv env = SparkEnv.get();
    if (env == null) {
      return null;
    }
    SparkConf conf = env.conf();
    if (!conf.getBoolean(AUTHENTICATE, false)) {
      return null;
    }
    SecretKeyHolder holder = env.securityManager();
    String secret = holder.getSecretKey(conf.getAppId());
    if (secret == null || secret.isEmpty()) {
      throw new IllegalStateException(
          AUTHENTICATE
              + "=true but Spark has no application secret here; expected Spark to provide one"
              + " (spark.authenticate.secret, or the cluster manager's)");
    }
    return secret.getBytes(StandardCharsets.UTF_8);
  }
}
