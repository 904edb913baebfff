"""`pip install .` from the checkout, offline, into a fresh virtual environment; then the
installed package runs an asset."""

import os
import subprocess
import sys
import textwrap

from conftest import BINARY_DIR, SOURCE_DIR


def test_pip_install_into_a_venv_then_run(tmp_path):
    venv = tmp_path / "venv"
    subprocess.run(["/usr/bin/python3", "-m", "venv", "--system-site-packages", str(venv)], check=True)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["INTERLOPER_BUILD_DIR"] = str(BINARY_DIR)  # reuse the tree ctest built
    env["PIP_NO_INDEX"] = "1"  # offline: nothing may come from a package index
    pip = subprocess.run([str(venv / "bin" / "pip"), "install", "--no-index", str(SOURCE_DIR)],
                         env=env, capture_output=True, text=True, timeout=900)
    assert pip.returncode == 0, pip.stdout + pip.stderr
    script = textwrap.dedent('''
        import datetime as dt, interloper as il
        assert il.__file__.startswith(%r), il.__file__

        @il.asset(partitioning=il.TimePartitionConfig(column="date"))
        def hello(context):
            return [{"date": context.partition_date, "greeting": "hi"}]

        assert il.DAG(hello).materialize(il.TimePartition(dt.date(2026, 1, 1))).ok
        print(hello.read())
    ''' % str(venv))
    run = subprocess.run([str(venv / "bin" / "python"), "-c", script], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert "'greeting': 'hi'" in run.stdout
