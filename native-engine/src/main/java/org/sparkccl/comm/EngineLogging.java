package org.sparkccl.comm;

import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.core.config.Configurator;
import org.sparkccl.config.LogLevel;

/** The {@code debug} switch, like {@code NCCL_DEBUG}: sets the engine's log level. */
final class EngineLogging {
  private static volatile LogLevel applied;

  private EngineLogging() {}

  static void apply(LogLevel level) {
    if (level == null || level.equals(applied)) {
      return;
    }
    applied = level;
    Configurator.setLevel("org.sparkccl", Level.toLevel(level.name(), Level.WARN));
  }
}
