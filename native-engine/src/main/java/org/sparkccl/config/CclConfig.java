package org.sparkccl.config;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.function.Function;

/**
 * Every tunable of the engine, immutable once built.
 *
 * <p>Keys (default in brackets). Outside Spark each key is read from the Java system property
 * {@code sparkccl.<key>} and then from the environment variable {@code SPARKCCL_<KEY>} (upper
 * case, dots as underscores: {@code socket.nThreads} is {@code SPARKCCL_SOCKET_NTHREADS}). The
 * Spark plugin maps {@code spark.ccl.<key>} onto the same keys.
 *
 * <ul>
 *   <li>{@code buffSize} [4M]: bytes of each connection's FIFO; a slot ({@code stepSize}) is 1/8
 *       of it. Accepts K, M, G suffixes.
 *   <li>{@code nChannels} [1]: parallel rings, each with its own connections, FIFOs and kernel
 *       thread (one is fastest on 2 cores: see docs/benchmarks.md).
 *   <li>{@code socket.nThreads} [0]: helper threads per socket connection; 0 moves all data
 *       over the control socket from the proxy thread (NCCL's default without a cloud NIC).
 *   <li>{@code socket.nSocksPerThread} [1]: data sockets each helper thread owns.
 *   <li>{@code transport} [auto]: how ring channels move slots between ranks: {@code socket},
 *       {@code ucx} (UCX through Jucx: one-sided puts into registered FIFOs), {@code local}
 *       (ranks that are threads of one JVM copy each slot straight into the next rank's FIFO),
 *       or {@code auto}: UCX when its native libraries load on every rank, otherwise sockets.
 *       Point-to-point links (send/recv, trees) use sockets either way.
 *   <li>{@code ib.qpsPerConnection} [1]: UCX endpoints per ring connection; data is striped
 *       across them ({@code NCCL_IB_QPS_PER_CONNECTION}).
 *   <li>{@code socket.host} [127.0.0.1, or the bootstrap's own address when it has one]: the
 *       address this rank listens on and advertises to its peers.
 *   <li>{@code timeout} [120s]: longest wait without progress before a collective fails.
 *       Accepts ms, s, m suffixes; plain numbers are seconds.
 *   <li>{@code algo} [auto]: {@code auto} (the tuner picks), {@code ring} or {@code tree}.
 *   <li>{@code tuner.hopLatencyUs} [46], {@code tuner.treeHopLatencyUs} [43], {@code
 *       tuner.linkGBps} [0.68]: the tuner's cost model, measured by {@code
 *       bin/sparkccl-calibrate}.
 *   <li>{@code device} [host]: where collectives run: {@code host} (Java kernels over off-heap
 *       memory), {@code cuda} or {@code cuda:N} (CUDA kernels on GPU N; buffers must be that
 *       GPU's), or {@code auto} (the first GPU if the CUDA backend is available, else the host).
 *   <li>{@code debug} [unset]: log level of the engine ({@code WARN}, {@code INFO},
 *       {@code DEBUG}, {@code TRACE}), like {@code NCCL_DEBUG}; unset leaves the levels to the
 *       logging configuration.
 * </ul>
 *
 * <pre>{@code
 * CclConfig config = CclConfig.fromEnvironment().toBuilder().nChannels(4).build();
 * }</pre>
 */
public final class CclConfig {
  public static final String BUFF_SIZE = "buffSize";
  public static final String N_CHANNELS = "nChannels";
  public static final String SOCKET_N_THREADS = "socket.nThreads";
  public static final String SOCKET_N_SOCKS_PER_THREAD = "socket.nSocksPerThread";
  public static final String SOCKET_HOST = "socket.host";
  public static final String TRANSPORT = "transport";
  public static final String IB_QPS_PER_CONNECTION = "ib.qpsPerConnection";
  public static final String TIMEOUT = "timeout";
  public static final String ALGO = "algo";
  public static final String DEBUG = "debug";
  public static final String DEVICE = "device";
  public static final String TUNER_HOP_LATENCY_US = "tuner.hopLatencyUs";
  public static final String TUNER_LINK_GBPS = "tuner.linkGBps";
  public static final String TUNER_TREE_HOP_LATENCY_US = "tuner.treeHopLatencyUs";

