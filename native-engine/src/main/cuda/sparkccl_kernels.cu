// SparkCCL's CUDA kernels: the channel kernel that runs a collective's primitive sequence over
// the FIFOs the proxy thread drains and fills, and a plain reduce kernel for the benchmark.
//
// The FIFO layout is org.sparkccl.fifo.FifoLayout; the numbers below repeat it and
// FifoLayoutCudaTest compares them. The Java side (org.sparkccl.kernel.CudaChannelKernel and
// PlanEncoding) encodes the plan; the ordinals below repeat Primitive, DataType and ReduceOp.
//
// Compiled at run time with nvcc (org.sparkccl.device.cuda.CudaKernels); never hand-written PTX.

#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <stdint.h>

// --- FifoLayout -------------------------------------------------------------------------------
#define FIFO_STEPS 8
#define FIFO_HEAD_OFFSET 0
#define FIFO_TAIL_OFFSET 128
#define FIFO_ABORT_OFFSET 256
#define FIFO_SIZES_OFFSET 384
#define FIFO_CONTROL_BYTES 512
#define FIFO_EMPTY (-1)

// --- Primitive ordinals -----------------------------------------------------------------------
#define P_SEND 0
#define P_COPY_SEND 1
#define P_RECV 2
#define P_RECV_REDUCE_SEND 3
#define P_RECV_REDUCE_COPY 4
#define P_RECV_REDUCE_COPY_SEND 5
#define P_RECV_COPY_SEND 6

// --- DataType ordinals ------------------------------------------------------------------------
#define T_INT8 0
#define T_UINT8 1
#define T_INT32 2
#define T_UINT32 3
#define T_INT64 4
#define T_UINT64 5
#define T_FLOAT16 6
#define T_BFLOAT16 7
#define T_FLOAT32 8
#define T_FLOAT64 9

// --- ReduceOp ordinals ------------------------------------------------------------------------
#define OP_SUM 0
#define OP_PROD 1
#define OP_MIN 2
#define OP_MAX 3
#define OP_AVG 4

// --- status words (mapped host memory, read by CudaChannelKernel) -----------------------------
#define ST_DONE 0      // 1 once the kernel has returned its answer
#define ST_ERROR 1     // 0, or one of the ERR_ codes
#define ST_DETAIL 2    // the step where it happened
#define ST_DETAIL2 3   // the size received, for ERR_SIZE
#define ST_STEPS 4     // int64 words from here: the send and receive steps reached
#define ERR_ABORTED 1
#define ERR_SIZE 2

// --- the blocks of one channel ----------------------------------------------------------------
// A channel may run on several blocks (CudaChannelKernel's grid). The plan names how many of them
// take part (small plans: block 0 alone, since every step's hand-over between blocks costs
// microseconds): each copies its share of every slot, and the last to finish a step publishes or
// releases it for all. Their counters live in device memory that the host zeroes before each
// launch (int words; SYNC_DECISION, SYNC_GO_SEND and SYNC_GO_RECV are int64).
#define SYNC_PUBLISH 0                    // FIFO_STEPS words: blocks done writing a send slot
#define SYNC_RELEASE FIFO_STEPS           // FIFO_STEPS words: blocks done reading a receive slot
#define SYNC_ANSWER (2 * FIFO_STEPS)      // blocks done with the plan
#define SYNC_RETURN (2 * FIFO_STEPS + 1)  // blocks about to return (resident kernel)
#define SYNC_PLAN_BLOCKS 18               // from block 0: blocks that run the next plan
#define SYNC_DECISION 24                  // block 0's word to the others: next plan, or -1 to return
#define SYNC_GO_SEND 26                   // int64, from block 0: send steps below it have room
#define SYNC_GO_RECV 28                   // int64, from block 0: receive steps below it are filled
#define SYNC_FAIL 30                      // 1 once block 0 saw an abort or a wrong size
#define SYNC_INTS 32

// localEdges, a kernel argument: which of the channel's FIFOs have a kernel on this GPU at their
// other end (Fifo::local)
#define LOCAL_SEND 1
#define LOCAL_RECV 2

struct Call {
  long long kind;
  long long src;
  long long dst;
  long long bytes;
};

