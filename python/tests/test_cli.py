"""`python3 -m interloper COMMAND FILE.py`: the command line over a Python file's assets, and
Ctrl-C during a run from Python."""

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

SHOP = textwrap.dedent('''
    import interloper as il

    @il.asset(partitioning=il.TimePartitionConfig(column="date"))
    def orders(context):
        if context.partition_date.day == 4:
            raise ValueError("no orders file for " + context.partition.key)
        return [{"date": context.partition_date, "amount": i} for i in range(3)]

    @il.asset(partitioning=il.TimePartitionConfig(column="date"))
    def revenue(context, orders):
        return [{"date": context.partition_date, "total": sum(o["amount"] for o in orders)}]
''')


def interloper(*args, cwd):
    return subprocess.run([sys.executable, "-m", "interloper", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=120)


def test_backfill_status_and_runs_of_a_python_file(workdir):
    (workdir / "shop.py").write_text(SHOP)
    done = interloper("backfill", "shop.py", "--window", "2026-11-01..2026-11-05", cwd=workdir)
    assert done.returncode == 1, done.stderr  # one partition fails
    assert "ValueError: no orders file for 2026-11-04 (" in done.stdout + done.stderr
    assert "shop.py, line 7, in orders" in done.stdout + done.stderr
    status = interloper("status", "shop.py", "--window", "2026-11-01..2026-11-06", cwd=workdir)
    assert status.returncode == 0, status.stderr
    assert "materialized      4" in status.stdout and "missing           1" in status.stdout
    runs = interloper("runs", "shop.py", cwd=workdir)
    assert "backfill --window 2026-11-01..2026-11-05" in runs.stdout


def test_a_python_run_shows_in_the_command_lines_status(workdir):
    (workdir / "shop.py").write_text(SHOP)
    run = subprocess.run([sys.executable, "-c", "import datetime as dt, interloper as il, shop; "
                          "il.DAG(shop.orders).materialize(il.TimePartition(dt.date(2026, 11, 2)))"],
                         cwd=workdir, timeout=60)
    assert run.returncode == 0
    status = interloper("status", "shop.py", "--asset", "orders", "--window", "2026-11-01..2026-11-02", cwd=workdir)
    assert "materialized      1  2026-11-02" in status.stdout, status.stdout + status.stderr
    runs = interloper("runs", "shop.py", cwd=workdir)
    assert "succeeded" in runs.stdout and "materialize 2026-11-02" in runs.stdout, runs.stdout


def test_a_python_backfill_records_its_canceled_tasks_in_runs(workdir):
    (workdir / "shop.py").write_text(SHOP)
    run = subprocess.run([sys.executable, "-c", "import datetime as dt, interloper as il, shop; "
                          "il.DAG(shop.orders, shop.revenue).backfill(il.TimePartitionWindow("
                          "dt.date(2026, 11, 3), dt.date(2026, 11, 4)))"],
                         cwd=workdir, timeout=60)
    assert run.returncode == 0
    runs = interloper("--json", "runs", "shop.py", cwd=workdir)
    last = json.loads(runs.stdout)[0]
    # orders 11-04 fails, so revenue 11-04 never starts: canceled, not failed.
    assert (last["status"], last["succeeded"], last["failed"], last["canceled"]) == \
        ("failed", 2, 1, 1), last


def test_bad_files_and_bad_input_exit_2(workdir):
    (workdir / "broken.py").write_text("import interloper as il\nraise RuntimeError('half written')\n")
    (workdir / "shop.py").write_text(SHOP)
    broken = interloper("status", "broken.py", cwd=workdir)
    assert broken.returncode == 2 and "RuntimeError: half written" in broken.stderr
    assert interloper("status", "missing.py", cwd=workdir).returncode == 2
    assert interloper("status", cwd=workdir).returncode == 2
    bad_key = interloper("materialize", "shop.py", "--partition", "2026-13-01", cwd=workdir)
    assert bad_key.returncode == 2 and "2026-13-01" in bad_key.stderr
    assert interloper("backfill", "shop.py", "--help", cwd=workdir).returncode == 0


def test_ctrl_c_stops_a_run_from_python(workdir):
    (workdir / "slow.py").write_text(textwrap.dedent('''
        import datetime as dt, sys, time
        import interloper as il

        @il.asset(partitioning=il.TimePartitionConfig(column="date"))
        def slow(context):
            print("started", context.partition.key, flush=True)
            time.sleep(0.5)
            return [{"date": context.partition_date}]

        window = il.TimePartitionWindow(dt.date(2026, 1, 1), dt.date(2026, 1, 30))
        try:
            il.DAG(slow).backfill(window, concurrency=2)
        except KeyboardInterrupt:
            print("interrupted", flush=True)
            sys.exit(3)
    '''))
    child = subprocess.Popen([sys.executable, "slow.py"], cwd=workdir, stdout=subprocess.PIPE, text=True)
    assert child.stdout.readline().startswith("started")
    time.sleep(0.2)
    child.send_signal(signal.SIGINT)
    out, _ = child.communicate(timeout=30)
    assert child.returncode == 3 and "interrupted" in out
    assert out.count("started") < 10  # nothing new started after Ctrl-C


def test_the_readme_quick_start_and_the_example_run(workdir):
    from conftest import SOURCE_DIR
    readme = (SOURCE_DIR / "README.md").read_text()
    section = readme.split("## Python quick start", 1)[1]
    code = section.split("```python\n", 1)[1].split("```", 1)[0]
    for name, text in [("quick", code), ("shop", (SOURCE_DIR / "examples" / "python" / "shop.py").read_text())]:
        (workdir / name).mkdir()
        (workdir / name / f"{name}.py").write_text(text)
        done = interloper("backfill", f"{name}.py", "--window", "2026-11-01..2026-11-03", cwd=workdir / name)
        assert done.returncode == 0, done.stdout + done.stderr
    status = interloper("status", "shop.py", "--window", "2026-11-01..2026-11-30", cwd=workdir / "shop")
    assert "materialized      3  2026-11-01..2026-11-03" in status.stdout
