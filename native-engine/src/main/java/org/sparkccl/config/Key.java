package org.sparkccl.config;

import java.util.Locale;

/**
 * Every configuration key of the engine with its default, in one place. A key has three forms: the
 * Spark conf key {@code spark.ccl.<key>}, the system property {@code sparkccl.<key>} and the
 * environment variable {@code SPARKCCL_<KEY>} (upper case, dots as underscores: {@code
 * socket.nThreads} is {@code SPARKCCL_SOCKET_NTHREADS}). Limits that values must respect are the
 * constants below; {@link CclConfig.Builder#build()} checks them.
 *
 * <pre>{@code
 * String env = Key.SOCKET_N_THREADS.environmentVariable(); // SPARKCCL_SOCKET_NTHREADS
 * }</pre>
 */
public enum Key {
  /** Bytes of each connection's FIFO; a slot ({@code stepSize}) is 1/8 of it. K, M, G suffixes. */
  BUFF_SIZE("buffSize", "4M"),
  /**
   * Parallel rings, each with its own connections, FIFOs and kernel thread; {@code auto}: two where
   * the ring runs over sockets ({@code transport=socket}) between host buffers and every host's
   * cores cover its ranks' polling threads with two, else one.
   */
  N_CHANNELS("nChannels", "auto"),
  /** Helper threads per socket connection; 0 moves all data over the control socket. */
  SOCKET_N_THREADS("socket.nThreads", "0"),
  /** Data sockets each helper thread owns. */
  SOCKET_N_SOCKS_PER_THREAD("socket.nSocksPerThread", "1"),
  /** The address this rank listens on; unset takes the bootstrap's own, else 127.0.0.1. */
  SOCKET_HOST("socket.host", null),
  /**
   * Which network interfaces the listening address may come from, like {@code NCCL_SOCKET_IFNAME}:
   * name prefixes separated by commas, {@code ^} before the list to exclude instead, {@code =} to
   * match whole names; unset takes the bootstrap's address.
   */
  SOCKET_IFNAME("socket.ifname", null),
  /** How ring channels move slots: {@code auto}, {@code socket}, {@code ucx} or {@code local}. */
  TRANSPORT("transport", "auto"),
  /**
   * Whether data connections encrypt what they carry (AES-GCM, keys per socket and direction from
   * the communicator's secret). Only the socket transport encrypts: {@code transport=auto} then
   * skips UCX, and {@code transport=ucx} is refused. Spark sets it from {@code
   * spark.network.crypto.enabled}.
   */
  ENCRYPT("encrypt", "false"),
  /**
   * Ranks of one host whose GPUs reach each other write straight into each other's FIFOs ({@code
   * auto}), like NCCL's P2P transport; {@code off} sends them through shared host memory instead,
   * like {@code NCCL_P2P_DISABLE=1}. Only with {@code transport=auto}.
   */
  P2P("p2p", "auto"),
  /**
   * Whether ranks of one host pass the messages of trees and recursive doubling through shared
   * memory: {@code auto} (when the host's cores cover its ranks, since a waiting rank polls),
   * {@code on} or {@code off} (loopback sockets). Host memory only; messages up to 64 KiB per edge.
   */
  SHM("shm", "auto"),
  /**
   * Messages up to this many bytes per edge take the LL protocol on shared-memory edges: the flag
   * that says a slot is filled shares a cache line with the first data, like NCCL's LL; larger ones
   * take the simple protocol (counters and sizes beside the slots). 0 turns LL off. Each rank's
   * value sizes the slots of the edges it receives on, so both ends of an edge agree whatever the
   * others set. B, K suffixes; at most 64K.
   */
  LL_MAX_BYTES("ll.maxBytes", "4K"),
  /**
   * Ring collectives on host memory whose call names at least this many bytes (its count times the
   * element size) leave their transfers to the proxy thread: the calling thread, while it waits,
   * then reduces and copies only, instead of also reading and writing the sockets itself (UCX
   * transfers are always the proxy's). 0: never; a waiting calling thread moves the bytes, which
   * suits small messages, where a hand-off between two threads costs more than it overlaps. {@code
   * auto} (the default): 512 KiB where every rank of the communicator spins, every host has twice
   * the cores its ranks' polling threads take, and the ring runs over sockets; else never: a proxy
   * that backs off wakes late for every slot, and one whose host's cores all spin gains nothing. B,
   * K, M suffixes.
   */
  RING_PROXY_MIN_BYTES("ring.proxyMinBytes", "auto"),
  /** UCX endpoints per ring connection, like {@code NCCL_IB_QPS_PER_CONNECTION}. */
  IB_QPS_PER_CONNECTION("ib.qpsPerConnection", "1"),
  /** Longest wait without progress before a collective fails; ms, s, m suffixes (plain: s). */
  TIMEOUT("timeout", "120s"),
  /** {@code auto} (the tuner picks), {@code ring}, {@code tree} or {@code rd}. */
  ALGO("algo", "auto"),
  /**
   * Whether ranks compare their collective calls (kind, number, count, dtype, op, root) and fail
   * with {@code CclMismatchException} when they differ; {@code false} only to measure its cost.
   */
  CHECK_CALLS("checkCalls", "true"),
  /**
   * Whether the Spark plugin serves each executor's Python workers their communicators (a Unix
   * domain socket and one thread per executor); {@code false} where no PySpark task calls {@code
   * sparkccl.communicator()}.
   */
  PYTHON_CHANNEL("python.channel", "true"),
  /**
   * Whether a Python worker whose communicator spins ({@code idle} settled to {@code spin}) sends
   * its calls through memory both it and the executor poll, with no thread wake-up per call; {@code
   * false}: always through the socket.
   */
  PYTHON_CALL_BOX("python.callBox", "true"),
  /** The engine's log level, like {@code NCCL_DEBUG}; unset leaves it to the logging setup. */
  DEBUG("debug", null),
  /** Where collectives run: {@code host}, {@code cuda}, {@code cuda:N} or {@code auto}. */
  DEVICE("device", "host"),
  /**
   * How waiting threads idle: {@code auto} (spin when the host's cores cover every local rank's
   * polling threads, else back off), {@code spin}, {@code backoff} or {@code park}.
   */
  IDLE("idle", "auto"),
  /**
   * Cores each rank may keep busy, for {@code idle=auto} (Spark: {@code spark.task.cpus}); 0: every
   * core the JVM sees.
   */
  IDLE_CPUS_PER_RANK("idle.cpusPerRank", "0"),
  /** Microseconds a backing-off wait yields before it blocks; also when a spinning wait stalls. */
  IDLE_YIELD_US("idle.yieldUs", "200"),
  /**
   * Microseconds a GPU channel kernel stays resident waiting for the next collective before it
   * returns (the next one relaunches it); 0 launches one kernel per collective.
   */
  CUDA_RESIDENT_US("cuda.residentUs", "5000"),
  /**
   * CUDA blocks in each channel's grid; 0 (automatic) gives a channel whose send edge writes into
   * another GPU's memory about 64 blocks per rank over its channels, as half of the GPU's SMs allow
   * for every rank on it, and every other channel 1.
   */
  CUDA_BLOCKS("cuda.blocks", "0"),
  /** The tuner's cost of one ring hop in microseconds ({@code bin/sparkccl-calibrate}). */
  TUNER_HOP_LATENCY_US("tuner.hopLatencyUs", "46"),
  /** The tuner's bandwidth of one link in GB/s. */
  TUNER_LINK_GBPS("tuner.linkGBps", "0.68"),
  /** The tuner's cost of one hop over point-to-point links (tree, rd) in microseconds. */
  TUNER_TREE_HOP_LATENCY_US("tuner.treeHopLatencyUs", "43"),
  /**
   * {@code tuner.hopLatencyUs} where the communicator's threads spin ({@code idle} settled to
   * {@code spin}): a hop is then a transport's latency, not a thread wake-up. Fitted to the fastest
   * algorithm at each size over sockets on a 16-core host, 4 and 8 rank processes ({@code
   * docs/benchmarks.md}).
   */
  TUNER_SPIN_HOP_LATENCY_US("tuner.spin.hopLatencyUs", "12"),
  /** {@code tuner.linkGBps} where the communicator's threads spin. */
  TUNER_SPIN_LINK_GBPS("tuner.spin.linkGBps", "3"),
  /** {@code tuner.treeHopLatencyUs} where the communicator's threads spin. */
  TUNER_SPIN_TREE_HOP_LATENCY_US("tuner.spin.treeHopLatencyUs", "15"),
  /**
   * The tuner's cost of one ring hop where the ring and every point-to-point edge lie in shared
   * memory (rank processes of one host); measured on a 16-core host with 2 to 8 rank processes
   * ({@code docs/benchmarks.md}).
   */
  TUNER_SHM_HOP_LATENCY_US("tuner.shm.hopLatencyUs", "1.5"),
  /** The tuner's bandwidth of one link in GB/s where every edge lies in shared memory. */
  TUNER_SHM_LINK_GBPS("tuner.shm.linkGBps", "4"),
  /**
   * The tuner's cost of one hop over point-to-point links (recursive doubling, Rabenseifner) where
   * every edge lies in shared memory, in microseconds.
   */
  TUNER_SHM_TREE_HOP_LATENCY_US("tuner.shm.treeHopLatencyUs", "2.5");

