package org.sparkccl.config;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;
import org.sparkccl.device.DeviceSpec;
import org.sparkccl.fifo.FifoLayout;

/**
 * Every tunable of the engine, typed and immutable once built. {@link Key} names each key with its
 * default and meaning; {@link Values} parses text; this class holds the values and checks them
 * together in {@link Builder#build()}.
 *
 * <p>Where values come from: {@link #fromEnvironment()} reads the system property {@code
 * sparkccl.<key>}, then the environment variable {@code SPARKCCL_<KEY>}; {@link #fromMap} reads a
 * map keyed by {@link Key#key()} (the Spark plugin fills it from {@code spark.ccl.<key>}).
 *
 * <pre>{@code
 * CclConfig config =
 *     CclConfig.fromEnvironment().toBuilder().nChannels(4).transport(Transport.SOCKET).build();
 * }</pre>
 */
public final class CclConfig {
  private final int buffSize;
  private final int nChannels;
  private final int socketThreads;
  private final int socketsPerThread;
  private final String socketHost;
  private final String socketIfname;
  private final Transport transport;
  private final boolean encrypt;
  private final int qpsPerConnection;
  private final Duration timeout;
  private final Algorithm algo;
  private final boolean checkCalls;
  private final boolean pythonChannel;
  private final boolean pythonCallBox;
  private final LogLevel debug;
  private final DeviceSpec device;
  private final IdleMode idle;
  private final boolean p2p;
  private final boolean shm;
  private final int idleYieldUs;
  private final int idleCpusPerRank;
  private final int cudaResidentUs;
  private final int cudaBlocks;
  private final int llMaxBytes;
  private final long ringProxyMinBytes;
  private final double hopLatencyUs;
  private final double linkGBps;
  private final double treeHopLatencyUs;
  private final double spinHopLatencyUs;
  private final double spinLinkGBps;
  private final double spinTreeHopLatencyUs;
  private final double shmHopLatencyUs;
  private final double shmLinkGBps;
  private final double shmTreeHopLatencyUs;

  private CclConfig(Builder b) {
    this.buffSize = b.buffSize;
    this.nChannels = b.nChannels;
    this.socketThreads = b.socketThreads;
    this.socketsPerThread = b.socketsPerThread;
    this.socketHost = b.socketHost;
    this.socketIfname = b.socketIfname;
    this.transport = b.transport;
    this.encrypt = b.encrypt;
    this.qpsPerConnection = b.qpsPerConnection;
    this.timeout = b.timeout;
    this.algo = b.algo;
    this.checkCalls = b.checkCalls;
    this.pythonChannel = b.pythonChannel;
    this.pythonCallBox = b.pythonCallBox;
    this.debug = b.debug;
    this.device = b.device;
    this.idle = b.idle;
    this.idleYieldUs = b.idleYieldUs;
    this.idleCpusPerRank = b.idleCpusPerRank;
    this.cudaResidentUs = b.cudaResidentUs;
    this.cudaBlocks = b.cudaBlocks;
    this.llMaxBytes = b.llMaxBytes;
    this.ringProxyMinBytes = b.ringProxyMinBytes;
    this.p2p = b.p2p;
    this.shm = b.shm;
    this.hopLatencyUs = b.hopLatencyUs;
    this.linkGBps = b.linkGBps;
    this.treeHopLatencyUs = b.treeHopLatencyUs;
    this.spinHopLatencyUs = b.spinHopLatencyUs;
    this.spinLinkGBps = b.spinLinkGBps;
    this.spinTreeHopLatencyUs = b.spinTreeHopLatencyUs;
    this.shmHopLatencyUs = b.shmHopLatencyUs;
    this.shmLinkGBps = b.shmLinkGBps;
    this.shmTreeHopLatencyUs = b.shmTreeHopLatencyUs;
  }

  /** A builder holding every default. */
  public static Builder builder() {
    return new Builder();
  }

  /** The defaults, overridden by {@code sparkccl.*} system properties and {@code SPARKCCL_*}. */
  public static CclConfig fromEnvironment() {
    return fromLookup(
        key -> {
          String v = System.getProperty(key.systemProperty());
          return v != null ? v : System.getenv(key.environmentVariable());
        });
  }

