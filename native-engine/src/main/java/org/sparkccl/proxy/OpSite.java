package org.sparkccl.proxy;

import org.sparkccl.comm.CollectiveCall;

/**
 * Where a proxy operation runs (this rank, the peer and channel), made once per connection, so that
 * launching a collective builds no message text: {@link #describe} builds it from the call only
 * when something asks, such as an error.
 *
 * @param suffix what follows the call, such as {@code sending to rank 1 (channel 0)}
 */
public record OpSite(int rank, String suffix) {
  /** {@code rank 0: allReduce #17 (count=1024, float32, sum): sending to rank 1 (channel 0)}. */
  public String describe(CollectiveCall call) {
    return "rank " + rank + ": " + call.what() + ": " + suffix;
  }
}
