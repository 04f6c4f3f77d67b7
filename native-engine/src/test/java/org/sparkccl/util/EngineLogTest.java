package org.sparkccl.util;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.StringWriter;
import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.Logger;
import org.apache.logging.log4j.core.LoggerContext;
import org.apache.logging.log4j.core.appender.WriterAppender;
import org.apache.logging.log4j.core.config.Configuration;
import org.apache.logging.log4j.core.config.LoggerConfig;
import org.apache.logging.log4j.core.layout.PatternLayout;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.sparkccl.Communicator;
import org.sparkccl.bootstrap.LocalBootstrap;
import org.sparkccl.config.CclConfig;
import org.sparkccl.config.LogLevel;

/**
 * The {@code debug} key overrides the logging configuration for the engine's loggers, through
 * log4j-api only, and unset leaves the decision to that configuration. Log4j2's core (the backend
 * Spark and the perf tool use) is configured here to say WARN for {@code org.sparkccl}.
 */
@DisplayName("the engine's log level")
class EngineLogTest {
  private static final String APPENDER = "engine-log-test";
  private final LoggerContext context = LoggerContext.getContext(false);
  private final StringWriter out = new StringWriter();
  private WriterAppender appender;

  @BeforeEach
  void configureWarnForTheEngine() {
    Configuration config = context.getConfiguration();
    appender =
        WriterAppender.newBuilder()
            .setName(APPENDER)
            .setTarget(out)
            .setLayout(PatternLayout.newBuilder().withPattern("%level %c %m%n").build())
            .build();
    appender.start();
    config.addAppender(appender);
    LoggerConfig engine =
        LoggerConfig.newBuilder()
            .withLoggerName("org.sparkccl")
            .withLevel(Level.WARN)
            .withAdditivity(false)
            .withConfig(config)
            .build();
    engine.addAppender(appender, null, null);
    config.addLogger("org.sparkccl", engine);
    context.updateLoggers();
  }

  @AfterEach
  void restore() {
    EngineLog.setLevel(null);
    Configuration config = context.getConfiguration();
    config.removeLogger("org.sparkccl");
    context.updateLoggers();
    appender.stop();
  }

  @Test
  void debugShowsDebugMessagesWhereTheConfigurationSaysWarn() {
    Logger log = EngineLog.logger(EngineLogTest.class);
    log.debug("hidden by the configuration");
    EngineLog.setLevel(LogLevel.DEBUG);
    assertTrue(log.isDebugEnabled());
    assertFalse(log.isTraceEnabled());
    log.debug("shown at {}", "debug");
    log.trace("below debug");
    String text = out.toString();
    assertTrue(text.contains("DEBUG " + EngineLogTest.class.getName() + " shown at debug"), text);
    assertFalse(text.contains("hidden"), text);
    assertFalse(text.contains("below debug"), text);
  }

  @Test
  void warnSuppressesInfoMessagesAndKeepsWarnings() {
    EngineLog.setLevel(LogLevel.INFO);
    Logger log = EngineLog.logger(EngineLogTest.class);
    log.info("shown at info");
    EngineLog.setLevel(LogLevel.WARN);
    log.info("suppressed at warn");
    log.warn("a warning");
    log.error("an error", new IllegalStateException("cause"));
    String text = out.toString();
    assertTrue(text.contains("shown at info"), text);
    assertFalse(text.contains("suppressed"), text);
    assertTrue(text.contains("WARN " + EngineLogTest.class.getName() + " a warning"), text);
    assertTrue(text.contains("an error"), text);
  }

  @Test
  void unsetLeavesTheDecisionToTheConfiguration() {
    Logger log = EngineLog.logger(EngineLogTest.class);
    assertEquals(Level.WARN, log.getLevel());
    assertFalse(log.isInfoEnabled());
    log.info("info under a warn configuration");
    log.warn("warn under a warn configuration");
    String text = out.toString();
    assertFalse(text.contains("info under"), text);
    assertTrue(text.contains("warn under"), text);
  }

  @Test
  void theDebugKeyOfACommunicatorSetsTheLevel() {
    CclConfig config = CclConfig.builder().debug(LogLevel.INFO).build();
    try (Communicator comm = Communicator.create(LocalBootstrap.group(1).rank(0), config)) {
      assertEquals(LogLevel.INFO, EngineLog.level());
    }
    String text = out.toString();
    assertTrue(text.contains("INFO org.sparkccl.comm.CommCore rank 0/1 ready:"), text);
  }
}