// A FIFO as the kernel sees it: the control block (mapped host memory, shared between processes
// on a direct edge) and the slots (mapped host memory, or the receiving GPU's memory). local: the
// kernel at its other end runs on this GPU (a direct edge between ranks of one GPU), so a
// device-scope fence orders the slots and counters for it; every other FIFO has a proxy or another
// GPU at its other end and needs the system-scope one (on an H200, 2 ranks as threads on one GPU,
// 8 B allReduce: about 10% of the call).
struct Fifo {
  char* control;
  char* data;
  bool local;
  __device__ volatile long long* head() const { return (volatile long long*)(control + FIFO_HEAD_OFFSET); }
  __device__ volatile long long* tail() const { return (volatile long long*)(control + FIFO_TAIL_OFFSET); }
  __device__ volatile int* abortWord() const { return (volatile int*)(control + FIFO_ABORT_OFFSET); }
  __device__ volatile int* size(long long step) const {
    return (volatile int*)(control + FIFO_SIZES_OFFSET) + (int)(step % FIFO_STEPS);
  }
};

// --- element operations -----------------------------------------------------------------------
// Half types are computed in float32 and rounded once per operation, as the host Reducer does.
// Integer sums and products wrap (computed on the unsigned type of the same width).

template <typename T> struct Elem {
  typedef T Acc;
  __device__ static Acc load(T v) { return v; }
  __device__ static T store(Acc v) { return v; }
};
template <> struct Elem<__half> {
  typedef float Acc;
  __device__ static float load(__half v) { return __half2float(v); }
  __device__ static __half store(float v) { return __float2half_rn(v); }
};
template <> struct Elem<__nv_bfloat16> {
  typedef float Acc;
  __device__ static float load(__nv_bfloat16 v) { return __bfloat162float(v); }
  __device__ static __nv_bfloat16 store(float v) { return __float2bfloat16_rn(v); }
};

template <typename T> struct Unsigned { typedef T type; };
template <> struct Unsigned<int8_t> { typedef uint8_t type; };
template <> struct Unsigned<int32_t> { typedef uint32_t type; };
template <> struct Unsigned<long long> { typedef unsigned long long type; };

template <typename A, bool INTEGER> struct Arith;
template <typename A> struct Arith<A, true> {
  typedef typename Unsigned<A>::type U;
  __device__ static A sum(A x, A y) { return (A)((U)x + (U)y); }
  __device__ static A prod(A x, A y) { return (A)((U)x * (U)y); }
};
template <typename A> struct Arith<A, false> {
  __device__ static A sum(A x, A y) { return x + y; }
  __device__ static A prod(A x, A y) { return x * y; }
};

template <typename A> struct IsFloat { static const bool value = false; };
template <> struct IsFloat<float> { static const bool value = true; };
template <> struct IsFloat<double> { static const bool value = true; };

template <typename T, int OP> __device__ __forceinline__ T combine(T a, T b) {
  typedef Elem<T> E;
  typedef typename E::Acc A;
  typedef Arith<A, !IsFloat<A>::value> Ar;
  A x = E::load(a);
  A y = E::load(b);
  A r;
  if (OP == OP_SUM || OP == OP_AVG) {
    r = Ar::sum(x, y);
  } else if (OP == OP_PROD) {
    r = Ar::prod(x, y);
  } else if (OP == OP_MIN) {
    r = (x != x || y != y) ? (x != x ? x : y) : (y < x ? y : x);
  } else {
    r = (x != x || y != y) ? (x != x ? x : y) : (y > x ? y : x);
  }
  return E::store(r);
}

template <typename T> __device__ __forceinline__ T divideBy(T v, int n) {
  typedef Elem<T> E;
  return E::store(E::load(v) / (typename E::Acc)n);
}

// Loads that bypass L1: FIFO slots are rewritten by the proxy every FIFO_STEPS steps, so a line
// cached from an earlier step would be stale.
__device__ __forceinline__ uint4 loadVec(const uint4* p) { return __ldcv(p); }

template <typename T> __device__ __forceinline__ T loadElem(const T* p) {
  return *(const volatile T*)p;
}

// --- one pass over a slice --------------------------------------------------------------------
// out0[i] = (in1 ? in0[i] op in1[i] : in0[i]), divided by nRanks when DIVIDE; out1 gets the same
// value when non-null. Threads [first, first + stride) of the caller share the work.

#define UNROLL 4

