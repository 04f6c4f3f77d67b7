package org.sparkccl.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** Every key is documented with its default, and each of its three names reaches the engine. */
@DisplayName("configuration keys")
class ConfigDocsTest {
  @Test
  @DisplayName("each has a README row with its environment name and default")
  void everyKeyIsInTheReadmeTable() throws IOException {
    String readme = Files.readString(Path.of("..", "README.md"), StandardCharsets.UTF_8);
    for (Key key : Key.values()) {
      String row = "| `" + key.key() + "` (`" + key.environmentVariable() + "`) | ";
      int at = readme.indexOf(row);
      assertTrue(at >= 0, "README.md has no configuration row starting with " + row);
      if (key.defaultValue() != null) {
        String cell = readme.substring(at + row.length(), readme.indexOf('|', at + row.length()));
        assertEquals("`" + key.defaultValue() + "`", cell.trim(), "README default of " + key);
      }
    }
  }

  @Test
  @DisplayName("each name form sets the same value")
  void theThreeFormsNameOneKey() {
    assertEquals("spark.ccl.ib.qpsPerConnection", Key.IB_QPS_PER_CONNECTION.sparkConf());
    assertEquals("sparkccl.ib.qpsPerConnection", Key.IB_QPS_PER_CONNECTION.systemProperty());
    assertEquals("SPARKCCL_IB_QPSPERCONNECTION", Key.IB_QPS_PER_CONNECTION.environmentVariable());
    String old = System.getProperty(Key.N_CHANNELS.systemProperty());
    try {
      System.setProperty(Key.N_CHANNELS.systemProperty(), "3");
      assertEquals(3, CclConfig.fromEnvironment().nChannels());
    } finally {
      if (old == null) {
        System.clearProperty(Key.N_CHANNELS.systemProperty());
      } else {
        System.setProperty(Key.N_CHANNELS.systemProperty(), old);
      }
    }
    // the Spark plugin strips "spark.ccl." and passes the rest through fromMap
    assertEquals(5, CclConfig.fromMap(Map.of(Key.N_CHANNELS.key(), "5")).nChannels());
  }

  @Test
  @DisplayName("cuda.residentUs takes 0 (a launch per collective) up to a second, nothing else")
  void residentTimeIsBounded() {
    assertEquals(5000, CclConfig.builder().build().cudaResidentUs());
    assertEquals(0, CclConfig.fromMap(Map.of("cuda.residentUs", "0")).cudaResidentUs());
    IllegalArgumentException e =
        org.junit.jupiter.api.Assertions.assertThrows(
            IllegalArgumentException.class,
            () -> CclConfig.fromMap(Map.of("cuda.residentUs", "-1")));
    assertTrue(e.getMessage().contains("cuda.residentUs"), e.getMessage());
    org.junit.jupiter.api.Assertions.assertThrows(
        IllegalArgumentException.class,
        () -> CclConfig.builder().cudaResidentUs(Key.MAX_CUDA_RESIDENT_US + 1).build());
  }
}
