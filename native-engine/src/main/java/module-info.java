/**
 * SparkCCL's collective engine: communicators that run allReduce, broadcast, reduce, allGather,
 * reduceScatter and send/recv over host or GPU memory, between threads, processes or machines.
 *
 * <p>The API is the exported packages: {@code org.sparkccl} (the communicator, data types,
 * operators and exceptions), {@code org.sparkccl.bootstrap} (how ranks meet), {@code
 * org.sparkccl.config} (every setting) and {@code org.sparkccl.device} (where buffers live). Every
 * other package is the engine's inside and may change without notice.
 */
module org.sparkccl.engine {
  requires org.apache.logging.log4j;
  requires jucx;
  requires jcuda;
  requires jdk.unsupported;

  exports org.sparkccl;
  exports org.sparkccl.bootstrap;
  exports org.sparkccl.config;
  exports org.sparkccl.device;
}
