package org.sparkccl.idle;

/** How an idle pass gives up the CPU; tests replace it to see the sequence of a strategy. */
interface Pause {
  /** Stay on the core, hinting the CPU that this is a busy-wait. */
  void spin();

  /** Let another thread of this core run. */
  void yieldCpu();

  Pause THREAD =
      new Pause() {
        @Override
        public void spin() {
          Thread.onSpinWait();
        }

        @Override
        public void yieldCpu() {
          Thread.yield();
        }
      };
}