// Not inlined: one function per type and operator keeps ptxas fast (inlining them all into one
// dispatcher took it minutes).
template <typename T, int OP, bool REDUCE, bool DIVIDE>
__device__ __noinline__ void passTyped(const char* in0, const char* in1, char* out0, char* out1, long long bytes,
                          int nRanks, long long first, long long stride) {
  const int PER = 16 / sizeof(T);
  bool aligned = ((((uintptr_t)in0) | ((uintptr_t)in1) | ((uintptr_t)out0) | ((uintptr_t)out1)) & 15) == 0;
  long long nvec = aligned ? bytes / 16 : 0;
  const uint4* a = (const uint4*)in0;
  const uint4* b = (const uint4*)in1;
  for (long long base = first; base < nvec; base += stride * UNROLL) {
    uint4 va[UNROLL];
    uint4 vb[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; u++) {
      long long i = base + u * stride;
      if (i < nvec) {
        va[u] = loadVec(a + i);
        if (REDUCE) vb[u] = loadVec(b + i);
      }
    }
#pragma unroll
    for (int u = 0; u < UNROLL; u++) {
      long long i = base + u * stride;
      if (i < nvec) {
        if (REDUCE || DIVIDE) {
          T* x = (T*)&va[u];
          const T* y = (const T*)&vb[u];
#pragma unroll
          for (int k = 0; k < PER; k++) {
            T r = REDUCE ? combine<T, OP>(x[k], y[k]) : x[k];
            x[k] = DIVIDE ? divideBy<T>(r, nRanks) : r;
          }
        }
        ((uint4*)out0)[i] = va[u];
        if (out1) ((uint4*)out1)[i] = va[u];
      }
    }
  }
  long long done = nvec * 16;
  long long elems = (bytes - done) / sizeof(T);
  const T* ta = (const T*)(in0 + done);
  const T* tb = (const T*)(in1 + done);
  T* o0 = (T*)(out0 + done);
  T* o1 = out1 ? (T*)(out1 + done) : 0;
  for (long long i = first; i < elems; i += stride) {
    T r = loadElem(ta + i);
    if (REDUCE) r = combine<T, OP>(r, loadElem(tb + i));
    if (DIVIDE) r = divideBy<T>(r, nRanks);
    o0[i] = r;
    if (o1) o1[i] = r;
  }
}

// A plain copy of bytes to one or two outputs: 16-byte vectors when everything is aligned.
__device__ void passCopy(const char* in, char* out0, char* out1, long long bytes, long long first,
                         long long stride) {
  bool aligned = ((((uintptr_t)in) | ((uintptr_t)out0) | ((uintptr_t)out1)) & 15) == 0;
  long long vec = aligned ? bytes & ~15LL : 0;
  if (vec > 0) {
    passTyped<uint32_t, OP_SUM, false, false>(in, 0, out0, out1, vec, 1, first, stride);
  }
  for (long long i = vec + first; i < bytes; i += stride) {
    char v = *(const volatile char*)(in + i);
    out0[i] = v;
    if (out1) out1[i] = v;
  }
}

// Floating-point types: every operator, and avg's division where the result is final.
template <typename T>
__device__ void passFloat(int op, bool divide, const char* in0, const char* in1, char* out0,
                          char* out1, long long bytes, int nRanks, long long first,
                          long long stride) {
  switch (op) {
    case OP_SUM: passTyped<T, OP_SUM, true, false>(in0, in1, out0, out1, bytes, nRanks, first, stride); break;
    case OP_PROD: passTyped<T, OP_PROD, true, false>(in0, in1, out0, out1, bytes, nRanks, first, stride); break;
    case OP_MIN: passTyped<T, OP_MIN, true, false>(in0, in1, out0, out1, bytes, nRanks, first, stride); break;
    case OP_MAX: passTyped<T, OP_MAX, true, false>(in0, in1, out0, out1, bytes, nRanks, first, stride); break;
    case OP_AVG:
      if (divide) {
        passTyped<T, OP_SUM, true, true>(in0, in1, out0, out1, bytes, nRanks, first, stride);
      } else {
        passTyped<T, OP_SUM, true, false>(in0, in1, out0, out1, bytes, nRanks, first, stride);
      }
      break;
  }
}

// Integer types: avg is for floating-point types only, so nothing divides.
template <typename T>
__device__ void passInt(int op, const char* in0, const char* in1, char* out0, char* out1,
                        long long bytes, long long first, long long stride) {
  switch (op) {
    case OP_SUM: passTyped<T, OP_SUM, true, false>(in0, in1, out0, out1, bytes, 1, first, stride); break;
    case OP_PROD: passTyped<T, OP_PROD, true, false>(in0, in1, out0, out1, bytes, 1, first, stride); break;
    case OP_MIN: passTyped<T, OP_MIN, true, false>(in0, in1, out0, out1, bytes, 1, first, stride); break;
    case OP_MAX: passTyped<T, OP_MAX, true, false>(in0, in1, out0, out1, bytes, 1, first, stride); break;
  }
}

