/** Example jobs; the spark-submit AllReduceJob comes with the plugin issue. */
package org.sparkccl.examples;