  public static final int BUFF_SIZE_DEFAULT = 4 << 20;
  public static final int N_CHANNELS_DEFAULT = 1;
  public static final int SOCKET_N_THREADS_DEFAULT = 0;
  public static final int SOCKET_N_SOCKS_PER_THREAD_DEFAULT = 1;
  public static final String TRANSPORT_DEFAULT = "auto";
  public static final int IB_QPS_PER_CONNECTION_DEFAULT = 1;
  /** NCCL's cap on NCCL_IB_QPS_PER_CONNECTION is 128; more than 16 only adds start-up cost here. */
  public static final int MAX_QPS_PER_CONNECTION = 16;
  public static final Duration TIMEOUT_DEFAULT = Duration.ofSeconds(120);
  public static final String ALGO_DEFAULT = "auto";
  public static final String DEVICE_DEFAULT = "host";
  /** Unset: the engine leaves its log levels to the logging configuration (Spark's, say). */
  public static final String DEBUG_DEFAULT = null;
  /** Measured with bin/sparkccl-calibrate on the 2-core development machine (docs/benchmarks.md). */
  public static final double TUNER_HOP_LATENCY_US_DEFAULT = 46;

  public static final double TUNER_LINK_GBPS_DEFAULT = 0.68;
  public static final double TUNER_TREE_HOP_LATENCY_US_DEFAULT = 43;

  /** NCCL's caps for its socket transport (MAX_THREADS, MAX_SOCKETS). */
  public static final int MAX_SOCKET_THREADS = 16;

  public static final int MAX_SOCKETS = 64;
  public static final int MAX_CHANNELS = 32;

  /** FIFO slots per connection, NCCL_STEPS. */
  public static final int STEPS = 8;

  private final int buffSize;
  private final int nChannels;
  private final int socketThreads;
  private final int socketsPerThread;
  private final String socketHost;
  private final String transport;
  private final int qpsPerConnection;
  private final Duration timeout;
  private final String algo;
  private final String debug;
  private final String device;
  private final double hopLatencyUs;
  private final double linkGBps;
  private final double treeHopLatencyUs;

  private CclConfig(Builder b) {
    this.treeHopLatencyUs = b.treeHopLatencyUs;
    this.hopLatencyUs = b.hopLatencyUs;
    this.linkGBps = b.linkGBps;
    this.buffSize = b.buffSize;
    this.nChannels = b.nChannels;
    this.socketThreads = b.socketThreads;
    this.socketsPerThread = b.socketsPerThread;
    this.socketHost = b.socketHost;
    this.transport = b.transport;
    this.qpsPerConnection = b.qpsPerConnection;
    this.timeout = b.timeout;
    this.algo = b.algo;
    this.debug = b.debug;
    this.device = b.device;
  }

  public static Builder builder() {
    return new Builder();
  }

  /** The defaults, overridden by {@code sparkccl.*} system properties and {@code SPARKCCL_*}. */
  public static CclConfig fromEnvironment() {
    return fromLookup(
        key -> {
          String v = System.getProperty("sparkccl." + key);
          return v != null ? v : System.getenv(environmentName(key));
        });
  }

  /** The defaults, overridden by entries of {@code values} keyed by the names above. */
  public static CclConfig fromMap(Map<String, String> values) {
    return fromLookup(values::get);
  }

  /** {@code SPARKCCL_SOCKET_NTHREADS} for {@code socket.nThreads}. */
  public static String environmentName(String key) {
    return "SPARKCCL_" + key.replace('.', '_').toUpperCase(Locale.ROOT);
  }

