package org.sparkccl.util;

import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.apache.logging.log4j.Marker;
import org.apache.logging.log4j.message.Message;
import org.apache.logging.log4j.spi.ExtendedLogger;
import org.apache.logging.log4j.spi.ExtendedLoggerWrapper;
import org.sparkccl.config.LogLevel;

/**
 * The engine's loggers, and the level that the {@code debug} key sets for them (like {@code
 * NCCL_DEBUG}).
 *
 * <p>A library depends on a logging API only and leaves the backend and its configuration to the
 * application: Spark brings Log4j2 with its own configuration, the perf tool brings one, a user's
 * program may bring another. So the engine may not reconfigure the backend (through Log4j2's {@code
 * Configurator}, say) to honour {@code debug}. Instead every engine class gets its logger here: a
 * wrapper that, while an engine level is set, decides which levels are enabled itself (a message
 * passes iff it is at least as severe as that level), and otherwise asks the backend. A message
 * that passes goes to the backend's appenders as usual; with Log4j2 the level of the logger
 * configuration is checked only when deciding whether a message is enabled, so {@code debug=DEBUG}
 * shows DEBUG lines even where the configuration says WARN for {@code org.sparkccl}.
 *
 * <p>The level is process-wide, like {@code NCCL_DEBUG}: the last communicator created with {@code
 * debug} set decides it.
 */
public final class EngineLog {
  /** The engine's level, or null to leave every decision to the backend. */
  private static volatile Level level;

  private EngineLog() {}

  /** The logger for an engine class (name: the class's name, as {@code LogManager.getLogger}). */
  public static Logger logger(Class<?> cls) {
    ExtendedLogger backend = LogManager.getContext(cls.getClassLoader(), false).getLogger(cls);
    return new EngineLogger(backend);
  }

  /** Sets the engine's level; {@code null} returns the decision to the logging configuration. */
  public static void setLevel(LogLevel engineLevel) {
    level = engineLevel == null ? null : Level.valueOf(engineLevel.name());
  }

  /** The engine's level, or {@code null} when the logging configuration decides. */
  public static LogLevel level() {
    Level l = level;
    return l == null ? null : LogLevel.valueOf(l.name());
  }

  private static final class EngineLogger extends ExtendedLoggerWrapper {
    private static final long serialVersionUID = 1L;

    EngineLogger(ExtendedLogger backend) {
      super(backend, backend.getName(), backend.getMessageFactory());
    }

    @Override
    public Level getLevel() {
      Level l = level;
      return l != null ? l : logger.getLevel();
    }

    @Override
    public boolean isEnabled(Level lvl, Marker marker, Message message, Throwable t) {
      Level l = level;
      return l != null ? lvl.isMoreSpecificThan(l) : logger.isEnabled(lvl, marker, message, t);
    }

    @Override
    public boolean isEnabled(Level lvl, Marker marker, CharSequence message, Throwable t) {
      Level l = level;
      return l != null ? lvl.isMoreSpecificThan(l) : logger.isEnabled(lvl, marker, message, t);
    }

    @Override
    public boolean isEnabled(Level lvl, Marker marker, Object message, Throwable t) {
      Level l = level;
      return l != null ? lvl.isMoreSpecificThan(l) : logger.isEnabled(lvl, marker, message, t);
    }

    @Override
    public boolean isEnabled(Level lvl, Marker marker, String message, Throwable t) {
      Level l = level;
      return l != null ? lvl.isMoreSpecificThan(l) : logger.isEnabled(lvl, marker, message, t);
    }

    @Override
    public boolean isEnabled(Level lvl, Marker marker, String message) {
      Level l = level;
      return l != null ? lvl.isMoreSpecificThan(l) : logger.isEnabled(lvl, marker, message);
    }

    @Override
    public boolean isEnabled(Level lvl, Marker marker, String message, Object... params) {
      Level l = level;
      return l != null ? lvl.isMoreSpecificThan(l) : logger.isEnabled(lvl, marker, message, params);
    }

    @Override
    public boolean isEnabled(Level lvl, Marker marker, String message, Object p0) {
      Level l = level;
      return l != null ? lvl.isMoreSpecificThan(l) : logger.isEnabled(lvl, marker, message, p0);
    }

    @Override
    public boolean isEnabled(Level lvl, Marker marker, String message, Object p0, Object p1) {
      Level l = level;
      return l != null ? lvl.isMoreSpecificThan(l) : logger.isEnabled(lvl, marker, message, p0, p1);
    }

    @Override
    public boolean isEnabled(
        Level lvl, Marker marker, String message, Object p0, Object p1, Object p2) {
      Level l = level;
      return l != null
          ? lvl.isMoreSpecificThan(l)
          : logger.isEnabled(lvl, marker, message, p0, p1, p2);
    }

    @Override
    public boolean isEnabled(
        Level lvl, Marker marker, String message, Object p0, Object p1, Object p2, Object p3) {
      Level l = level;
      return l != null
          ? lvl.isMoreSpecificThan(l)
          : logger.isEnabled(lvl, marker, message, p0, p1, p2, p3);
    }

    @Override
    public boolean isEnabled(
        Level lvl,
        Marker marker,
        String message,
        Object p0,
        Object p1,
        Object p2,
        Object p3,
        Object p4) {
      Level l = level;
      return l != null
          ? lvl.isMoreSpecificThan(l)
          : logger.isEnabled(lvl, marker, message, p0, p1, p2, p3, p4);
    }

    @Override
    public boolean isEnabled(
        Level lvl,
        Marker marker,
        String message,
        Object p0,
        Object p1,
        Object p2,
        Object p3,
        Object p4,
        Object p5) {
      Level l = level;
      return l != null
          ? lvl.isMoreSpecificThan(l)
          : logger.isEnabled(lvl, marker, message, p0, p1, p2, p3, p4, p5);
    }

    @Override
    public boolean isEnabled(
        Level lvl,
        Marker marker,
        String message,
        Object p0,
        Object p1,
        Object p2,
        Object p3,
        Object p4,
        Object p5,
        Object p6) {
      Level l = level;
      return l != null
          ? lvl.isMoreSpecificThan(l)
          : logger.isEnabled(lvl, marker, message, p0, p1, p2, p3, p4, p5, p6);
    }

    @Override
    public boolean isEnabled(
        Level lvl,
        Marker marker,
        String message,
        Object p0,
        Object p1,
        Object p2,
        Object p3,
        Object p4,
        Object p5,
        Object p6,
        Object p7) {
      Level l = level;
      return l != null
          ? lvl.isMoreSpecificThan(l)
          : logger.isEnabled(lvl, marker, message, p0, p1, p2, p3, p4, p5, p6, p7);
    }

    @Override
    public boolean isEnabled(
        Level lvl,
        Marker marker,
        String message,
        Object p0,
        Object p1,
        Object p2,
        Object p3,
        Object p4,
        Object p5,
        Object p6,
        Object p7,
        Object p8) {
      Level l = level;
      return l != null
          ? lvl.isMoreSpecificThan(l)
          : logger.isEnabled(lvl, marker, message, p0, p1, p2, p3, p4, p5, p6, p7, p8);
    }

    @Override
    public boolean isEnabled(
        Level lvl,
        Marker marker,
        String message,
        Object p0,
        Object p1,
        Object p2,
        Object p3,
        Object p4,
        Object p5,
        Object p6,
        Object p7,
        Object p8,
        Object p9) {
      Level l = level;
      return l != null
          ? lvl.isMoreSpecificThan(l)
          : logger.isEnabled(lvl, marker, message, p0, p1, p2, p3, p4, p5, p6, p7, p8, p9);
    }
  }
}