// Not inlined: the channel kernel calls it from seven places, and inlining every type and
// operator at each of them made a kernel with a 28 KB stack frame and an eight-minute build.
__device__ __noinline__ void pass(int dtype, int op, bool reduce, bool divide, const char* in0, const char* in1,
                     char* out0, char* out1, long long bytes, int nRanks, long long first,
                     long long stride) {
  if (!reduce) {
    passCopy(in0, out0, out1, bytes, first, stride);
    return;
  }
  switch (dtype) {
    case T_INT8: passInt<int8_t>(op, in0, in1, out0, out1, bytes, first, stride); break;
    case T_UINT8: passInt<uint8_t>(op, in0, in1, out0, out1, bytes, first, stride); break;
    case T_INT32: passInt<int32_t>(op, in0, in1, out0, out1, bytes, first, stride); break;
    case T_UINT32: passInt<uint32_t>(op, in0, in1, out0, out1, bytes, first, stride); break;
    case T_INT64: passInt<long long>(op, in0, in1, out0, out1, bytes, first, stride); break;
    case T_UINT64: passInt<unsigned long long>(op, in0, in1, out0, out1, bytes, first, stride); break;
    case T_FLOAT16: passFloat<__half>(op, divide, in0, in1, out0, out1, bytes, nRanks, first, stride); break;
    case T_BFLOAT16: passFloat<__nv_bfloat16>(op, divide, in0, in1, out0, out1, bytes, nRanks, first, stride); break;
    case T_FLOAT32: passFloat<float>(op, divide, in0, in1, out0, out1, bytes, nRanks, first, stride); break;
    case T_FLOAT64: passFloat<double>(op, divide, in0, in1, out0, out1, bytes, nRanks, first, stride); break;
  }
}

// --- waiting on the proxy's counters ----------------------------------------------------------

// Orders this thread's memory operations for the other end of a FIFO (see Fifo::local).
__device__ __forceinline__ void fifoFence(bool local) {
  if (local) {
    __threadfence();
  } else {
    __threadfence_system();
  }
}

// The head of the send FIFO as block 0's thread 0 last read it: heads only grow, so while it shows
// room for a step the slot is free without reading the head again (a read that crosses the bus
// where the control block lies in host memory). Each kernel sets it to 0 when it starts.
__shared__ long long knownHead;

// Thread 0 of each block, after the block's __syncthreads: whether this block is the last of
// the blocks taking part to arrive at the counter (it then acts for every block, and the counter
// is ready for its next use, which no block reaches before the last one has acted). local: only
// kernels on this GPU observe what the blocks did (see Fifo::local).
__device__ bool lastToArrive(int* counter, int blocks, bool local) {
  if (blocks == 1) return true;
  fifoFence(local);  // this block's reads and writes, which its barrier made ours, come first
  if (atomicAdd(counter, 1) != blocks - 1) return false;
  atomicExch(counter, 0);
  fifoFence(local);
  return true;
}

// Only block 0 watches the FIFO's counters and abort words (they may lie in host memory, where
// every read crosses the bus, and one reader per block slowed every step down); it passes what it
// saw to the other blocks through words in GPU memory. Steps only grow, so a word is the step
// below which every wait of that kind has passed; the words start at 0 with each launch.

// Thread 0 of block 0, once a wait at step has passed (ok) or failed: tells the other blocks.
__device__ void lead(int* sync, int word, long long step, bool ok) {
  if (gridDim.x == 1) return;
  if (ok) {
    *(volatile long long*)(sync + word) = step + 1;
  } else {
    *(volatile int*)(sync + SYNC_FAIL) = 1;
  }
  __threadfence();
}

// Thread 0 of another block: waits until block 0 passed the wait at step; false once it failed.
__device__ bool follow(int* sync, int word, long long step, bool local) {
  volatile long long* go = (volatile long long*)(sync + word);
  volatile int* failed = (volatile int*)(sync + SYNC_FAIL);
  while (*go <= step) {
    if (*failed) return false;
  }
  fifoFence(local);  // the slot's bytes (or its room) come after block 0 saw the counter
  return true;
}

// The abort words are read every ABORT_POLLS rounds of a wait, not every round: they matter only
// when something went wrong, and each read may cross the bus.
#define ABORT_POLLS 64

