package org.sparkccl;

import java.io.File;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.sparkccl.bootstrap.TcpBootstrap;
import org.sparkccl.bootstrap.TcpBootstrapRoot;
import org.sparkccl.config.CclConfig;
import org.sparkccl.device.DeviceBuffer;
import org.sparkccl.device.cuda.CudaBackend;

/**
 * GPU ranks as processes, run by {@code bench/gpu/run.sh}: {@code n} rank JVMs meet through the TCP
 * bootstrap, rank r on GPU {@code r mod (GPUs)}, and run allReduces of random inputs over several
 * dtypes, ops and counts on GPU memory, each checked against the host {@link Reference}; then every
 * rank hashes its result bytes and the ranks compare hashes, so every rank must hold bit-identical
 * results. The ring transport comes from the environment ({@code SPARKCCL_TRANSPORT}, {@code
 * SPARKCCL_P2P}); {@code mix} gives the upper half of the ranks another host name, so the ring
 * mixes direct edges with network ones. Each rank prints the ring transport it got.
 *
 * <pre>
 * java -cp ... org.sparkccl.GpuProcessMain N [mix]
 * </pre>
 */
public final class GpuProcessMain {
  private static final Duration WAIT = Duration.ofSeconds(60);

  private GpuProcessMain() {}

  public static void main(String[] args) throws Exception {
    if (args.length >= 3 && args[0].equals("--rank")) {
      System.exit(rank(args[1], Integer.parseInt(args[2]), Integer.parseInt(args[3])));
    }
    CudaBackend.Status status = CudaBackend.status();
    if (!status.available()) {
      System.out.println("GPU processes: CUDA backend unavailable: " + status.reason());
      System.exit(2);
    }
    int n = Integer.parseInt(args[0]);
    boolean mix = args.length > 1 && args[1].equals("mix");
    System.exit(launch(n, mix, status.deviceCount()));
  }

  private static int launch(int n, boolean mix, int gpus) throws IOException, InterruptedException {
    String java =
        System.getProperty("java.home") + File.separator + "bin" + File.separator + "java";
    List<Process> procs = new ArrayList<>();
    try (TcpBootstrapRoot root = TcpBootstrapRoot.start("127.0.0.1", n)) {
      for (int r = 0; r < n; r++) {
        List<String> cmd = new ArrayList<>(List.of(java, "-Xmx2g", "-XX:MaxDirectMemorySize=2g"));
        for (Map.Entry<Object, Object> p : System.getProperties().entrySet()) {
          String k = p.getKey().toString();
          if (k.startsWith("sparkccl.") || k.startsWith("org.apache.logging")) {
            cmd.add("-D" + k + "=" + p.getValue());
          }
        }
        cmd.add("-Dsparkccl.device=cuda:" + (r % gpus));
        if (mix) {
          cmd.add("-Dsparkccl.hostIdentity=" + (r < (n + 1) / 2 ? "lower" : "upper"));
        }
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path")));
        cmd.addAll(
            List.of(
                GpuProcessMain.class.getName(),
                "--rank",
                root.address(),
                Integer.toString(r),
                Integer.toString(n)));
        procs.add(new ProcessBuilder(cmd).inheritIO().start());
      }
      int worst = 0;
      for (int r = 0; r < n; r++) {
        Process p = procs.get(r);
        if (!p.waitFor(140, TimeUnit.SECONDS)) {
          System.out.println("FAILED: rank " + r + " still running after 140 s");
          worst = 1;
          break;
        }
        worst = Math.max(worst, p.exitValue());
      }
      System.out.println(
          "GPU processes n=" + n + (mix ? " mixed" : "") + ": " + (worst == 0 ? "OK" : "FAILED"));
      return worst;
    } finally {
      procs.forEach(Process::destroyForcibly);
    }
  }

  private static int rank(String root, int rank, int n) {
    CclConfig config =
        CclConfig.fromEnvironment().toBuilder()
            .buffSize(1 << 20)
            .nChannels(2)
            .timeout(WAIT)
            .build();
    try (TcpBootstrap boot = TcpBootstrap.connect(root, rank, n, WAIT);
        Communicator comm = Communicator.create(boot, config)) {
      System.out.println(
          "rank " + rank + " on " + comm.device() + ": ring transport " + comm.ringTransport());
      Object[][] cases = {
        {DataType.FLOAT32, ReduceOp.SUM, 1003},
        {DataType.FLOAT32, ReduceOp.SUM, 3_000_017},
        {DataType.BFLOAT16, ReduceOp.MAX, 7},
        {DataType.FLOAT64, ReduceOp.AVG, 300_007},
        {DataType.INT64, ReduceOp.SUM, 500_001},
        {DataType.FLOAT16, ReduceOp.SUM, 1},
        {DataType.UINT8, ReduceOp.PROD, 200_003},
        {DataType.FLOAT32, ReduceOp.MIN, 1_048_576},
      };
      for (int k = 0; k < cases.length; k++) {
        DataType t = (DataType) cases[k][0];
        ReduceOp op = (ReduceOp) cases[k][1];
        int count = (int) cases[k][2];
        String what = "rank " + rank + ": " + t + " " + op + " count=" + count;
        ByteBuffer[] inputs = new ByteBuffer[n];
        for (int r = 0; r < n; r++) {
          inputs[r] = Reference.heap(count * t.size());
          Reference.fill(
              inputs[r], count, t, new SplittableRandom(91L * k + r), op == ReduceOp.PROD);
        }
        boolean inPlace = k % 2 == 0;
        ByteBuffer got = Reference.heap(count * t.size());
        try (DeviceBuffer send = comm.device().allocate((long) count * t.size());
            DeviceBuffer other = inPlace ? null : comm.device().allocate((long) count * t.size())) {
          DeviceBuffer recv = inPlace ? send : other;
          send.copyFromHost(inputs[rank].duplicate().order(ByteOrder.nativeOrder()), 0);
          comm.allReduce(send, recv, count, t, op);
          recv.copyToHost(0, got);
        }
        String m = Reference.allReduce(inputs, count, t, op).mismatches(got);
        if (m != null) {
          System.out.println("FAILED: " + what + ": " + m);
          return 1;
        }
        byte[][] hashes = boot.allGather(sha256(got), WAIT);
        for (int r = 0; r < n; r++) {
          if (!Arrays.equals(hashes[r], hashes[0])) {
            System.out.println("FAILED: " + what + ": rank " + r + " holds other bits than rank 0");
            return 1;
          }
        }
      }
      System.out.println("rank " + rank + ": OK");
      return 0;
    } catch (RuntimeException e) {
      System.out.println("FAILED: rank " + rank + ": " + e);
      e.printStackTrace(System.out);
      return 1;
    }
  }

  private static byte[] sha256(ByteBuffer b) {
    try {
      MessageDigest d = MessageDigest.getInstance("SHA-256");
      d.update(b.duplicate().clear());
      return d.digest();
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}