  private static CclConfig fromLookup(Function<String, String> lookup) {
    Builder b = builder();
    apply(lookup, BUFF_SIZE, v -> b.buffSize(toIntBytes(BUFF_SIZE, parseBytes(BUFF_SIZE, v))));
    apply(lookup, N_CHANNELS, v -> b.nChannels(parseInt(N_CHANNELS, v)));
    apply(lookup, SOCKET_N_THREADS, v -> b.socketThreads(parseInt(SOCKET_N_THREADS, v)));
    apply(
        lookup,
        SOCKET_N_SOCKS_PER_THREAD,
        v -> b.socketsPerThread(parseInt(SOCKET_N_SOCKS_PER_THREAD, v)));
    apply(lookup, SOCKET_HOST, b::socketHost);
    apply(lookup, TRANSPORT, b::transport);
    apply(
        lookup,
        IB_QPS_PER_CONNECTION,
        v -> b.qpsPerConnection(parseInt(IB_QPS_PER_CONNECTION, v)));
    apply(lookup, TIMEOUT, v -> b.timeout(parseDuration(TIMEOUT, v)));
    apply(lookup, ALGO, b::algo);
    apply(lookup, DEBUG, b::debug);
    apply(lookup, DEVICE, b::device);
    apply(lookup, TUNER_HOP_LATENCY_US, v -> b.hopLatencyUs(parseDouble(TUNER_HOP_LATENCY_US, v)));
    apply(lookup, TUNER_LINK_GBPS, v -> b.linkGBps(parseDouble(TUNER_LINK_GBPS, v)));
    apply(
        lookup,
        TUNER_TREE_HOP_LATENCY_US,
        v -> b.treeHopLatencyUs(parseDouble(TUNER_TREE_HOP_LATENCY_US, v)));
    return b.build();
  }

  private static void apply(
      Function<String, String> lookup, String key, java.util.function.Consumer<String> setter) {
    String v = lookup.apply(key);
    if (v != null && !v.isBlank()) {
      setter.accept(v.trim());
    }
  }

  /** Parses {@code 4M}, {@code 512K}, {@code 1G} or a plain byte count. */
  public static long parseBytes(String key, String text) {
    String t = text.trim().toUpperCase(Locale.ROOT);
    long mult = 1;
    if (t.endsWith("B")) {
      t = t.substring(0, t.length() - 1);
    }
    if (t.endsWith("K")) {
      mult = 1L << 10;
    } else if (t.endsWith("M")) {
      mult = 1L << 20;
    } else if (t.endsWith("G")) {
      mult = 1L << 30;
    }
    if (mult != 1) {
      t = t.substring(0, t.length() - 1);
    }
    try {
      long v = Long.parseLong(t.trim());
      if (v < 0) {
        throw new NumberFormatException("negative");
      }
      return Math.multiplyExact(v, mult);
    } catch (NumberFormatException | ArithmeticException e) {
      throw new IllegalArgumentException(
          key + "=" + text + " is not a byte size; expected a number with an optional K, M or G"
              + " suffix, e.g. 4M");
    }
  }

  private static int toIntBytes(String key, long v) {
    if (v > Integer.MAX_VALUE) {
      throw new IllegalArgumentException(key + "=" + v + " is too large; expected at most 1G");
    }
    return (int) v;
  }

  private static double parseDouble(String key, String text) {
    try {
      return Double.parseDouble(text.trim());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(key + "=" + text + " is not a number");
    }
  }

  private static int parseInt(String key, String text) {
    try {
      return Integer.parseInt(text.trim());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(key + "=" + text + " is not an integer");
    }
  }

  /** Parses {@code 500ms}, {@code 30s}, {@code 2m} or a plain number of seconds. */
  public static Duration parseDuration(String key, String text) {
    String t = text.trim().toLowerCase(Locale.ROOT);
    try {
      if (t.endsWith("ms")) {
        return Duration.ofMillis(Long.parseLong(t.substring(0, t.length() - 2).trim()));
      } else if (t.endsWith("s")) {
        return Duration.ofMillis(
            Math.round(Double.parseDouble(t.substring(0, t.length() - 1).trim()) * 1000));
      } else if (t.endsWith("m")) {
        return Duration.ofMinutes(Long.parseLong(t.substring(0, t.length() - 1).trim()));
      }
      return Duration.ofMillis(Math.round(Double.parseDouble(t) * 1000));
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(
          key + "=" + text + " is not a duration; expected e.g. 500ms, 30s, 2m or 30");
    }
  }

  public int buffSize() {
    return buffSize;
  }

  /** Bytes of one FIFO slot: {@code buffSize / STEPS}. */
  public int stepSize() {
    return buffSize / STEPS;
  }

  public int nChannels() {
    return nChannels;
  }

  public int socketThreads() {
    return socketThreads;
  }

  public int socketsPerThread() {
    return socketsPerThread;
  }

  /** Data sockets per connection: 0 when the control socket carries the data. */
  public int socketCount() {
    return socketThreads * socketsPerThread;
  }

  /** Explicit listen address, or {@code null} to take the bootstrap's. */
  public String socketHost() {
    return socketHost;
  }

  public Duration timeout() {
    return timeout;
  }

