package org.sparkccl;

import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.core.config.Configurator;

/** The {@code debug} switch, like {@code NCCL_DEBUG}: sets the engine's log level. */
final class EngineLogging {
  private static volatile String applied;

  private EngineLogging() {}

  static void apply(String level) {
    if (level == null || level.equals(applied)) {
      return;
    }
    applied = level;
    Configurator.setLevel("org.sparkccl", Level.toLevel(level, Level.WARN));
  }
}