// Thread 0 of block 0, in round `round` of a wait at step: whether an abort word stops the wait
// (the status words then say where).
__device__ bool abortedWaiting(const Fifo& send, const Fifo& recv, int round, long long step,
                               int* status) {
  if (round % ABORT_POLLS != 0 || !(*send.abortWord() || *recv.abortWord())) return false;
  status[ST_ERROR] = ERR_ABORTED;
  status[ST_DETAIL] = (int)step;
  return true;
}

// Thread 0 of block 0 spins until the condition holds or an abort word is set (thread 0 of every
// other block follows it); the answer reaches every thread of the block through shared memory.
// Returns false on abort (or, for a filled slot, a size other than expected).
__device__ bool waitSendRoom(const Fifo& send, const Fifo& recv, long long step, int* status,
                             int* sync) {
  __shared__ int ok;
  if (threadIdx.x == 0) {
    if (blockIdx.x == 0) {
      ok = 1;
      if (step - knownHead >= FIFO_STEPS) {
        long long head;
        for (int round = 1; step - (head = *send.head()) >= FIFO_STEPS; round++) {
          if (abortedWaiting(send, recv, round, step, status)) {
            ok = 0;
            break;
          }
        }
        knownHead = head;
        // the slot's new bytes come after the receiver's release (a head seen before was fenced
        // when it was read)
        fifoFence(send.local);
      }
      lead(sync, SYNC_GO_SEND, step, ok);
    } else {
      ok = follow(sync, SYNC_GO_SEND, step, send.local);
    }
  }
  __syncthreads();
  int r = ok;
  __syncthreads();
  return r;
}

__device__ bool waitRecvFilled(const Fifo& send, const Fifo& recv, long long step, int expected,
                               int* status, int* sync) {
  __shared__ int ok;
  if (threadIdx.x == 0) {
    if (blockIdx.x == 0) {
      ok = 1;
      // The size is read with the tail, in the same round, not after it: each read may cross the
      // bus (about half a microsecond on an H200 host), and an 8-byte collective waits for every
      // one. A size read before the sender's lands is still FIFO_EMPTY (the slot's last release
      // wrote it), so the wait goes on until both are there.
      int got = FIFO_EMPTY;
      for (int round = 1;; round++) {
        long long tail = *recv.tail();
        got = *recv.size(step);
        if (tail > step && got != FIFO_EMPTY) break;
        if (abortedWaiting(send, recv, round, step, status)) {
          ok = 0;
          break;
        }
      }
      fifoFence(recv.local);
      if (ok) {
        if (got != expected) {
          status[ST_ERROR] = ERR_SIZE;
          status[ST_DETAIL] = (int)step;
          status[ST_DETAIL2] = got;
          ok = 0;
        }
      }
      lead(sync, SYNC_GO_RECV, step, ok);
    } else {
      ok = follow(sync, SYNC_GO_RECV, step, recv.local);
    }
  }
  __syncthreads();
  int r = ok;
  __syncthreads();
  return r;
}

// Every thread's slot writes, in every block, must be visible to the receiver before the size and
// the tail are: the barrier makes them thread 0's, and its fence orders them before the counters
// (as NCCL's simple protocol does, one fence per block rather than one per thread).
__device__ void publish(const Fifo& send, long long step, int bytes, int* sync, int blocks) {
  __syncthreads();
  if (threadIdx.x == 0) {
    fifoFence(send.local);
    if (lastToArrive(sync + SYNC_PUBLISH + (int)(step % FIFO_STEPS), blocks, send.local)) {
      *send.size(step) = bytes;
      fifoFence(send.local);
      *send.tail() = step + 1;
    }
  }
}

// Every thread of every block has finished reading the slot before the proxy may refill it.
__device__ void release(const Fifo& recv, long long step, int* sync, int blocks) {
  __syncthreads();
  if (threadIdx.x == 0 &&
      lastToArrive(sync + SYNC_RELEASE + (int)(step % FIFO_STEPS), blocks, recv.local)) {
    *recv.size(step) = FIFO_EMPTY;
    fifoFence(recv.local);
    *recv.head() = step + 1;
  }
}

// --- the channel kernel -----------------------------------------------------------------------

// Calls a block holds in shared memory at once.
#define CALL_CACHE 64

// The block's threads read calls [0, n) (n <= CALL_CACHE) into words, one int64 word each: the
// plan may live in mapped host memory, where every read crosses the bus, and reads of many threads
// cross it together where one thread's would follow each other.
__device__ void loadCalls(const Call* calls, int n, long long* words) {
  __syncthreads();  // every thread is done with the calls held before
  const volatile long long* w = (const volatile long long*)calls;
  for (int i = threadIdx.x; i < n * 4; i += blockDim.x) words[i] = w[i];
  __syncthreads();
}