  /**
   * The defaults, overridden by entries of {@code values} keyed by {@link Key#key()}; other entries
   * are ignored.
   *
   * @throws IllegalArgumentException naming the key for a bad value
   */
  public static CclConfig fromMap(Map<String, String> values) {
    return fromLookup(key -> values.get(key.key()));
  }

  private static CclConfig fromLookup(Function<Key, String> lookup) {
    Builder b = builder();
    for (Key key : Key.values()) {
      String v = lookup.apply(key);
      if (v != null && !v.isBlank()) {
        b.set(key, v);
      }
    }
    return b.build();
  }

  public int buffSize() {
    return buffSize;
  }

  /** Bytes of one FIFO slot: {@code buffSize / FifoLayout.STEPS}. */
  public int stepSize() {
    return buffSize / FifoLayout.STEPS;
  }

  /**
   * {@link #nChannels()} for {@code nChannels=auto}: a communicator resolves it, with every rank,
   * before it makes its channels; {@code Communicator.config()} then holds the count it chose.
   */
  public static final int CHANNELS_AUTO = -1;

  /** Parallel rings (key {@code nChannels}), or {@link #CHANNELS_AUTO}. */
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

  /** The {@code socket.ifname} pattern, or {@code null} when unset. */
  public String socketIfname() {
    return socketIfname;
  }

  public Duration timeout() {
    return timeout;
  }

  public Transport transport() {
    return transport;
  }

  /** Whether data connections encrypt what they carry; only the socket transport does. */
  public boolean encrypt() {
    return encrypt;
  }

  /** UCX endpoints per ring connection. */
  public int qpsPerConnection() {
    return qpsPerConnection;
  }

  public Algorithm algo() {
    return algo;
  }

  /** Whether ranks compare their collective calls (the mismatch check). */
  public boolean checkCalls() {
    return checkCalls;
  }

  /** Whether the Spark plugin serves its executors' Python workers ({@code python.channel}). */
  public boolean pythonChannel() {
    return pythonChannel;
  }

  /**
   * Whether Python workers whose communicators spin call through a shared call box ({@code
   * python.callBox}).
   */
  public boolean pythonCallBox() {
    return pythonCallBox;
  }

  /** The engine's log level, or {@code null} to leave it to the logging configuration. */
  public LogLevel debug() {
    return debug;
  }

  public DeviceSpec device() {
    return device;
  }

  public IdleMode idle() {
    return idle;
  }

  /**
   * Microseconds a GPU channel kernel waits resident for the next collective; 0: one launch per
   * collective.
   */
  public int cudaResidentUs() {
    return cudaResidentUs;
  }

  /** CUDA blocks per channel; 0: chosen from the ring's edges and the GPU's SMs. */
  public int cudaBlocks() {
    return cudaBlocks;
  }

  /**
   * The largest message per edge that takes the LL protocol on the shared-memory edges this rank
   * receives on (key {@code ll.maxBytes}); 0: none.
   */
  public int llMaxBytes() {
    return llMaxBytes;
  }

  /**
   * {@link #ringProxyMinBytes()} for {@code ring.proxyMinBytes=auto}: the communicator chooses,
   * from whether its ranks spin and where its ring runs.
   */
  public static final long RING_PROXY_AUTO = -1;

  /**
   * The smallest ring collective, in bytes, whose transfers the proxy thread moves alone (key
   * {@code ring.proxyMinBytes}); 0: none; {@link #RING_PROXY_AUTO}: the communicator chooses.
   */
  public long ringProxyMinBytes() {
    return ringProxyMinBytes;
  }

  /** Whether ranks of one host may write into each other's GPU memory (key {@code p2p}). */
  public boolean p2p() {
    return p2p;
  }

  /**
   * Whether ranks of one host pass point-to-point messages through shared memory (key {@code shm}).
   */
  public boolean shm() {
    return shm;
  }

  /** Microseconds a waiting thread yields before it blocks. */
  public int idleYieldUs() {
    return idleYieldUs;
  }

