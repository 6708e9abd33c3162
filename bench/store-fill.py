#!/usr/bin/env python3
"""Fill a SQLite results store with many runs for bench/scale.sh (a benchmark's data, never a test's).

    bench/store-fill.py TEMPLATE.db OUT.db SUITES [spread|pairs]

TEMPLATE.db holds one suite of real runs (`envbench run --smoke`, or any runs); OUT.db gets SUITES copies of them,
each copy a suite of its own: new run ids and uuids, a start a minute before the previous copy's, its samples scaled
by a factor of its own (so no two copies are alike), and a label: copy k is label `a` when k % 100 == 1, `b` when
k % 100 == 2, and `env-(k % 50)` otherwise, so at 100,000 runs of a six-run suite labels a and b have 1,000 runs each
(`spread`, the default); with `pairs`, odd copies are `a` and even ones `b` (the same two sides alone in a store).

The copies go in the way envbench writes a run, as the store's triggers allow: each run as `running`, then its rows,
then its end. Every table with a `run_id` column is copied, and every table keyed by a result's id, so the copy
follows the schema as migrations add tables. Rows are written by INSERT ... SELECT over a table of copy numbers,
in one transaction.
"""

import shutil
import sqlite3
import sys


def columns(db, table):
    return [row[1] for row in db.execute(f"PRAGMA table_info({table})")]


def main():
    template, out, suites = sys.argv[1], sys.argv[2], int(sys.argv[3])
    pairs = len(sys.argv) > 4 and sys.argv[4] == "pairs"
    shutil.copyfile(template, out)
    db = sqlite3.connect(out, isolation_level=None)
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("PRAGMA synchronous = OFF")
    tables = [row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    runs = db.execute("SELECT count(*), max(id) FROM runs").fetchone()
    results = db.execute("SELECT count(*), max(id) FROM results").fetchone()
    if runs[0] == 0:
        sys.exit(f"{template}: no runs to copy")
    run_stride, result_stride = runs[1] + 1, (results[1] or 0) + 1
    db.execute("BEGIN")
    db.execute("CREATE TEMP TABLE copies (k INTEGER PRIMARY KEY)")
    db.execute(
        "WITH RECURSIVE n(k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM n WHERE k < ?) INSERT INTO copies SELECT k FROM n",
        (suites,),
    )
    # A copy's ids: the template's, offset by the copy number times the template's largest id plus one.
    new_run = f"t.run_id + c.k * {run_stride}"
    new_result = f"t.result_id + c.k * {result_stride}"
    label = "CASE WHEN c.k % 100 = 1 THEN 'a' WHEN c.k % 100 = 2 THEN 'b' ELSE 'env-' || (c.k % 50) END"
    if pairs:
        label = "CASE WHEN c.k % 2 = 1 THEN 'a' ELSE 'b' END"
    # A copy's uuid: the template's, its first eight digits (what listings show) a hash of the copy number and, for a
    # run, the template run's id; a suite's copies keep one suite id.
    new_uuid = "printf('%08x', (c.k * 2654435761 + {salt}) % 4294967296) || substr({uuid}, 9)"
    run_columns = columns(db, "runs")
    chosen = {
        "id": f"t.id + c.k * {run_stride}",
        "uuid": new_uuid.format(salt="t.id * 40503", uuid="t.uuid"),
        "label": label,
        "started_at": "strftime('%Y-%m-%dT%H:%M:%fZ', t.started_at, '-' || c.k || ' minutes')",
        "ended_at": "NULL",
        "status": "'running'",
        "status_reason": "NULL",
        "suite_id": f"CASE WHEN t.suite_id IS NULL THEN NULL ELSE {new_uuid.format(salt='0', uuid='t.suite_id')} END",
    }
    db.execute(
        f"INSERT INTO runs ({', '.join(run_columns)}) SELECT "
        + ", ".join(chosen.get(col, f"t.{col}") for col in run_columns)
        + " FROM runs t, copies c WHERE t.status <> 'running'"
    )
    # Side b is 3% slower (larger figures) than side a.
    b = "c.k % 2 = 0" if pairs else "c.k % 100 = 2"
    factor = f"(1.0 + ((c.k * 7919) % 101 - 50) / 2000.0 + CASE WHEN {b} THEN 0.03 ELSE 0 END)"
    for table in tables:
        if table == "runs" or table.startswith("sqlite_"):
            continue
        cols = columns(db, table)
        if "run_id" in cols:
            source, ids = f"{table} t", {"run_id": new_run}
        elif "result_id" in cols:
            source, ids = f"{table} t", {"result_id": new_result}
        else:
            continue
        if table == "uploads":
            continue  # who uploaded a run is the service's record, not the run's
        if table == "results":
            ids["id"] = f"t.id + c.k * {result_stride}"
        elif "id" in cols:
            cols = [col for col in cols if col != "id"]  # a row id of its own (the sampler tables)
        if table == "samples":
            ids["value"] = f"t.value * {factor}"
        if table == "run_tags":
            ids["value"] = f"CASE WHEN t.key = 'suite' THEN {new_uuid.format(salt='0', uuid='t.value')} ELSE t.value END"
        db.execute(
            f"INSERT INTO {table} ({', '.join(cols)}) SELECT "
            + ", ".join(ids.get(col, f"t.{col}") for col in cols)
            + f" FROM {source}, copies c WHERE {('t.run_id' if 'run_id' in columns(db, table) else '(SELECT run_id FROM results WHERE id = t.result_id)')} < {run_stride}"
        )
    db.execute(
        f"UPDATE runs SET status = (SELECT t.status FROM runs t WHERE t.id = runs.id % {run_stride}), "
        f"status_reason = (SELECT t.status_reason FROM runs t WHERE t.id = runs.id % {run_stride}), "
        f"ended_at = strftime('%Y-%m-%dT%H:%M:%fZ', (SELECT t.ended_at FROM runs t WHERE t.id = runs.id % {run_stride}), "
        f"'-' || (runs.id / {run_stride}) || ' minutes') WHERE id >= {run_stride}"
    )
    db.execute("COMMIT")
    total = db.execute("SELECT count(*) FROM runs").fetchone()[0]
    print(f"{out}: {total} runs", file=sys.stderr)


if __name__ == "__main__":
    main()
