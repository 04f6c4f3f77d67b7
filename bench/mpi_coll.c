/*
 * mpi_coll.c - OpenMPI collective baselines for SparkCCL, modelled on
 * nccl-tests (all_reduce_perf, broadcast_perf, reduce_perf, all_gather_perf,
 * reduce_scatter_perf) and following the conventions of bin/sparkccl-perf.
 *
 * Usage: mpirun -np N mpi_coll [-o OP] [-R ROOT] [-b MIN] [-e MAX]
 *                              [-f FACTOR] [-w WARMUP] [-i ITERS] [-d TYPE]
 *                              [-a 0|1] [-c 0|1] [-s SEED] [-T MS]
 *   -o, --op   allreduce (default) | broadcast | reduce | allgather |
 *              reducescatter; calls MPI_Allreduce, MPI_Bcast, MPI_Reduce,
 *              MPI_Allgather, MPI_Reduce_scatter_block
 *   -R, --root root rank of broadcast and reduce (default 0)
 *   -b/-e      min/max size in bytes, suffixes K/M/G (powers of 1024)
 *   -f         multiplication factor between sizes (integer >= 2)
 *   -w/-i      warmup / timed iterations (for sizes <= 1 MiB)
 *   -a 1       adaptive: above 1 MiB, iterations shrink proportionally to the
 *              size (at least 5 timed, 1 warmup) so a 64 MiB sweep stays short
 *   -d         float32 | float64 | int32 | int64
 *   -c 1       check the result once per size (default on)
 *   -s         seed for the input generator (default 42)
 *   -T MS      more timed iterations where the count above would take less
 *              than about MS milliseconds, at the rate the slowest rank saw
 *              in the warm-up (at least one warm-up call; at most 1000000
 *              calls; default 0: the count above), as bin/sparkccl-perf's
 *              --timed-ms
 *
 * Reductions are sums. Conventions (as nccl-tests and bin/sparkccl-perf):
 *   size   bytes of the larger buffer: allgather's output (n x per-rank
 *          input), reducescatter's input (n x per-rank output), otherwise the
 *          one buffer size. For allgather/reducescatter the per-rank count is
 *          (size / sizeof(type)) / n; a size whose per-rank count is 0 is
 *          skipped, and size is rounded down to n x per-rank count.
 *   count  size / sizeof(type)
 *   redop  sum for allreduce/reduce/reducescatter, none otherwise
 *   root   ROOT for broadcast/reduce, -1 otherwise
 *   busbw  algbw x 2(n-1)/n (allreduce), (n-1)/n (allgather, reducescatter),
 *          1 (broadcast, reduce)
 * Output (rank 0), one row per size:
 *   size count type redop root time_us algbw_GBps busbw_GBps wrong
 * time_us is the max over ranks of each rank's average time per call;
 * algbw = size / time (1e9 B/s); wrong is the number of wrong output
 * elements summed over all ranks (reduce: only the root's output is checked;
 * broadcast: the root's data stays in its send buffer, MPI_Bcast being in
 * place). Out-of-place everywhere except broadcast's root.
 */
#include <mpi.h>
#include <ctype.h>
#include <float.h>
#include <getopt.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum { T_F32, T_F64, T_I32, T_I64 } dtype_t;
typedef enum { OP_ALLREDUCE, OP_BROADCAST, OP_REDUCE, OP_ALLGATHER,
               OP_REDUCESCATTER } coll_t;

static const struct {
  const char *name;
  dtype_t t;
  size_t size;
} TYPES[] = {
    {"float32", T_F32, 4}, {"float", T_F32, 4},  {"float64", T_F64, 8},
    {"double", T_F64, 8},  {"int32", T_I32, 4},  {"int", T_I32, 4},
    {"int64", T_I64, 8},
};

static const char *const OPS[] = {"allreduce", "broadcast", "reduce",
                                  "allgather", "reducescatter"};

static MPI_Datatype mpi_type(dtype_t t) {
  switch (t) {
  case T_F32: return MPI_FLOAT;
  case T_F64: return MPI_DOUBLE;
  case T_I32: return MPI_INT32_T;
  default:    return MPI_INT64_T;
  }
}

static int reduces(coll_t op) {
  return op == OP_ALLREDUCE || op == OP_REDUCE || op == OP_REDUCESCATTER;
}
static int rooted(coll_t op) { return op == OP_BROADCAST || op == OP_REDUCE; }
static double bus_factor(coll_t op, int n) {
  switch (op) {
  case OP_ALLREDUCE: return 2.0 * (n - 1) / n;
  case OP_ALLGATHER:
  case OP_REDUCESCATTER: return (double)(n - 1) / n;
  default: return 1.0;
  }
}