  /** Cores each rank may keep busy for {@code idle=auto}; 0 when only the JVM's count limits. */
  public int idleCpusPerRank() {
    return idleCpusPerRank;
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

  /** {@link #hopLatencyUs} where the communicator's threads spin. */
  public double spinHopLatencyUs() {
    return spinHopLatencyUs;
  }

  /** {@link #treeHopLatencyUs} where the communicator's threads spin. */
  public double spinTreeHopLatencyUs() {
    return spinTreeHopLatencyUs;
  }

  /** {@link #linkGBps} where the communicator's threads spin. */
  public double spinLinkGBps() {
    return spinLinkGBps;
  }

  /** {@link #hopLatencyUs} where every edge lies in shared memory. */
  public double shmHopLatencyUs() {
    return shmHopLatencyUs;
  }

  /** {@link #treeHopLatencyUs} where every edge lies in shared memory. */
  public double shmTreeHopLatencyUs() {
    return shmTreeHopLatencyUs;
  }

  /** {@link #linkGBps} where every edge lies in shared memory. */
  public double shmLinkGBps() {
    return shmLinkGBps;
  }

  public Builder toBuilder() {
    return new Builder(this);
  }

  /** Key to value as text, in {@link Key} order; what INFO logs print. */
  public Map<String, String> asMap() {
    Map<String, String> m = new LinkedHashMap<>();
    for (Key key : Key.values()) {
      m.put(key.key(), valueText(key));
    }
    return m;
  }

  private String valueText(Key key) {
    return switch (key) {
      case BUFF_SIZE -> Integer.toString(buffSize);
      case N_CHANNELS -> nChannels == CHANNELS_AUTO ? "auto" : Integer.toString(nChannels);
      case SOCKET_N_THREADS -> Integer.toString(socketThreads);
      case SOCKET_N_SOCKS_PER_THREAD -> Integer.toString(socketsPerThread);
      case SOCKET_HOST -> socketHost == null ? "auto" : socketHost;
      case SOCKET_IFNAME -> socketIfname == null ? "auto" : socketIfname;
      case TRANSPORT -> transport.toString();
      case ENCRYPT -> Boolean.toString(encrypt);
      case P2P -> p2p ? "auto" : "off";
      case SHM -> shm ? "auto" : "off";
      case IB_QPS_PER_CONNECTION -> Integer.toString(qpsPerConnection);
      case TIMEOUT -> timeout.toMillis() + "ms";
      case ALGO -> algo.toString();
      case CHECK_CALLS -> Boolean.toString(checkCalls);
      case PYTHON_CHANNEL -> Boolean.toString(pythonChannel);
      case PYTHON_CALL_BOX -> Boolean.toString(pythonCallBox);
      case DEBUG -> debug == null ? "unset" : debug.toString();
      case DEVICE -> device.toString();
      case IDLE -> idle.toString();
      case IDLE_YIELD_US -> Integer.toString(idleYieldUs);
      case IDLE_CPUS_PER_RANK -> Integer.toString(idleCpusPerRank);
      case CUDA_RESIDENT_US -> Integer.toString(cudaResidentUs);
      case CUDA_BLOCKS -> Integer.toString(cudaBlocks);
      case LL_MAX_BYTES -> Integer.toString(llMaxBytes);
      case RING_PROXY_MIN_BYTES ->
          ringProxyMinBytes == RING_PROXY_AUTO ? "auto" : Long.toString(ringProxyMinBytes);
      case TUNER_HOP_LATENCY_US -> Double.toString(hopLatencyUs);
      case TUNER_LINK_GBPS -> Double.toString(linkGBps);
      case TUNER_TREE_HOP_LATENCY_US -> Double.toString(treeHopLatencyUs);
      case TUNER_SPIN_HOP_LATENCY_US -> Double.toString(spinHopLatencyUs);
      case TUNER_SPIN_LINK_GBPS -> Double.toString(spinLinkGBps);
      case TUNER_SPIN_TREE_HOP_LATENCY_US -> Double.toString(spinTreeHopLatencyUs);
      case TUNER_SHM_HOP_LATENCY_US -> Double.toString(shmHopLatencyUs);
      case TUNER_SHM_LINK_GBPS -> Double.toString(shmLinkGBps);
      case TUNER_SHM_TREE_HOP_LATENCY_US -> Double.toString(shmTreeHopLatencyUs);
    };
  }

  @Override
  public String toString() {
    return asMap().toString();
  }

  /** Fluent builder; {@link #build()} validates every value at once. */
  public static final class Builder {
    private int buffSize;
    private int nChannels;
    private int socketThreads;
    private int socketsPerThread;
    private String socketHost;
    private String socketIfname;
    private Transport transport;
    private boolean encrypt;
    private int qpsPerConnection;
    private Duration timeout;
    private Algorithm algo;
    private boolean checkCalls;
    private boolean pythonChannel;
    private boolean pythonCallBox;
    private LogLevel debug;
    private DeviceSpec device;
    private IdleMode idle;
    private boolean p2p;
    private boolean shm;
    private int idleYieldUs;
    private int idleCpusPerRank;
    private int cudaResidentUs;
    private int cudaBlocks;
    private int llMaxBytes;
    private long ringProxyMinBytes;
    private double hopLatencyUs;
    private double linkGBps;
    private double treeHopLatencyUs;
    private double spinHopLatencyUs;
    private double spinLinkGBps;
    private double spinTreeHopLatencyUs;
    private double shmHopLatencyUs;
    private double shmLinkGBps;
    private double shmTreeHopLatencyUs;

    private Builder() {
      for (Key key : Key.values()) {
        if (key.defaultValue() != null) {
          set(key, key.defaultValue());
        }
      }
    }

    private Builder(CclConfig c) {
      buffSize = c.buffSize;
      nChannels = c.nChannels;
      socketThreads = c.socketThreads;
      socketsPerThread = c.socketsPerThread;
      socketHost = c.socketHost;
      socketIfname = c.socketIfname;
      transport = c.transport;
      encrypt = c.encrypt;
      qpsPerConnection = c.qpsPerConnection;
      timeout = c.timeout;
      algo = c.algo;
      checkCalls = c.checkCalls;
      pythonChannel = c.pythonChannel;
      pythonCallBox = c.pythonCallBox;
      debug = c.debug;
      device = c.device;
      idle = c.idle;
      p2p = c.p2p;
      shm = c.shm;
      idleYieldUs = c.idleYieldUs;
      idleCpusPerRank = c.idleCpusPerRank;
      cudaResidentUs = c.cudaResidentUs;
      cudaBlocks = c.cudaBlocks;
      llMaxBytes = c.llMaxBytes;
      ringProxyMinBytes = c.ringProxyMinBytes;
      hopLatencyUs = c.hopLatencyUs;
      linkGBps = c.linkGBps;
      treeHopLatencyUs = c.treeHopLatencyUs;
      spinHopLatencyUs = c.spinHopLatencyUs;
      spinLinkGBps = c.spinLinkGBps;
      spinTreeHopLatencyUs = c.spinTreeHopLatencyUs;
      shmHopLatencyUs = c.shmHopLatencyUs;
      shmLinkGBps = c.shmLinkGBps;
      shmTreeHopLatencyUs = c.shmTreeHopLatencyUs;
    }

    /**
     * Sets {@code key} from its text form, as found in a system property, the environment or a
     * Spark conf.
     *
     * @throws IllegalArgumentException naming the key when the text does not parse
     */
    public Builder set(Key key, String text) {
      String k = key.key();
      return switch (key) {
        case BUFF_SIZE -> buffSize(intBytes(k, text));
        case N_CHANNELS ->
            nChannels(
                autoOr(
                    k,
                    text,
                    CHANNELS_AUTO,
                    t -> Values.integer(k, t),
                    "a count",
                    "auto or 1.." + Key.MAX_CHANNELS));
        case SOCKET_N_THREADS -> socketThreads(Values.integer(k, text));
        case SOCKET_N_SOCKS_PER_THREAD -> socketsPerThread(Values.integer(k, text));
        case SOCKET_HOST -> socketHost(text.trim());
        case SOCKET_IFNAME -> socketIfname(text.trim());
        case TRANSPORT -> transport(Values.choice(k, text, Transport.values()));
        case ENCRYPT -> encrypt(Values.bool(k, text));
        case P2P -> p2p(Values.choice(k, text, AutoOff.values()) == AutoOff.AUTO);
        case SHM -> shm(Values.choice(k, text, AutoOff.values()) == AutoOff.AUTO);
        case IB_QPS_PER_CONNECTION -> qpsPerConnection(Values.integer(k, text));
        case TIMEOUT -> timeout(Values.duration(k, text));
        case ALGO -> algo(Values.choice(k, text, Algorithm.values()));
        case CHECK_CALLS -> checkCalls(Values.bool(k, text));
        case PYTHON_CHANNEL -> pythonChannel(Values.bool(k, text));
        case PYTHON_CALL_BOX -> pythonCallBox(Values.bool(k, text));
        case DEBUG -> debug(Values.choice(k, text, LogLevel.values()));
        case DEVICE -> device(DeviceSpec.parse(text));
        case IDLE -> idle(Values.choice(k, text, IdleMode.values()));
        case IDLE_YIELD_US -> idleYieldUs(Values.integer(k, text));
        case IDLE_CPUS_PER_RANK -> idleCpusPerRank(Values.integer(k, text));
        case CUDA_RESIDENT_US -> cudaResidentUs(Values.integer(k, text));
        case CUDA_BLOCKS -> cudaBlocks(Values.integer(k, text));
        case LL_MAX_BYTES -> llMaxBytes(intBytes(k, text));
        case RING_PROXY_MIN_BYTES ->
            ringProxyMinBytes(
                autoOr(
                    k,
                    text,
                    RING_PROXY_AUTO,
                    t -> Values.bytes(k, t),
                    "a byte size",
                    "auto, 0 (off) or e.g. 512K"));
        case TUNER_HOP_LATENCY_US -> hopLatencyUs(Values.decimal(k, text));
        case TUNER_LINK_GBPS -> linkGBps(Values.decimal(k, text));
        case TUNER_TREE_HOP_LATENCY_US -> treeHopLatencyUs(Values.decimal(k, text));
        case TUNER_SPIN_HOP_LATENCY_US -> spinHopLatencyUs(Values.decimal(k, text));
        case TUNER_SPIN_LINK_GBPS -> spinLinkGBps(Values.decimal(k, text));
        case TUNER_SPIN_TREE_HOP_LATENCY_US -> spinTreeHopLatencyUs(Values.decimal(k, text));
        case TUNER_SHM_HOP_LATENCY_US -> shmHopLatencyUs(Values.decimal(k, text));
        case TUNER_SHM_LINK_GBPS -> shmLinkGBps(Values.decimal(k, text));
        case TUNER_SHM_TREE_HOP_LATENCY_US -> shmTreeHopLatencyUs(Values.decimal(k, text));
      };
    }

    /**
     * The text {@code auto} as the value {@code auto}, or what {@code parse} reads; a text that is
     * neither fails naming {@code what} else it may be and the values {@code expected}.
     */
    private static <T> T autoOr(
        String key, String text, T auto, Function<String, T> parse, String what, String expected) {
      if (text.trim().equalsIgnoreCase("auto")) {
        return auto;
      }
      try {
        return parse.apply(text);
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException(
            key + "=" + text + " is not auto or " + what + "; expected " + expected, e);
      }
    }

    private static int intBytes(String key, String text) {
      long bytes = Values.bytes(key, text);
      if (bytes > Integer.MAX_VALUE) {
        throw new IllegalArgumentException(key + "=" + text + " is too large; expected at most 1G");
      }
      return (int) bytes;
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

    /**
     * The interfaces the listening address may come from ({@code eth,ib}, {@code ^docker,lo},
     * {@code =eth0}); {@code null} takes the bootstrap's address. {@code socketHost} wins over it.
     */
    public Builder socketIfname(String v) {
      socketIfname = v == null || v.isEmpty() ? null : v;
      return this;
    }

    public Builder transport(Transport v) {
      transport = v;
      return this;
    }

    /** Encrypts data connections (socket transport only). */
    public Builder encrypt(boolean v) {
      encrypt = v;
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

    public Builder algo(Algorithm v) {
      algo = v;
      return this;
    }

    /** {@code false} turns the mismatch check off (to measure its cost). */
    public Builder checkCalls(boolean v) {
      checkCalls = v;
      return this;
    }

    /** {@code false}: the Spark plugin serves no Python workers. */
    public Builder pythonChannel(boolean v) {
      pythonChannel = v;
      return this;
    }

    /** {@code false}: Python workers always call through the socket. */
    public Builder pythonCallBox(boolean v) {
      pythonCallBox = v;
      return this;
    }

    /** {@code null} leaves the engine's level to the logging configuration. */
    public Builder debug(LogLevel v) {
      debug = v;
      return this;
    }

    public Builder device(DeviceSpec v) {
      device = v;
      return this;
    }

    /** {@code true}: {@code p2p=auto}; {@code false}: {@code p2p=off}. */
    public Builder p2p(boolean v) {
      p2p = v;
      return this;
    }

    /** {@code true}: {@code shm=auto}; {@code false}: {@code shm=off}. */
    public Builder shm(boolean v) {
      shm = v;
      return this;
    }

    public Builder idle(IdleMode v) {
      idle = v;
      return this;
    }

    public Builder cudaResidentUs(int v) {
      cudaResidentUs = v;
      return this;
    }

    /** CUDA blocks per channel, 0 for automatic. */
    public Builder cudaBlocks(int v) {
      cudaBlocks = v;
      return this;
    }

    /** The largest message per edge under the LL protocol; 0 for none. */
    public Builder llMaxBytes(int v) {
      llMaxBytes = v;
      return this;
    }

    /**
     * The smallest ring collective whose transfers the proxy moves alone; 0 for none, {@link
     * #RING_PROXY_AUTO} for the communicator's choice.
     */
    public Builder ringProxyMinBytes(long v) {
      ringProxyMinBytes = v;
      return this;
    }

    public Builder idleYieldUs(int v) {
      idleYieldUs = v;
      return this;
    }

    /** Cores each rank may keep busy for {@code idle=auto}; the Spark plugin sets it. */
    public Builder idleCpusPerRank(int v) {
      idleCpusPerRank = v;
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

    public Builder treeHopLatencyUs(double v) {
      treeHopLatencyUs = v;
      return this;
    }

    public Builder spinHopLatencyUs(double v) {
      spinHopLatencyUs = v;
      return this;
    }

    public Builder spinLinkGBps(double v) {
      spinLinkGBps = v;
      return this;
    }

    public Builder spinTreeHopLatencyUs(double v) {
      spinTreeHopLatencyUs = v;
      return this;
    }

    public Builder shmHopLatencyUs(double v) {
      shmHopLatencyUs = v;
      return this;
    }

    public Builder shmLinkGBps(double v) {
      shmLinkGBps = v;
      return this;
    }

    public Builder shmTreeHopLatencyUs(double v) {
      shmTreeHopLatencyUs = v;
      return this;
    }

    /** Checks every value; the message names the key, the value and what was expected. */
    public CclConfig build() {
      int steps = FifoLayout.STEPS;
      int minBuff = steps * Key.MIN_STEP_SIZE;
      if (buffSize < minBuff || buffSize % (steps * 64) != 0) {
        throw invalid(
            Key.BUFF_SIZE, buffSize, "at least " + minBuff + " and a multiple of " + (steps * 64));
      }
      if ((nChannels < 1 && nChannels != CHANNELS_AUTO) || nChannels > Key.MAX_CHANNELS) {
        throw invalid(Key.N_CHANNELS, nChannels, "auto or 1.." + Key.MAX_CHANNELS);
      }
      if (socketThreads < 0 || socketThreads > Key.MAX_SOCKET_THREADS) {
        throw invalid(Key.SOCKET_N_THREADS, socketThreads, "0.." + Key.MAX_SOCKET_THREADS);
      }
      if (socketsPerThread < 1 || socketThreads * socketsPerThread > Key.MAX_SOCKETS) {
        throw invalid(
            Key.SOCKET_N_SOCKS_PER_THREAD,
            socketsPerThread,
            "at least 1 and "
                + Key.SOCKET_N_THREADS
                + " x "
                + Key.SOCKET_N_SOCKS_PER_THREAD
                + " <= "
                + Key.MAX_SOCKETS);
      }
      if (qpsPerConnection < 1 || qpsPerConnection > Key.MAX_QPS_PER_CONNECTION) {
        throw invalid(
            Key.IB_QPS_PER_CONNECTION, qpsPerConnection, "1.." + Key.MAX_QPS_PER_CONNECTION);
      }
      if (timeout == null || timeout.isZero() || timeout.isNegative()) {
        throw invalid(Key.TIMEOUT, timeout, "a positive duration");
      }
      if (idleYieldUs < 0 || idleYieldUs > Key.MAX_IDLE_YIELD_US) {
        throw invalid(Key.IDLE_YIELD_US, idleYieldUs, "0.." + Key.MAX_IDLE_YIELD_US);
      }
      if (cudaResidentUs < 0 || cudaResidentUs > Key.MAX_CUDA_RESIDENT_US) {
        throw invalid(Key.CUDA_RESIDENT_US, cudaResidentUs, "0.." + Key.MAX_CUDA_RESIDENT_US);
      }
      if (cudaBlocks < 0 || cudaBlocks > Key.MAX_CUDA_BLOCKS) {
        throw invalid(Key.CUDA_BLOCKS, cudaBlocks, "0 (automatic).." + Key.MAX_CUDA_BLOCKS);
      }
      if (llMaxBytes < 0 || llMaxBytes > Key.MAX_LL_BYTES) {
        throw invalid(Key.LL_MAX_BYTES, llMaxBytes, "0 (off).." + Key.MAX_LL_BYTES);
      }
      if (ringProxyMinBytes < 0 && ringProxyMinBytes != RING_PROXY_AUTO) {
        throw invalid(Key.RING_PROXY_MIN_BYTES, ringProxyMinBytes, "auto, 0 (off) or more bytes");
      }
      if (idleCpusPerRank < 0) {
        throw invalid(Key.IDLE_CPUS_PER_RANK, idleCpusPerRank, "0 or more");
      }
      positive(Key.TUNER_HOP_LATENCY_US, hopLatencyUs);
      positive(Key.TUNER_LINK_GBPS, linkGBps);
      positive(Key.TUNER_TREE_HOP_LATENCY_US, treeHopLatencyUs);
      positive(Key.TUNER_SPIN_HOP_LATENCY_US, spinHopLatencyUs);
      positive(Key.TUNER_SPIN_LINK_GBPS, spinLinkGBps);
      positive(Key.TUNER_SPIN_TREE_HOP_LATENCY_US, spinTreeHopLatencyUs);
      positive(Key.TUNER_SHM_HOP_LATENCY_US, shmHopLatencyUs);
      positive(Key.TUNER_SHM_LINK_GBPS, shmLinkGBps);
      positive(Key.TUNER_SHM_TREE_HOP_LATENCY_US, shmTreeHopLatencyUs);
      Objects.requireNonNull(transport, Key.TRANSPORT.key());
      Objects.requireNonNull(algo, Key.ALGO.key());
      Objects.requireNonNull(device, Key.DEVICE.key());
      Objects.requireNonNull(idle, Key.IDLE.key());
      return new CclConfig(this);
    }

    /** A tuner constant: a cost or a bandwidth, above zero (NaN fails too). */
    private static void positive(Key key, double value) {
      if (!(value > 0)) {
        throw invalid(key, value, "a positive number");
      }
    }

    private static IllegalArgumentException invalid(Key key, Object value, String expected) {
      return new IllegalArgumentException(key + "=" + value + " is invalid; expected " + expected);
    }
  }

  /** The two values of {@code p2p} and {@code shm}. */
  private enum AutoOff {
    AUTO,
    OFF
  }
}