  /** {@code auto}, {@code socket}, {@code ucx} or {@code local} (ring channels of ranks in one JVM). */
  public String transport() {
    return transport;
  }

  /** UCX endpoints per ring connection. */
  public int qpsPerConnection() {
    return qpsPerConnection;
  }

  public String algo() {
    return algo;
  }

  public String debug() {
    return debug;
  }

  /** {@code host}, {@code cuda}, {@code cuda:N} or {@code auto} (see {@code device.Devices}). */
  public String device() {
    return device;
  }

  /** The tuner's cost of one hop, in microseconds. */
  public double hopLatencyUs() {
    return hopLatencyUs;
  }

  /** The tuner's cost of one tree hop, in microseconds (a tree hop does more than a ring's). */
  public double treeHopLatencyUs() {
    return treeHopLatencyUs;
  }

  /** The tuner's bandwidth of one link, in GB/s. */
  public double linkGBps() {
    return linkGBps;
  }

  public Builder toBuilder() {
    return new Builder(this);
  }

  /** Key to value, in the order of the class documentation; what INFO logs print. */
  public Map<String, String> asMap() {
    Map<String, String> m = new LinkedHashMap<>();
    m.put(BUFF_SIZE, Integer.toString(buffSize));
    m.put(N_CHANNELS, Integer.toString(nChannels));
    m.put(SOCKET_N_THREADS, Integer.toString(socketThreads));
    m.put(SOCKET_N_SOCKS_PER_THREAD, Integer.toString(socketsPerThread));
    m.put(SOCKET_HOST, socketHost == null ? "auto" : socketHost);
    m.put(TRANSPORT, transport);
    m.put(IB_QPS_PER_CONNECTION, Integer.toString(qpsPerConnection));
    m.put(TIMEOUT, timeout.toMillis() + "ms");
    m.put(ALGO, algo);
    m.put(DEBUG, debug == null ? "unset" : debug);
    m.put(DEVICE, device);
    m.put(TUNER_HOP_LATENCY_US, Double.toString(hopLatencyUs));
    m.put(TUNER_LINK_GBPS, Double.toString(linkGBps));
    m.put(TUNER_TREE_HOP_LATENCY_US, Double.toString(treeHopLatencyUs));
    return m;
  }

  @Override
  public String toString() {
    return asMap().toString();
  }

  /** Fluent builder; {@link #build()} validates every value at once. */
  public static final class Builder {
    private int buffSize = BUFF_SIZE_DEFAULT;
    private int nChannels = N_CHANNELS_DEFAULT;
    private int socketThreads = SOCKET_N_THREADS_DEFAULT;
    private int socketsPerThread = SOCKET_N_SOCKS_PER_THREAD_DEFAULT;
    private String socketHost;
    private String transport = TRANSPORT_DEFAULT;
    private int qpsPerConnection = IB_QPS_PER_CONNECTION_DEFAULT;
    private Duration timeout = TIMEOUT_DEFAULT;
    private String algo = ALGO_DEFAULT;
    private String debug = DEBUG_DEFAULT;
    private String device = DEVICE_DEFAULT;
    private double hopLatencyUs = TUNER_HOP_LATENCY_US_DEFAULT;
    private double linkGBps = TUNER_LINK_GBPS_DEFAULT;
    private double treeHopLatencyUs = TUNER_TREE_HOP_LATENCY_US_DEFAULT;

    private Builder() {}

    private Builder(CclConfig c) {
      buffSize = c.buffSize;
      nChannels = c.nChannels;
      socketThreads = c.socketThreads;
      socketsPerThread = c.socketsPerThread;
      socketHost = c.socketHost;
      transport = c.transport;
      qpsPerConnection = c.qpsPerConnection;
      timeout = c.timeout;
      algo = c.algo;
      debug = c.debug;
      device = c.device;
      hopLatencyUs = c.hopLatencyUs;
      linkGBps = c.linkGBps;
      treeHopLatencyUs = c.treeHopLatencyUs;
    }

    public Builder treeHopLatencyUs(double v) {
      treeHopLatencyUs = v;
      return this;
    }

    public Builder hopLatencyUs(double v) {
      hopLatencyUs = v;
      return this;
    }

    public Builder linkGBps(double v) {
      linkGBps = v;
      return this;
    }

    public Builder buffSize(int v) {
      buffSize = v;
      return this;
    }