  /** At most this many rings. */
  public static final int MAX_CHANNELS = 32;

  /** NCCL's caps for its socket transport (MAX_THREADS, MAX_SOCKETS). */
  public static final int MAX_SOCKET_THREADS = 16;

  public static final int MAX_SOCKETS = 64;

  /** NCCL caps endpoints per connection at 128; more than 16 only adds start-up cost here. */
  public static final int MAX_QPS_PER_CONNECTION = 16;

  /** The smallest FIFO slot, in bytes; {@code buffSize} is a multiple of 64 bytes per slot. */
  public static final int MIN_STEP_SIZE = 1024;

  /** A yield window past a second only burns CPU: a blocked thread wakes within 57 us here. */
  public static final int MAX_IDLE_YIELD_US = 1_000_000;

  /**
   * A resident GPU kernel keeps one SM per channel busy while it waits, and a device-wide
   * synchronisation ({@code cuMemFree}) waits for it: at most a second.
   */
  public static final int MAX_CUDA_RESIDENT_US = 1_000_000;

  /**
   * Blocks per channel when set by hand. Every block of every channel of the ranks on one GPU must
   * be resident at once (they wait for each other), so more only risks a timeout.
   */
  public static final int MAX_CUDA_BLOCKS = 16;

  /** The largest {@code ll.maxBytes}: an LL slot of each of the 8 steps per edge and rank. */
  public static final int MAX_LL_BYTES = 64 << 10;

  private final String key;
  private final String defaultValue;

  Key(String key, String defaultValue) {
    this.key = key;
    this.defaultValue = defaultValue;
  }

  /** The key as the engine names it, such as {@code socket.nThreads}. */
  public String key() {
    return key;
  }

  /** The default as text, or {@code null} when the key is unset by default. */
  public String defaultValue() {
    return defaultValue;
  }

  /** {@code sparkccl.socket.nThreads}. */
  public String systemProperty() {
    return "sparkccl." + key;
  }

  /** {@code SPARKCCL_SOCKET_NTHREADS}. */
  public String environmentVariable() {
    return "SPARKCCL_" + key.replace('.', '_').toUpperCase(Locale.ROOT);
  }

  /** {@code spark.ccl.socket.nThreads}. */
  public String sparkConf() {
    return "spark.ccl." + key;
  }

  /** The key named {@code key}, or {@code null}. */
  public static Key named(String key) {
    for (Key k : values()) {
      if (k.key.equals(key)) {
        return k;
      }
    }
    return null;
  }

  @Override
  public String toString() {
    return key;
  }
}
