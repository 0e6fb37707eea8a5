"""`bagscope catalog` over both corpora, read by DuckDB: every recording a row that says what
`bagscope info --json --freq` says of it (or why it did not open), its topics as rows; a second
run reads no unchanged recording again."""

import json
import os
import shutil
import subprocess

import duckdb


def run_catalog(cli, paths, out):
    r = subprocess.run([str(cli), "catalog", *map(str, paths), "-o", str(out)],
                       check=True, capture_output=True, text=True)
    return r.stderr


def test_catalog_reproduces_info_and_is_incremental(bags_dir, bags2_dir, cli, tmp_path):
    out = tmp_path / "catalog"
    first = run_catalog(cli, [bags_dir, bags2_dir], out)
    con = duckdb.connect()
    recs = con.sql(f"SELECT * FROM read_parquet('{out}/recordings.parquet') ORDER BY path").fetchall()
    names = [d[0] for d in con.sql(f"SELECT * FROM read_parquet('{out}/recordings.parquet')").description]
    rows = {r[names.index("path")]: dict(zip(names, r)) for r in recs}
    topics = con.sql(f"SELECT path, topic, type, messages, connections FROM read_parquet('{out}/topics.parquet')").fetchall()
    # Every recording of both corpora's expected.json is a row.
    for d in (bags_dir, bags2_dir):
        for name in json.loads((d / "expected.json").read_text()):
            assert str(d / name) in rows, f"{name}: no row"
    opened = [p for p, r in rows.items() if r["error"] is None]
    infos = subprocess.run([str(cli), "info", "--json", "--freq", *opened], capture_output=True, text=True).stdout
    infos = {j["path"]: j for j in map(json.loads, infos.splitlines())}
    assert len(infos) == len(opened) > 500
    by_rec = {}
    for p, t, ty, n, c in topics:
        by_rec.setdefault(p, {})[t] = (ty, n, c)
    for p, r in rows.items():
        if r["error"] is not None:
            # It does not open for info either, and says the same.
            e = subprocess.run([str(cli), "info", p], capture_output=True, text=True)
            assert e.returncode != 0 and r["error"] in e.stderr, p
            assert r["damaged"]
            continue
        i = infos[p]
        for k in ["size", "messages", "start_ns", "end_ns", "duration_ns", "chunks", "indexed"]:
            assert r[k] == i[k], f"{p}: {k} {r[k]} != {i[k]}"
        assert r["format"] == i["version"], p
        assert r["topics"] == len(i["topics"]) and r["connections"] == len(i["connections"]), p
        assert dict(r["compression"]) == {k: str(v) for k, v in i["compression"].items()}, p
        assert dict(r["storage"]) == i["storage"], p
        assert dict(r["metadata"]) == {f"{m['name']}.{k}": v for m in i["metadata"] for k, v in m["metadata"].items()}, p
        assert r["warnings"] == i["warnings"] and r["damaged"] == bool(i["warnings"]), p
        assert by_rec.get(p, {}) == {t["name"]: (t["type"], t["messages"], t["connections"]) for t in i["topics"]}, p
    # Log messages by severity, as `bagscope log` counts them.
    demo_logs = [p for p, r in rows.items() if r["log_info"] + r["log_warn"] + r["log_error"] > 0]
    assert demo_logs, "no recording with log messages counted"
    assert any(r["damaged"] and r["error"] for r in rows.values()), "no damaged file as a row"
    # A second run reads nothing again; a changed recording is read again.
    assert "0 unchanged" in first
    second = run_catalog(cli, [bags_dir, bags2_dir], out)
    assert f"(0 read, {len(rows)} unchanged" in second, second
    copy = tmp_path / "more"
    copy.mkdir()
    shutil.copy(bags_dir / "rosbag.js/example.bag", copy / "a.bag")
    run_catalog(cli, [copy], tmp_path / "c2")
    os.utime(copy / "a.bag", ns=(0, 10**18))
    third = run_catalog(cli, [copy], tmp_path / "c2")
    assert "(1 read, 0 unchanged" in third, third


def test_catalog_counts_diagnostics_and_lists_bookmarks(bags_dir, cli, tmp_path):
    runs = tmp_path / "runs"
    runs.mkdir()
    bag = runs / "husky.bag"
    bag.symlink_to(bags_dir / "navigation" / "gps_data.bag")
    info = json.loads(subprocess.run([str(cli), "info", "--json", "--freq", str(bag)],
                                     check=True, capture_output=True, text=True).stdout)
    start = info["start_ns"]
    # A sidecar as docs/app.md and bagscope's writer have it.
    (runs / "husky.bag.bookmarks.json").write_text(json.dumps({
        "bagscope_bookmarks": 1,
        "bookmarks": [{"start_ns": start + 2_500_000_000, "label": "power fault"},
                      {"start_ns": start + 10_000_000_000, "end_ns": start + 12_000_000_000,
                       "label": "hot"}]}))
    out = tmp_path / "catalog"
    run_catalog(cli, [runs], out)
    row = duckdb.connect().sql(
        f"SELECT diag_ok, diag_warn, diag_error, diag_stale, bookmarks "
        f"FROM read_parquet('{out}/recordings.parquet')").fetchall()
    assert len(row) == 1
    ok, warn, error, stale, bookmarks = row[0]
    s = info["diagnostics"]["statuses"]
    assert (ok, warn, error, stale) == (s["ok"], s["warn"], s["error"], s["stale"])
    assert error > 0
    assert bookmarks == ["power fault @ +2.500 s", "hot @ +10.000..+12.000 s"]