static size_t parse_size(const char *s) {
  char *end;
  double v = strtod(s, &end);
  if (end == s || v < 0) return (size_t)-1;
  switch (toupper((unsigned char)*end)) {
  case 'G': v *= 1024.0; /* fall through */
  case 'M': v *= 1024.0; /* fall through */
  case 'K': v *= 1024.0; end++; break;
  case '\0': break;
  default: return (size_t)-1;
  }
  if (toupper((unsigned char)*end) == 'B') end++;
  if (*end != '\0') return (size_t)-1;
  return (size_t)v;
}

/* Counter-based generator: any rank can regenerate any rank's input. */
static inline uint64_t mix64(uint64_t z) {
  z += 0x9E3779B97F4A7C15ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}
static inline uint64_t rnd(uint64_t seed, int rank, size_t i) {
  return mix64(mix64(seed ^ ((uint64_t)rank * 0xD1B54A32D192ED03ULL)) + i);
}
/* Non-zero values: floats in [0.5, 1.5), ints in [1, 64]. */
static inline float gen_f32(uint64_t s, int r, size_t i) {
  return 0.5f + (float)(rnd(s, r, i) >> 40) * (1.0f / 16777216.0f);
}
static inline double gen_f64(uint64_t s, int r, size_t i) {
  return 0.5 + (double)(rnd(s, r, i) >> 11) * (1.0 / 9007199254740992.0);
}
static inline int64_t gen_int(uint64_t s, int r, size_t i) {
  return 1 + (int64_t)(rnd(s, r, i) % 64);
}

/* Element i of rank `rank`'s input. */
static void fill(void *buf, dtype_t t, size_t count, uint64_t seed, int rank) {
  for (size_t i = 0; i < count; i++) {
    switch (t) {
    case T_F32: ((float *)buf)[i] = gen_f32(seed, rank, i); break;
    case T_F64: ((double *)buf)[i] = gen_f64(seed, rank, i); break;
    case T_I32: ((int32_t *)buf)[i] = (int32_t)gen_int(seed, rank, i); break;
    case T_I64: ((int64_t *)buf)[i] = gen_int(seed, rank, i); break;
    }
  }
}

/* Wrong elements of out[0..count) against the sum over all ranks of input
 * elements off + i. */
static long long check_sum(const void *out, dtype_t t, size_t count,
                           size_t off, uint64_t seed, int nranks) {
  long long wrong = 0;
  for (size_t i = 0; i < count; i++) {
    size_t j = off + i;
    if (t == T_F32 || t == T_F64) {
      long double ref = 0;
      for (int r = 0; r < nranks; r++)
        ref += (t == T_F32) ? (long double)gen_f32(seed, r, j)
                            : (long double)gen_f64(seed, r, j);
      double got = (t == T_F32) ? (double)((const float *)out)[i]
                                : ((const double *)out)[i];
      double eps = (t == T_F32) ? FLT_EPSILON : DBL_EPSILON;
      double tol = 2.0 * nranks * eps * fabs((double)ref);
      if (!(fabs(got - (double)ref) <= tol)) wrong++; /* catches NaN too */
    } else {
      int64_t ref = 0;
      for (int r = 0; r < nranks; r++) ref += gen_int(seed, r, j);
      int64_t got = (t == T_I32) ? ((const int32_t *)out)[i]
                                 : ((const int64_t *)out)[i];
      if (got != ref) wrong++;
    }
  }
  return wrong;
}

/* Wrong elements of out[0..count) against rank `src`'s input elements
 * 0..count (exact comparison). */
static long long check_copy(const void *out, dtype_t t, size_t count,
                            uint64_t seed, int src) {
  long long wrong = 0;
  for (size_t i = 0; i < count; i++) {
    int ok;
    switch (t) {
    case T_F32: ok = ((const float *)out)[i] == gen_f32(seed, src, i); break;
    case T_F64: ok = ((const double *)out)[i] == gen_f64(seed, src, i); break;
    case T_I32:
      ok = ((const int32_t *)out)[i] == (int32_t)gen_int(seed, src, i);
      break;
    default: ok = ((const int64_t *)out)[i] == gen_int(seed, src, i); break;
    }
    wrong += !ok;
  }
  return wrong;
}

typedef struct {
  coll_t op;
  int root, rank, nranks;
  MPI_Datatype mt;
} ctx_t;

