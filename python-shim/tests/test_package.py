"""The package as a user gets it: errors from Java text, the zip for --py-files, the README's
quick start and spark-submit lines in fresh processes, and `pip install` into a virtual env.

Run: python3 -m unittest discover -s python-shim/tests  (after mvn package, which bundles the jars).
"""

import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SHIM = os.path.join(ROOT, "python-shim")
sys.path.insert(0, SHIM)

from sparkccl import errors  # noqa: E402
from sparkccl.errors import (  # noqa: E402
    CclAbortError,
    CclArgumentError,
    CclError,
    CclMismatchError,
    CclTimeoutError,
)

BUNDLED = glob.glob(os.path.join(SHIM, "sparkccl", "jars", "sparkccl-spark-plugin-*.jar"))
NEEDS_JARS = ("SKIPPED: build the jars first (mvn package copies them into"
              " python-shim/sparkccl/jars)")
PLUGIN_CONF = "spark.plugins=org.sparkccl.spark.SparkCCLPlugin"


def _has(module):
    try:
        __import__(module)
        return True
    except ImportError:
        return False


def _readme_blocks(lang):
    with open(os.path.join(SHIM, "README.md")) as f:
        return re.findall(r"```%s\n(.*?)```" % lang, f.read(), re.S)


class JavaMessageTest(unittest.TestCase):
    def test_each_engine_exception_becomes_its_subclass_with_its_own_line(self):
        cases = [
            ("org.sparkccl.CclMismatchException: rank 1 called allReduce(count=3, float32, sum)"
             " as operation #1 but rank 0 called allReduce(count=4, float32, sum) as operation #1",
             CclMismatchError, "rank 1 called allReduce(count=3"),
            ("org.sparkccl.CclTimeoutException: rank 2: allReduce #4 timed out after 30 s",
             CclTimeoutError, "rank 2: allReduce #4 timed out after 30 s"),
            ("org.sparkccl.CclAbortedException: rank 0: communicator aborted by abort()",
             CclAbortError, "rank 0: communicator aborted by abort()"),
            ("org.sparkccl.CclRemoteException: rank 3: connection closed by the peer",
             CclAbortError, "rank 3: connection closed by the peer"),
            ("java.lang.IllegalArgumentException: root=9 is not a partition; expected 0..3",
             CclArgumentError, "root=9 is not a partition; expected 0..3"),
            ("org.sparkccl.CclException: rank 1: allGather failed: boom", CclError,
             "rank 1: allGather failed: boom"),
        ]
        for text, cls, message in cases:
            e = errors.from_java_message(text)
            self.assertIs(cls, type(e), text)
            self.assertTrue(str(e).startswith(message), str(e))
        self.assertIsInstance(errors.from_java_message("x: timed out"), TimeoutError)
        self.assertIsInstance(errors.from_java_message("java.lang.IllegalArgumentException: x"),
                              ValueError)

    def test_a_failed_job_keeps_only_the_engine_line_and_a_peers_mismatch_counts_as_one(self):
        trace = "\n".join("\tat org.apache.spark.Foo.bar%d(Foo.scala:%d)" % (i, i)
                          for i in range(80))
        text = ("org.apache.spark.SparkException: Job aborted due to stage failure: Task 1 in stage"
                " 3.0 failed 1 times, most recent failure: Lost task 1.0 in stage 3.0 (TID 9)"
                " (host executor driver): org.sparkccl.CclAbortedException: rank 1: communicator is"
                " aborted: rank 0 called allReduce(count=3, float64, sum) as operation #2 but rank"
                " 1 called allReduce(count=4, float64, sum) as operation #2\n" + trace)
        e = errors.from_java_message(text)
        self.assertIs(CclMismatchError, type(e))
        self.assertTrue(str(e).startswith("rank 1: communicator is aborted: rank 0 called"), str(e))
        self.assertNotIn("\n", str(e))
        self.assertLess(len(str(e)), 300)

    def test_a_text_naming_no_java_class_is_classified_by_its_words(self):
        self.assertIs(CclTimeoutError, type(errors.from_java_message("rank 0: timed out waiting")))
        self.assertIs(CclAbortError, type(errors.from_java_message("the communicator was aborted")))
        self.assertIs(CclError, type(errors.from_java_message("\n  something else\nmore")))
        self.assertEqual("something else", str(errors.from_java_message("\n  something else\n")))


