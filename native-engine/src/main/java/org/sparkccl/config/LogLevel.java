package org.sparkccl.config;

/** The engine's log level (key {@code debug}), like {@code NCCL_DEBUG}. */
public enum LogLevel {
  OFF,
  ERROR,
  WARN,
  INFO,
  DEBUG,
  TRACE
}
