/** The Spark executor plugin, barrier-task rendezvous and RDD API (coming with the plugin issue). */
package org.sparkccl.spark;