class PackTest(unittest.TestCase):
    def test_the_zip_holds_the_python_package_and_imports_without_the_source_tree(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = subprocess.run(
                [sys.executable, "-m", "sparkccl.pack", "zip"], cwd=tmp, check=True,
                capture_output=True, text=True,
                env=dict(os.environ, PYTHONPATH=SHIM)).stdout.strip()
            self.assertEqual(os.path.join(os.path.realpath(tmp), "sparkccl.zip"),
                             os.path.realpath(out))
            names = zipfile.ZipFile(out).namelist()
            for name in ("sparkccl/__init__.py", "sparkccl/errors.py", "sparkccl/py.typed",
                         "sparkccl/ml/__init__.py"):
                self.assertIn(name, names)
            self.assertFalse([n for n in names if n.endswith(".jar")], names)
            probe = "import sparkccl.errors as e; print(e.__file__)"
            where = subprocess.run([sys.executable, "-c", probe], cwd=tmp, check=True, text=True,
                                   capture_output=True, env=dict(os.environ, PYTHONPATH=out))
            self.assertIn("sparkccl.zip", where.stdout)


@unittest.skipUnless(BUNDLED, NEEDS_JARS)
class ReadmeTest(unittest.TestCase):
    """The README's Python blocks, run in fresh processes from a directory outside the tree."""

    def _env(self, pythonpath):
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "SPARK_HOME")}
        if pythonpath:
            env["PYTHONPATH"] = pythonpath
        env["PYSPARK_PYTHON"] = sys.executable
        env["PYSPARK_DRIVER_PYTHON"] = sys.executable
        return env

    def test_the_quick_start_runs_on_the_default_local_star_master(self):
        quick = _readme_blocks("python")[0]
        self.assertIn("getOrCreate()", quick)
        self.assertNotIn(".master(", quick)  # local[*], as the user who found the stall had
        with tempfile.TemporaryDirectory() as tmp:
            run = subprocess.run([sys.executable, "-c", quick], cwd=tmp, capture_output=True,
                                 text=True, timeout=240, env=self._env(SHIM))
        self.assertEqual(0, run.returncode, run.stderr[-3000:])
        self.assertRegex(run.stdout, r"^\d+ True\s*$")

    def test_spark_submit_with_jars_and_a_py_files_zip_runs_the_app(self):
        app = _readme_blocks("python")[1]
        line = [b for b in _readme_blocks("bash") if b.startswith("spark-submit")][0].strip()
        self.assertIn('--jars "$(python3 -m sparkccl.pack jars)"', line)
        self.assertIn('--py-files "$(python3 -m sparkccl.pack zip)"', line)
        submit = shutil.which("spark-submit")
        if submit is None:
            self.skipTest("SKIPPED: no spark-submit on PATH (pip install pyspark provides it)")
        with tempfile.TemporaryDirectory() as tmp:
            with open(os.path.join(tmp, "app.py"), "w") as f:
                f.write(app)
            pack = [sys.executable, "-m", "sparkccl.pack"]
            jars = subprocess.run(pack + ["jars"], cwd=tmp, check=True, capture_output=True,
                                  text=True, env=self._env(SHIM)).stdout.strip()
            zipped = subprocess.run(pack + ["zip"], cwd=tmp, check=True, capture_output=True,
                                    text=True, env=self._env(SHIM)).stdout.strip()
            # the README's line with the two substitutions done; sparkccl comes from the zip only
            args = [submit, "--master", "local[2]", "--jars", jars, "--py-files", zipped,
                    "--conf", PLUGIN_CONF, "app.py"]
            self.assertEqual(line.replace('"$(python3 -m sparkccl.pack jars)"', jars)
                             .replace('"$(python3 -m sparkccl.pack zip)"', zipped)
                             .replace('"local[2]"', "local[2]").split()[1:],
                             args[1:])
            run = subprocess.run(args, cwd=tmp, capture_output=True, text=True, timeout=240,
                                 env=self._env(None))
        self.assertEqual(0, run.returncode, run.stderr[-3000:])
        self.assertIn("[array('d', [4.0, 6.0]), array('d', [4.0, 6.0])]", run.stdout)


@unittest.skipUnless(BUNDLED, NEEDS_JARS)
class PipInstallTest(unittest.TestCase):
    def test_pip_installs_the_package_with_its_jars_and_type_hints(self):
        with tempfile.TemporaryDirectory() as tmp:
            src = os.path.join(tmp, "python-shim")  # a copy: pip builds in the source folder
            shutil.copytree(SHIM, src, ignore=shutil.ignore_patterns("__pycache__", "tests"))
            venv = os.path.join(tmp, "venv")
            subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", venv],
                           check=True)
            py = os.path.join(venv, "bin", "python")
            # offline where this Python has setuptools' wheel builder, else pip fetches it
            offline = ["--no-build-isolation", "--no-index"] if _has("wheel") else []
            pip = subprocess.run([py, "-m", "pip", "install", "-q"] + offline + [src],
                                 capture_output=True, text=True, timeout=300)
            if pip.returncode != 0 and not offline and "NewConnectionError" in pip.stderr:
                self.skipTest("SKIPPED: pip needs setuptools' wheel builder (pip install wheel)"
                              " or a package index, and has neither")
            self.assertEqual(0, pip.returncode, pip.stdout + pip.stderr)
            probe = ("import os, sparkccl; j = sparkccl.jars(); "
                     "print(os.path.dirname(sparkccl.__file__)); print(len(j)); "
                     "print(os.path.isfile(os.path.join(os.path.dirname(sparkccl.__file__),"
                     " 'py.typed')))")
            env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
            out = subprocess.run([py, "-c", probe], cwd=os.path.sep, check=True, text=True,
                                 capture_output=True, env=env).stdout.split()
        self.assertTrue(out[0].startswith(venv), out)
        self.assertEqual(len(glob.glob(os.path.join(SHIM, "sparkccl", "jars", "*.jar"))),
                         int(out[1]))
        self.assertEqual("True", out[2])


if __name__ == "__main__":
    unittest.main()