/* One call with `per` elements per rank (see the conventions above). */
static void run_op(const ctx_t *c, void *in, void *out, size_t per) {
  int n = (int)per;
  switch (c->op) {
  case OP_ALLREDUCE:
    MPI_Allreduce(in, out, n, c->mt, MPI_SUM, MPI_COMM_WORLD);
    break;
  case OP_BROADCAST:
    MPI_Bcast(c->rank == c->root ? in : out, n, c->mt, c->root, MPI_COMM_WORLD);
    break;
  case OP_REDUCE:
    MPI_Reduce(in, out, n, c->mt, MPI_SUM, c->root, MPI_COMM_WORLD);
    break;
  case OP_ALLGATHER:
    MPI_Allgather(in, n, c->mt, out, n, c->mt, MPI_COMM_WORLD);
    break;
  case OP_REDUCESCATTER:
    MPI_Reduce_scatter_block(in, out, n, c->mt, MPI_SUM, MPI_COMM_WORLD);
    break;
  }
}

static long long check(const ctx_t *c, const void *in, const void *out,
                       dtype_t t, size_t per, size_t tsize, uint64_t seed) {
  switch (c->op) {
  case OP_ALLREDUCE: return check_sum(out, t, per, 0, seed, c->nranks);
  case OP_REDUCE:
    return c->rank == c->root ? check_sum(out, t, per, 0, seed, c->nranks) : 0;
  case OP_BROADCAST:
    return check_copy(c->rank == c->root ? in : out, t, per, seed, c->root);
  case OP_ALLGATHER: {
    long long wrong = 0;
    for (int k = 0; k < c->nranks; k++)
      wrong += check_copy((const char *)out + (size_t)k * per * tsize, t, per,
                          seed, k);
    return wrong;
  }
  default: /* reducescatter: block `rank` of the reduction */
    return check_sum(out, t, per, (size_t)c->rank * per, seed, c->nranks);
  }
}

