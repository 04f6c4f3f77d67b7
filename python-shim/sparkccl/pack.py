"""Command line helpers for launching Spark with SparkCCL.

``python3 -m sparkccl.pack jars`` prints the bundled jars, comma-joined, for ``--jars``.
``python3 -m sparkccl.pack zip [PATH]`` writes this package's Python code as a zip for
``--py-files`` (Spark's Python workers import ``.py`` from zips, not from folders) and prints the
zip's path (default ``./sparkccl.zip``); the jars stay out of it, they travel by ``--jars``.

    spark-submit --jars "$(python3 -m sparkccl.pack jars)" \\
        --py-files "$(python3 -m sparkccl.pack zip)" \\
        --conf spark.plugins=org.sparkccl.spark.SparkCCLPlugin app.py
"""

import argparse
import os
import sys
import zipfile
from typing import List, Optional

from sparkccl._bundle import jars_conf

_PACKAGE = os.path.dirname(os.path.abspath(__file__))


def write_zip(path: str) -> str:
    """Writes the ``sparkccl`` package (its ``.py`` files and ``py.typed``) to the zip ``path``;
    returns the zip's absolute path."""
    path = os.path.abspath(path)
    root = os.path.dirname(_PACKAGE)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for folder, dirs, files in os.walk(_PACKAGE):
            dirs[:] = sorted(d for d in dirs if d not in ("jars", "__pycache__"))
            for name in sorted(files):
                if name.endswith(".py") or name == "py.typed":
                    full = os.path.join(folder, name)
                    z.write(full, os.path.relpath(full, root))
    return path


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python3 -m sparkccl.pack",
        description="Prints what spark-submit, pyspark and spark.jars need to run SparkCCL.",
    )
    sub = parser.add_subparsers(dest="what", required=True)
    sub.add_parser("jars", help="the bundled jars, comma-joined (for --jars or spark.jars)")
    z = sub.add_parser("zip", help="write the package as a zip for --py-files; print its path")
    z.add_argument("path", nargs="?", default="sparkccl.zip", help="default: ./sparkccl.zip")
    args = parser.parse_args(argv)
    try:
        print(jars_conf() if args.what == "jars" else write_zip(args.path))
    except FileNotFoundError as e:
        print("sparkccl.pack: %s" % e, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