// Runs the plan's calls in order, slice by slice (one FIFO slot each), as HostChannelKernel does
// on a Java thread; advances the steps. Returns false after an abort or a size mismatch (the
// status words say which); the answer is the same on every thread of the block.
__device__ bool runPlan(const Call* calls, int nCalls, char* src, char* dst, int dtype, int op,
                        int nRanks, const Fifo& send, const Fifo& recv, int stepSize,
                        long long& sendStep, long long& recvStep, int* status, int* sync,
                        int blocks) {
  long long first = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  long long stride = (long long)blocks * blockDim.x;
  __shared__ long long words[CALL_CACHE * 4];
  for (int c = 0; c < nCalls; c++) {
    if (c % CALL_CACHE == 0) loadCalls(calls + c, min(CALL_CACHE, nCalls - c), words);
    const long long* w = words + (c % CALL_CACHE) * 4;
    Call call = {w[0], w[1], w[2], w[3]};
    for (long long done = 0; done < call.bytes; done += stepSize) {
      int len = (int)min((long long)stepSize, call.bytes - done);
      char* s = src + call.src + done;
      char* d = dst + call.dst + done;
      char* sendSlot = send.data + (sendStep % FIFO_STEPS) * (long long)stepSize;
      char* recvSlot = recv.data + (recvStep % FIFO_STEPS) * (long long)stepSize;
      switch (call.kind) {
        case P_SEND:
          if (!waitSendRoom(send, recv, sendStep, status, sync)) return false;
          pass(dtype, op, false, false, s, 0, sendSlot, 0, len, nRanks, first, stride);
          publish(send, sendStep++, len, sync, blocks);
          break;
        case P_COPY_SEND:
          if (!waitSendRoom(send, recv, sendStep, status, sync)) return false;
          pass(dtype, op, false, false, s, 0, sendSlot, s == d ? 0 : d, len, nRanks, first, stride);
          publish(send, sendStep++, len, sync, blocks);
          break;
        case P_RECV:
          if (!waitRecvFilled(send, recv, recvStep, len, status, sync)) return false;
          pass(dtype, op, false, false, recvSlot, 0, d, 0, len, nRanks, first, stride);
          release(recv, recvStep++, sync, blocks);
          break;
        case P_RECV_REDUCE_SEND:
          if (!waitRecvFilled(send, recv, recvStep, len, status, sync)) return false;
          if (!waitSendRoom(send, recv, sendStep, status, sync)) return false;
          pass(dtype, op, true, false, recvSlot, s, sendSlot, 0, len, nRanks, first, stride);
          publish(send, sendStep++, len, sync, blocks);
          release(recv, recvStep++, sync, blocks);
          break;
        case P_RECV_REDUCE_COPY:
          if (!waitRecvFilled(send, recv, recvStep, len, status, sync)) return false;
          pass(dtype, op, true, true, recvSlot, s, d, 0, len, nRanks, first, stride);
          release(recv, recvStep++, sync, blocks);
          break;
        case P_RECV_REDUCE_COPY_SEND:
          if (!waitRecvFilled(send, recv, recvStep, len, status, sync)) return false;
          if (!waitSendRoom(send, recv, sendStep, status, sync)) return false;
          pass(dtype, op, true, true, recvSlot, s, d, sendSlot, len, nRanks, first, stride);
          publish(send, sendStep++, len, sync, blocks);
          release(recv, recvStep++, sync, blocks);
          break;
        case P_RECV_COPY_SEND:
          if (!waitRecvFilled(send, recv, recvStep, len, status, sync)) return false;
          if (!waitSendRoom(send, recv, sendStep, status, sync)) return false;
          pass(dtype, op, false, false, recvSlot, 0, d, sendSlot, len, nRanks, first, stride);
          publish(send, sendStep++, len, sync, blocks);
          release(recv, recvStep++, sync, blocks);
          break;
      }
    }
  }
  return true;
}

// Every thread's writes, in every block, are visible before the answer is; block 0 (which runs
// every plan) gives the steps it reached. Returns on thread 0 of the last of the grid's blocks to
// arrive, which then gives the answer.
__device__ bool answer(int* status, long long sendStep, long long recvStep, int* sync) {
  __syncthreads();
  if (threadIdx.x != 0) return false;
  __threadfence_system();
  if (blockIdx.x == 0) {
    long long* steps = (long long*)(status + ST_STEPS);
    steps[0] = sendStep;
    steps[1] = recvStep;
    __threadfence_system();
  }
  return lastToArrive(sync + SYNC_ANSWER, gridDim.x, false);
}

