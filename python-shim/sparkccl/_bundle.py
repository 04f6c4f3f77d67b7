"""The SparkCCL jars this package carries (copied in by the Maven build), wherever it is run."""

import glob
import os
from typing import List

PLUGIN = "org.sparkccl.spark.SparkCCLPlugin"
"""The value of ``spark.plugins`` that turns SparkCCL on."""

_JARS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "jars")


def jars() -> List[str]:
    """Absolute paths of the SparkCCL jars bundled with this package: the plugin, the engine and
    the libraries Spark does not bring itself (UCX's and CUDA's Java bindings).

    >>> spark = (SparkSession.builder                       # doctest: +SKIP
    ...          .config("spark.jars", ",".join(sparkccl.jars()))
    ...          .config("spark.plugins", sparkccl.PLUGIN).getOrCreate())

    :raises FileNotFoundError: when the package holds no jars (installed from a source tree that
        was not built: run ``mvn package`` first, then install again)
    """
    found = sorted(glob.glob(os.path.join(_JARS, "*.jar")))
    if not any(os.path.basename(j).startswith("sparkccl-spark-plugin") for j in found):
        raise FileNotFoundError(
            "no SparkCCL jars in %s: build them first (mvn package in the source tree, which copies"
            " them into python-shim/sparkccl/jars), then install the package again" % _JARS
        )
    return found


def jars_conf() -> str:
    """:func:`jars` joined by commas, the form of ``--jars`` and ``spark.jars``."""
    return ",".join(jars())
