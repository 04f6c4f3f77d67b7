package org.sparkccl.kernel;

/** Work for a kernel thread; cancelled instead of run when the thread stops first. */
public interface KernelTask {
  void run();

  /** The task will never run; called only after the kernel thread has ended. */
  void cancel();
}