// One launch per collective: the grid's blocks run one channel's share of it.
extern "C" __global__ void __launch_bounds__(512, 1)
channelKernel(const Call* calls, int nCalls, char* src, char* dst, int dtype, int op, int nRanks,
              char* sendControl, char* sendData, char* recvControl, char* recvData, int stepSize,
              long long sendStep, long long recvStep, int* status, int* sync, int localEdges) {
  // sendData: this FIFO's own slots, or the next rank's receive slots on a direct edge (its GPU's
  // memory through CUDA IPC or peer access, or shared host memory)
  Fifo send = {sendControl, sendData, (localEdges & LOCAL_SEND) != 0};
  // recvData: this FIFO's own slots, or the previous rank's send slots when ranks share them
  Fifo recv = {recvControl, recvData, (localEdges & LOCAL_RECV) != 0};
  if (threadIdx.x == 0) knownHead = 0;
  runPlan(calls, nCalls, src, dst, dtype, op, nRanks, send, recv, stepSize, sendStep, recvStep,
          status, sync, gridDim.x);
  if (answer(status, sendStep, recvStep, sync)) {
    *(volatile int*)&status[ST_DONE] = 1;
  }
}

// --- the resident channel kernel --------------------------------------------------------------
// The mailbox in mapped host memory, written by CudaChannelKernel (int64 words; the plan's calls
// from MB_CALLS_BYTE on). The host writes everything else first and the sequence number last.
#define MB_SEQ 0
#define MB_NCALLS 1
#define MB_SRC 2
#define MB_DST 3
#define MB_TYPE 4        // dtype | op << 8
#define MB_NRANKS 5
#define MB_RECVDATA 6
#define MB_BLOCKS 7      // blocks of the grid that run the plan (the others only answer)
#define MB_SENDSTEP 8    // the steps the plan starts from, for every block
#define MB_RECVSTEP 9
#define MB_PLAN_WORDS 10
#define MB_SHUTDOWN 16   // its own line: non-zero stops the kernel
#define MB_CALLS_BYTE 256
// status words of the resident kernel (after the ones above)
#define ST_DONE_SEQ 8    // int64: the last sequence number run
#define ST_RETURNED 10   // 1 once the kernel is about to return; nothing is written after it

__device__ __forceinline__ unsigned long long globalNanos() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Thread 0 waits for a sequence number other than lastSeq: spinning for the first microseconds,
// then sleeping in growing steps of __nanosleep (at most 2 us) so that an idle kernel does not
// keep hammering the bus. Returns 0 when it should return instead: shutdown, an abort word, or
// idleNanos without work.
__device__ long long awaitPlan(volatile long long* mb, const Fifo& send, const Fifo& recv,
                               long long lastSeq, long long idleNanos) {
  unsigned long long start = globalNanos();
  unsigned sleep = 0;
  for (int round = 0;; round++) {
    long long seq = mb[MB_SEQ];
    if (seq != lastSeq) {
      __threadfence_system();  // the plan's words are read after the sequence number
      return seq;
    }
    if ((round & 7) == 0) {
      if (mb[MB_SHUTDOWN] != 0 || *send.abortWord() || *recv.abortWord()) return 0;
      unsigned long long idle = globalNanos() - start;
      if ((long long)idle > idleNanos) return 0;
      if (idle > 20000) sleep = sleep == 0 ? 64 : min(sleep * 2, 2000u);
    }
    if (sleep) __nanosleep(sleep);
  }
}

// Thread 0 of a block other than block 0 waits for block 0's decision: a plan other than lastSeq,
// or the word to return. Block 0 alone polls the mailbox and the abort words, and always decides
// (it returns at the latest after idleNanos, and writes the word after a failed plan), so that the
// blocks never disagree on whether to return: a block that left on its own would never answer
// the plan block 0 took, and the host would take the kernel's return for an idle one.
__device__ long long awaitDecision(volatile long long* decision, long long lastSeq) {
  for (int round = 0;; round++) {
    long long d = *decision;
    if (d != 0 && d != lastSeq) {
      __threadfence_system();
      return d < 0 ? 0 : d;
    }
    if ((round & 255) == 255) __nanosleep(100);
  }
}

