"""NCCL allReduce through torch.distributed, timed as sparkccl-perf times itself.

One process per rank, rank r on GPU r mod (GPUs); float32 sum. For each size: warm-up calls, a
barrier, then ITERS calls, each followed by torch.cuda.synchronize() (SparkCCL's allReduce is
blocking, so both sides pay the full round trip of every call); the time per call is the slowest
rank's mean. busbw = bytes / time * 2(n-1)/n, as nccl-tests and sparkccl-perf compute it.

    python3 nccl_allreduce.py NRANKS LABEL [BYTES ...]

The environment chooses NCCL's path (NCCL_P2P_DISABLE, NCCL_SHM_DISABLE, NCCL_IB_DISABLE);
NCCL_NVLS_ENABLE is always 0 here. Prints one line per size: LABEL bytes time_us busbw_GBps.
"""
import os
import sys
import time

os.environ["NCCL_NVLS_ENABLE"] = "0"

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def iters_for(nbytes):
    if nbytes <= 1 << 20:
        return 200, 50
    if nbytes <= 64 << 20:
        return 50, 10
    return 10, 3


def worker(rank, n, port, label, sizes, queue):
    torch.cuda.set_device(rank % torch.cuda.device_count())
    dist.init_process_group(
        "nccl", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=n
    )
    gen = torch.Generator(device="cuda").manual_seed(1234 + rank)
    for nbytes in sizes:
        count = max(1, nbytes // 4)
        t = torch.rand(count, device="cuda", generator=gen) + 0.5
        iters, warm = iters_for(nbytes)
        for _ in range(warm):
            dist.all_reduce(t)
        torch.cuda.synchronize()
        dist.barrier()
        t0 = time.perf_counter()
        for _ in range(iters):
            dist.all_reduce(t)
            torch.cuda.synchronize()
        us = (time.perf_counter() - t0) / iters * 1e6
        worst = torch.tensor([us], device="cuda")
        dist.all_reduce(worst, op=dist.ReduceOp.MAX)
        if rank == 0:
            b = count * 4
            busbw = b / (worst.item() * 1e-6) / 1e9 * 2 * (n - 1) / n
            queue.put(f"{label} {b} {worst.item():.1f} {busbw:.2f}")
    dist.destroy_process_group()


def main():
    n = int(sys.argv[1])
    label = sys.argv[2]
    sizes = [int(s) for s in sys.argv[3:]] or [8, 8 << 20, 512 << 20]
    port = 29500 + (os.getpid() % 1000)
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    procs = [ctx.Process(target=worker, args=(r, n, port, label, sizes, queue)) for r in range(n)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=600)
    code = max(p.exitcode or 0 for p in procs)
    while not queue.empty():
        print(queue.get())
    sys.exit(code)


if __name__ == "__main__":
    main()