    public Builder nChannels(int v) {
      nChannels = v;
      return this;
    }

    public Builder socketThreads(int v) {
      socketThreads = v;
      return this;
    }

    public Builder socketsPerThread(int v) {
      socketsPerThread = v;
      return this;
    }

    public Builder socketHost(String v) {
      socketHost = v;
      return this;
    }

    public Builder transport(String v) {
      transport = v == null ? null : v.toLowerCase(Locale.ROOT);
      return this;
    }

    public Builder qpsPerConnection(int v) {
      qpsPerConnection = v;
      return this;
    }

    public Builder timeout(Duration v) {
      timeout = v;
      return this;
    }

    public Builder algo(String v) {
      algo = v == null ? null : v.toLowerCase(Locale.ROOT);
      return this;
    }

    public Builder debug(String v) {
      debug = v == null ? null : v.toUpperCase(Locale.ROOT);
      return this;
    }

    public Builder device(String v) {
      device = v == null ? null : v.trim().toLowerCase(Locale.ROOT);
      return this;
    }

    public CclConfig build() {
      int minBuff = STEPS * 1024;
      if (buffSize < minBuff || buffSize % (STEPS * 64) != 0) {
        throw new IllegalArgumentException(
            BUFF_SIZE + "=" + buffSize + " is invalid; expected at least " + minBuff
                + " and a multiple of " + (STEPS * 64));
      }
      if (nChannels < 1 || nChannels > MAX_CHANNELS) {
        throw new IllegalArgumentException(
            N_CHANNELS + "=" + nChannels + " is invalid; expected 1.." + MAX_CHANNELS);
      }
      if (socketThreads < 0 || socketThreads > MAX_SOCKET_THREADS) {
        throw new IllegalArgumentException(
            SOCKET_N_THREADS + "=" + socketThreads + " is invalid; expected 0.."
                + MAX_SOCKET_THREADS);
      }
      if (socketsPerThread < 1 || socketThreads * socketsPerThread > MAX_SOCKETS) {
        throw new IllegalArgumentException(
            SOCKET_N_SOCKS_PER_THREAD + "=" + socketsPerThread + " is invalid; expected at least 1"
                + " and " + SOCKET_N_THREADS + " x " + SOCKET_N_SOCKS_PER_THREAD + " <= "
                + MAX_SOCKETS);
      }
      if (transport == null || !transport.matches("auto|socket|ucx|local")) {
        throw new IllegalArgumentException(
            TRANSPORT + "=" + transport + " is invalid; expected auto, socket, ucx or local");
      }
      if (qpsPerConnection < 1 || qpsPerConnection > MAX_QPS_PER_CONNECTION) {
        throw new IllegalArgumentException(
            IB_QPS_PER_CONNECTION + "=" + qpsPerConnection + " is invalid; expected 1.."
                + MAX_QPS_PER_CONNECTION);
      }
      if (timeout == null || timeout.isZero() || timeout.isNegative()) {
        throw new IllegalArgumentException(
            TIMEOUT + "=" + timeout + " is invalid; expected a positive duration");
      }
      if (!"auto".equals(algo) && !"ring".equals(algo) && !"tree".equals(algo)) {
        throw new IllegalArgumentException(
            ALGO + "=" + algo + " is invalid; expected auto, ring or tree");
      }
      if (!(hopLatencyUs > 0) || !(linkGBps > 0) || !(treeHopLatencyUs > 0)) {
        throw new IllegalArgumentException(
            TUNER_HOP_LATENCY_US + "=" + hopLatencyUs + " and " + TUNER_LINK_GBPS + "=" + linkGBps
                + " and " + TUNER_TREE_HOP_LATENCY_US + "=" + treeHopLatencyUs
                + " must be positive");
      }
      if (device == null || !device.matches("host|auto|cuda|cuda:\\d{1,4}")) {
        throw new IllegalArgumentException(
            DEVICE + "=" + device + " is invalid; expected host, cuda, cuda:N or auto");
      }
      if (debug != null && !debug.matches("OFF|ERROR|WARN|INFO|DEBUG|TRACE")) {
        throw new IllegalArgumentException(
            DEBUG + "=" + debug + " is invalid; expected one of WARN, INFO, DEBUG, TRACE");
      }
      return new CclConfig(this);
    }
  }
}