// The grid's blocks run one channel and stay on the GPU across collectives: they run each plan the
// host posts in the mailbox, answer with the plan's sequence number, and return after idleNanos
// without one, on shutdown, on abort or after an error (the host then launches them again).
extern "C" __global__ void __launch_bounds__(512, 1)
residentKernel(long long* mailbox, char* sendControl, char* sendData, char* recvControl,
               int stepSize, long long lastSeq, int* status, long long idleNanos, int* sync,
               int localEdges) {
  volatile long long* mb = (volatile long long*)mailbox;
  volatile long long* decision = (volatile long long*)(sync + SYNC_DECISION);
  const Call* calls = (const Call*)((char*)mailbox + MB_CALLS_BYTE);
  // sendData: as in channelKernel (a direct edge's slots, fixed before the first collective)
  Fifo send = {sendControl, sendData, (localEdges & LOCAL_SEND) != 0};
  bool recvLocal = (localEdges & LOCAL_RECV) != 0;
  if (threadIdx.x == 0) knownHead = 0;
  __shared__ long long next;
  __shared__ long long plan[MB_PLAN_WORDS];
  __shared__ int planBlocks;  // blocks other than 0: how many blocks run the plan
  for (;;) {
    if (threadIdx.x == 0) {
      if (blockIdx.x == 0) {
        Fifo probe = {recvControl, 0, recvLocal};
        next = awaitPlan(mb, send, probe, lastSeq, idleNanos);
      } else {
        next = awaitDecision(decision, lastSeq);
        planBlocks = *(volatile int*)(sync + SYNC_PLAN_BLOCKS);
        plan[MB_BLOCKS] = planBlocks;
      }
    }
    __syncthreads();
    // The plan's words, one per thread, all crossing the bus together (one thread reading them in
    // turn waited about half a microsecond for each). A block that sits the plan out reads none and
    // answers at once. The sequence number came first (thread 0 read it, then fenced), and the
    // barrier orders these reads after it.
    bool reads = next != 0 && (blockIdx.x == 0 || (int)blockIdx.x < planBlocks);
    if (reads && threadIdx.x >= 1 && threadIdx.x < MB_PLAN_WORDS) {
      plan[threadIdx.x] = mb[threadIdx.x];
    }
    __syncthreads();
    if (blockIdx.x == 0 && threadIdx.x == 0 && gridDim.x > 1) {
      sync[SYNC_PLAN_BLOCKS] = (int)plan[MB_BLOCKS];
      __threadfence();
      *decision = next != 0 ? next : -1;
      __threadfence();
    }
    long long seq = next;
    if (seq == 0) break;
    int blocks = (int)max(1LL, min((long long)gridDim.x, plan[MB_BLOCKS]));
    long long sendStep = plan[MB_SENDSTEP];
    long long recvStep = plan[MB_RECVSTEP];
    bool ok = true;
    if ((int)blockIdx.x < blocks) {
      // recvData: this FIFO's own slots, or the previous rank's send slots when ranks share them
      Fifo recv = {recvControl, (char*)plan[MB_RECVDATA], recvLocal};
      ok = runPlan(calls, (int)plan[MB_NCALLS], (char*)plan[MB_SRC], (char*)plan[MB_DST],
                   (int)(plan[MB_TYPE] & 0xff), (int)(plan[MB_TYPE] >> 8), (int)plan[MB_NRANKS],
                   send, recv, stepSize, sendStep, recvStep, status, sync, blocks);
    }
    // every block answers, those that sat out too: the host posts the next plan only after the
    // last of them, so no block can miss a plan or read a mailbox being rewritten
    if (answer(status, sendStep, recvStep, sync)) {
      *(volatile long long*)(status + ST_DONE_SEQ) = seq;
      __threadfence_system();
    }
    lastSeq = seq;
    if (!ok) {
      // the other blocks return too: they saw the same abort or size, or they see this word
      if (threadIdx.x == 0 && blockIdx.x == 0 && gridDim.x > 1) {
        *decision = -1;
        __threadfence();
      }
      break;
    }
  }
  __syncthreads();
  if (threadIdx.x == 0) __threadfence_system();
  if (threadIdx.x == 0 && lastToArrive(sync + SYNC_RETURN, gridDim.x, false)) {
    *(volatile int*)&status[ST_RETURNED] = 1;
  }
}

// --- the reduce kernel alone, for the benchmark -----------------------------------------------

// out = a op b over the whole grid, with the same pass as the channel kernel.
extern "C" __global__ void __launch_bounds__(512)
reduceKernel(const char* a, const char* b, char* out, long long bytes,
                                        int dtype, int op) {
  long long first = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  long long stride = (long long)gridDim.x * blockDim.x;
  pass(dtype, op, true, false, a, b, out, 0, bytes, 1, first, stride);
}
