package org.sparkccl.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.apache.spark.SparkConf;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** The engine configuration the plugin reads from a Spark conf. */
class SparkConfKeysTest {
  @Test
  @DisplayName("idle=auto is capped at spark.task.cpus per rank unless spark.ccl sets the cap")
  void taskCpusCapIdleAuto() {
    assertEquals(1, SparkConfKeys.engineConfig(new SparkConf(false)).idleCpusPerRank());
    SparkConf three = new SparkConf(false).set("spark.task.cpus", "3");
    assertEquals(3, SparkConfKeys.engineConfig(three).idleCpusPerRank());
    SparkConf explicit = three.clone().set("spark.ccl.idle.cpusPerRank", "8");
    assertEquals(8, SparkConfKeys.engineConfig(explicit).idleCpusPerRank());
  }

  @Test
  @DisplayName("spark.network.crypto.enabled turns encryption on unless spark.ccl.encrypt says no")
  void sparkNetworkCryptoTurnsEncryptionOn() {
    assertEquals(false, SparkConfKeys.engineConfig(new SparkConf(false)).encrypt());
    SparkConf crypto = new SparkConf(false).set("spark.network.crypto.enabled", "true");
    assertEquals(true, SparkConfKeys.engineConfig(crypto).encrypt());
    SparkConf optOut = crypto.clone().set("spark.ccl.encrypt", "false");
    assertEquals(false, SparkConfKeys.engineConfig(optOut).encrypt());
    SparkConf alone = new SparkConf(false).set("spark.ccl.encrypt", "true");
    assertEquals(true, SparkConfKeys.engineConfig(alone).encrypt());
  }

  @Test
  @DisplayName("spark.ccl.python.channel turns the executors' channel for Python workers off")
  void pythonChannelKey() {
    assertEquals(true, SparkConfKeys.engineConfig(new SparkConf(false)).pythonChannel());
    SparkConf off = new SparkConf(false).set("spark.ccl.python.channel", "false");
    assertEquals(false, SparkConfKeys.engineConfig(off).pythonChannel());
    SparkConf bad = new SparkConf(false).set("spark.ccl.python.channel", "sometimes");
    IllegalArgumentException e =
        org.junit.jupiter.api.Assertions.assertThrows(
            IllegalArgumentException.class, () -> SparkConfKeys.engineConfig(bad));
    org.junit.jupiter.api.Assertions.assertTrue(
        e.getMessage().contains("python.channel"), e.getMessage());
  }
}
