package org.sparkccl.device.cuda;

import static jcuda.driver.JCudaDriver.cuModuleGetFunction;
import static jcuda.driver.JCudaDriver.cuModuleLoadData;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.TimeUnit;
import jcuda.driver.CUfunction;
import jcuda.driver.CUmodule;
import org.apache.logging.log4j.Logger;
import org.sparkccl.util.EngineLog;

/**
 * The engine's CUDA kernels ({@code src/main/cuda/sparkccl_kernels.cu}, shipped in the jar),
 * compiled for the device with {@code nvcc} at first use and cached, then loaded with {@code
 * cuModuleLoadData}. NVRTC is not used: JCuda 12.6 links {@code libnvrtc.so.12}, which CUDA 13
 * machines lack.
 *
 * <p>The binary holds machine code for the device and PTX, so a newer GPU still loads it. Where it
 * is found:
 *
 * <ol>
 *   <li>{@code sparkccl.cuda.module} / {@code SPARKCCL_CUDA_MODULE}: a fatbin, cubin or PTX file
 *       built beforehand (for machines without {@code nvcc});
 *   <li>the cache, {@code sparkccl.cuda.cache} / {@code SPARKCCL_CUDA_CACHE} (default {@code
 *       ~/.cache/sparkccl}), keyed by the source's hash and the device's architecture;
 *   <li>otherwise {@code nvcc} from {@code CUDA_HOME/bin}, the {@code PATH} or {@code
 *       /usr/local/cuda/bin} compiles it into the cache.
 * </ol>
 */
public final class CudaKernels {
  private static final Logger LOG = EngineLog.logger(CudaKernels.class);
  static final String SOURCE = "/cuda/sparkccl_kernels.cu";

  private final CUmodule module = new CUmodule();
  private final CUfunction channelKernel = new CUfunction();
  private final CUfunction reduceKernel = new CUfunction();
  private final CUfunction residentKernel = new CUfunction();

  private CudaKernels(byte[] image) {
    byte[] terminated = image;
    if (image.length == 0 || image[image.length - 1] != 0) {
      // PTX is loaded as a C string
      terminated = java.util.Arrays.copyOf(image, image.length + 1);
    }
    cuModuleLoadData(module, terminated);
    cuModuleGetFunction(channelKernel, module, "channelKernel");
    cuModuleGetFunction(reduceKernel, module, "reduceKernel");
    cuModuleGetFunction(residentKernel, module, "residentKernel");
  }

  static CudaKernels load(CudaDevice device) {
    device.makeCurrent();
    try {
      return new CudaKernels(Files.readAllBytes(binary(device.computeCapability())));
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read the CUDA kernels: " + e.getMessage(), e);
    }
  }

  /** One block per channel runs a collective's primitive sequence over the FIFOs. */
  public CUfunction channelKernel() {
    return channelKernel;
  }

  /** One block per channel that stays on the GPU and runs each plan posted to its mailbox. */
  public CUfunction residentKernel() {
    return residentKernel;
  }

  /** {@code out = a op b} over a whole buffer: the reduction alone, for the benchmark. */
  public CUfunction reduceKernel() {
    return reduceKernel;
  }

  private static Path binary(int arch) throws IOException {
    String given = setting("sparkccl.cuda.module", "SPARKCCL_CUDA_MODULE");
    if (given != null) {
      return Path.of(given);
    }
    byte[] source = source();
    String cacheDir = setting("sparkccl.cuda.cache", "SPARKCCL_CUDA_CACHE");
    Path cache =
        cacheDir != null
            ? Path.of(cacheDir)
            : Path.of(System.getProperty("user.home"), ".cache", "sparkccl");
    Path out = cache.resolve("kernels-" + hash(source) + "-sm_" + arch + ".fatbin");
    if (Files.isRegularFile(out)) {
      return out;
    }
    Files.createDirectories(cache);
    Path src = Files.createTempFile(cache, "sparkccl_kernels", ".cu");
    Path tmp = Files.createTempFile(cache, "sparkccl_kernels", ".fatbin");
    try {
      Files.write(src, source);
      compile(src, tmp, arch);
      Files.move(tmp, out, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    } finally {
      Files.deleteIfExists(src);
      Files.deleteIfExists(tmp);
    }
    return out;
  }

  private static void compile(Path src, Path out, int arch) throws IOException {
    String nvcc = findNvcc();
    List<String> cmd = new ArrayList<>();
    cmd.add(nvcc);
    cmd.addAll(List.of("-fatbin", "-O3", "-std=c++17"));
    cmd.add("-gencode=arch=compute_" + arch + ",code=[sm_" + arch + ",compute_" + arch + "]");
    cmd.addAll(List.of("-o", out.toString(), src.toString()));
    LOG.info("compiling the CUDA kernels: {}", String.join(" ", cmd));
    long t0 = System.nanoTime();
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    try {
      if (!p.waitFor(10, TimeUnit.MINUTES) || p.exitValue() != 0) {
        p.destroyForcibly();
        throw new IllegalStateException("nvcc failed: " + String.join(" ", cmd) + "\n" + output);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      p.destroyForcibly();
      throw new IllegalStateException("interrupted while compiling the CUDA kernels", e);
    }
    LOG.info("compiled the CUDA kernels in {} ms", (System.nanoTime() - t0) / 1_000_000);
  }

  private static String findNvcc() {
    List<Path> candidates = new ArrayList<>();
    String home = System.getenv("CUDA_HOME");
    if (home != null) {
      candidates.add(Path.of(home, "bin", "nvcc"));
    }
    String path = System.getenv("PATH");
    if (path != null) {
      for (String dir : path.split(java.io.File.pathSeparator)) {
        if (!dir.isEmpty()) {
          candidates.add(Path.of(dir, "nvcc"));
        }
      }
    }
    candidates.add(Path.of("/usr/local/cuda/bin/nvcc"));
    for (Path c : candidates) {
      if (Files.isExecutable(c)) {
        return c.toString();
      }
    }
    throw new CudaUnavailableException(
        "no nvcc to compile the kernels (looked in CUDA_HOME/bin, PATH, /usr/local/cuda/bin);"
            + " install the CUDA toolkit or set SPARKCCL_CUDA_MODULE to a prebuilt fatbin");
  }

  /** The kernel source from the jar. */
  static byte[] source() throws IOException {
    try (InputStream in = CudaKernels.class.getResourceAsStream(SOURCE)) {
      if (in == null) {
        throw new IOException(SOURCE + " is not on the class path");
      }
      return in.readAllBytes();
    }
  }

  private static String hash(byte[] source) {
    try {
      byte[] d = MessageDigest.getInstance("SHA-256").digest(source);
      return HexFormat.of().formatHex(d, 0, 8);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  private static String setting(String property, String env) {
    String v = System.getProperty(property);
    return v != null ? v : System.getenv(env);
  }
}