static void usage(const char *p) {
  fprintf(stderr,
          "usage: %s [-o allreduce|broadcast|reduce|allgather|reducescatter]\n"
          "          [-R|--root ROOT] [-b MIN] [-e MAX] [-f FACTOR]\n"
          "          [-w WARMUP] [-i ITERS] [-d float32|float64|int32|int64]\n"
          "          [-a 0|1] [-c 0|1] [-s SEED] [-T MS]\n",
          p);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, nranks;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);

  size_t minb = 8, maxb = 64u << 20;
  long factor = 2;
  int warmup = 5, iters = 20, adaptive = 1, docheck = 1, root = 0;
  double timed_ms = 0;
  uint64_t seed = 42;
  const char *tname = "float32";
  dtype_t dt = T_F32;
  size_t tsize = 4;
  coll_t op = OP_ALLREDUCE;

  static const struct option longopts[] = {
      {"op", required_argument, NULL, 'o'},
      {"root", required_argument, NULL, 'R'},
      {"help", no_argument, NULL, 'h'},
      {NULL, 0, NULL, 0},
  };
  int opt, bad = 0;
  char *end;
  while ((opt = getopt_long(argc, argv, "o:R:b:e:f:w:i:d:a:c:s:T:h", longopts,
                            NULL)) != -1) {
    switch (opt) {
    case 'o': {
      int found = 0;
      for (int k = 0; k < (int)(sizeof OPS / sizeof OPS[0]); k++)
        if (!strcmp(optarg, OPS[k])) { op = (coll_t)k; found = 1; }
      bad |= !found;
      break;
    }
    case 'R':
      root = (int)strtol(optarg, &end, 10);
      bad |= *optarg == '\0' || *end != '\0' || root < 0 || root >= nranks;
      break;
    case 'b': minb = parse_size(optarg); bad |= minb == (size_t)-1; break;
    case 'e': maxb = parse_size(optarg); bad |= maxb == (size_t)-1; break;
    case 'f': factor = strtol(optarg, NULL, 10); bad |= factor < 2; break;
    case 'w': warmup = atoi(optarg); bad |= warmup < 0; break;
    case 'i': iters = atoi(optarg); bad |= iters < 1; break;
    case 'a': adaptive = atoi(optarg); break;
    case 'c': docheck = atoi(optarg); break;
    case 's': seed = strtoull(optarg, NULL, 10); break;
    case 'T': timed_ms = strtod(optarg, &end); bad |= *end != '\0' || timed_ms < 0; break;
    case 'd': {
      int found = 0;
      for (size_t k = 0; k < sizeof TYPES / sizeof TYPES[0]; k++)
        if (!strcmp(optarg, TYPES[k].name)) {
          tname = TYPES[k].name; dt = TYPES[k].t; tsize = TYPES[k].size;
          found = 1;
        }
      bad |= !found;
      break;
    }
    default: bad = 1;
    }
  }
  if (bad || minb > maxb || optind != argc) {
    if (rank == 0) usage(argv[0]);
    MPI_Finalize();
    return 2;
  }
  if ((maxb / tsize) > (size_t)INT32_MAX) {
    if (rank == 0) fprintf(stderr, "-e too large for an int count\n");
    MPI_Finalize();
    return 2;
  }

  /* Both buffers hold the largest size (plus nranks elements so that the
   * one-element-per-rank warm-up fits even for a tiny -e). */
  size_t cap = (maxb / tsize + (size_t)nranks) * tsize;
  void *in = malloc(cap), *out = malloc(cap);
  if (!in || !out) {
    fprintf(stderr, "rank %d: out of memory\n", rank);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  memset(in, 0, cap);
  memset(out, 0, cap);
  ctx_t c = {op, root, rank, nranks, mpi_type(dt)};
  const char *redop = reduces(op) ? "sum" : "none";
  int rootcol = rooted(op) ? root : -1;

  if (rank == 0) {
    char ver[MPI_MAX_LIBRARY_VERSION_STRING];
    int len;
    MPI_Get_library_version(ver, &len);
    char *nl = strchr(ver, '\n');
    if (nl) *nl = '\0';
    printf("# mpi_coll: op %s nranks %d root %d minBytes %zu maxBytes %zu "
           "factor %ld warmup %d iters %d adaptive %d check %d type %s "
           "redop %s\n",
           OPS[op], nranks, rootcol, minb, maxb, factor, warmup, iters,
           adaptive, docheck, tname, redop);
    printf("# library: %s\n", ver);
    printf("# %10s %12s %8s %6s %5s %12s %11s %11s %8s\n", "size", "count",
           "type", "redop", "root", "time_us", "algbw_GBps", "busbw_GBps",
           "wrong");
    fflush(stdout);
  }

  /* Global warm-up (connections, shm segments, page faults) so the first,
   * smallest size is not penalised. */
  for (int k = 0; k < 20; k++) run_op(&c, in, out, 1);
  MPI_Barrier(MPI_COMM_WORLD);

  double busbw_sum = 0;
  long long wrong_total = 0;
  int rows = 0;
  for (size_t size = minb; size <= maxb; size *= (size_t)factor) {
    size_t total = size / tsize;
    int split = op == OP_ALLGATHER || op == OP_REDUCESCATTER;
    size_t per = split ? total / (size_t)nranks : total;
    if (per == 0) {
      if (size == 0) break; /* -b 0: avoid an endless loop */
      if (size > maxb / (size_t)factor) break;
      continue;
    }
    size_t count = split ? per * (size_t)nranks : per; /* larger buffer */
    size_t bytes = count * tsize;
    size_t sendcount = op == OP_REDUCESCATTER ? count : per;
    int w = warmup, it = iters;
    if (adaptive && bytes > (1u << 20)) {
      double scale = (double)(1u << 20) / (double)bytes;
      it = (int)(iters * scale);
      if (it < 5) it = 5;
      w = (int)(warmup * scale);
      if (w < 1) w = 1;
    }
    fill(in, dt, sendcount, seed, rank);
    memset(out, 0, bytes);

    if (timed_ms > 0 && w < 1) w = 1; /* -T needs a rate */
    double w0 = MPI_Wtime();
    for (int k = 0; k < w; k++) run_op(&c, in, out, per);
    if (timed_ms > 0) {
      /* every rank takes the slowest rank's rate, so all make the same calls */
      double mine = (MPI_Wtime() - w0) / w, slowest = 0;
      MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      double fill = slowest > 0 ? ceil(timed_ms / 1e3 / slowest) : it;
      if (fill > 1000000) fill = 1000000;
      if (fill > it) it = (int)fill;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int k = 0; k < it; k++) run_op(&c, in, out, per);
    double avg = (MPI_Wtime() - t0) / it, tmax = 0;
    MPI_Reduce(&avg, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);

    long long wrong = docheck ? check(&c, in, out, dt, per, tsize, seed) : 0,
              wsum = 0;
    MPI_Reduce(&wrong, &wsum, 1, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);

    if (rank == 0) {
      double algbw = (double)bytes / tmax / 1e9;
      double busbw = algbw * bus_factor(op, nranks);
      busbw_sum += busbw;
      wrong_total += wsum;
      rows++;
      char wbuf[32];
      if (docheck) snprintf(wbuf, sizeof wbuf, "%lld", wsum);
      else snprintf(wbuf, sizeof wbuf, "N/A");
      printf("  %10zu %12zu %8s %6s %5d %12.2f %11.4f %11.4f %8s\n", bytes,
             count, tname, redop, rootcol, tmax * 1e6, algbw, busbw, wbuf);
      fflush(stdout);
    }
    if (size > maxb / (size_t)factor) break; /* overflow guard */
  }

  if (rank == 0) {
    if (docheck)
      printf("# Out of bounds values : %lld %s\n", wrong_total,
             wrong_total == 0 ? "OK" : "FAILED");
    printf("# Avg bus bandwidth : %.4f\n", rows ? busbw_sum / rows : 0.0);
  }
  free(in);
  free(out);
  MPI_Finalize();
  return 0;
}
