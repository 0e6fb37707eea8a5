#!/usr/bin/env python3
"""Behaviour unchanged? Runs two builds of bagscope side by side over the corpora and compares
what they print and write, byte for byte.

Usage: python3 scripts/dev/same_output.py OLD_BINARY NEW_BINARY [--limit N]

For every recording of ../shared/bags and ../shared/bags2 (bag and mcap files, rosbag2
directories): `info`, `check`, `echo --json` (first 2,000 messages), `csv` of the first numeric
field `echo` shows, and `export` to a ROS 1 bag (ROS 1 inputs), to MCAP and to rosbag2 SQLite;
the exit codes, standard output and standard error (durations and rates left out) must be
equal, and so must the files
written (for rosbag2 outputs: every file of the directory but metadata.yaml's creation time).
Paths of the temporary outputs are the same for both builds, so messages naming them compare.
Prints one line per difference and a count; exits 1 if any.
"""
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / 'shared'


def recordings(limit):
    out = []
    for base in [SHARED / 'bags', SHARED / 'bags2']:
        for p in sorted(base.rglob('*')):
            if p.is_file() and p.suffix in ('.bag', '.mcap') and 'metadata.yaml' not in p.name:
                if (p.parent / 'metadata.yaml').exists():
                    continue
                out.append(p)
            elif p.is_dir() and (p / 'metadata.yaml').exists():
                out.append(p)
    return out[:limit] if limit else out


def digest_tree(p):
    """What an output is: a file's bytes, or each file of a directory (metadata.yaml without
    the lines that carry the time it was written)."""
    if not p.exists():
        return 'absent'
    if p.is_file():
        return hashlib.sha256(p.read_bytes()).hexdigest()
    parts = []
    for f in sorted(p.rglob('*')):
        if f.is_file():
            b = f.read_bytes()
            if f.name == 'metadata.yaml':
                b = re.sub(rb'nanoseconds_since_epoch: \d+', b'', b)
            parts.append(f'{f.relative_to(p)}:{hashlib.sha256(b).hexdigest()}')
    return ';'.join(parts)


def run(exe, args, work):
    r = subprocess.run([exe] + args, capture_output=True, cwd=work, timeout=600,
                       env=dict(os.environ, BAGSCOPE_INDEX_DIR='off'))
    # Durations and rates (`check`'s "0.01 s (475.2 KB/s)") differ from run to run.
    timing = rb'\d+(\.\d+)? s \([\d.]+ [KMGT]?B/s\)|in \d+(\.\d+)? s\b'
    return r.returncode, re.sub(timing, b'T', r.stdout), re.sub(timing, b'T', r.stderr)


def first_numeric_path(exe, rec, work):
    code, out, _ = run(exe, ['echo', '--json', '-n', '1', str(rec)], work)
    if code != 0 or not out.strip():
        return None
    m = json.loads(out.splitlines()[0])

    def walk(v, path):
        if isinstance(v, bool):
            return None
        if isinstance(v, (int, float)):
            return path
        if isinstance(v, dict):
            for k, x in v.items():
                r = walk(x, f'{path}.{k}')
                if r:
                    return r
        return None
    topic = m['topic'] if m['topic'].startswith('/') else '/' + m['topic']
    return walk(m['message'], topic)


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        sys.exit(2)
    old, new = str(Path(sys.argv[1]).resolve()), str(Path(sys.argv[2]).resolve())
    limit = int(sys.argv[sys.argv.index('--limit') + 1]) if '--limit' in sys.argv else 0
    diffs = 0
    runs = 0
    written = 0
    recs = 0
    work = Path(tempfile.mkdtemp(prefix='bagscope-same-'))
    for rec in recordings(limit):
        recs += 1
        cases = [
            ['info', str(rec)],
            ['check', str(rec)],
            ['echo', '--json', '-n', '2000', str(rec)],
        ]
        path = first_numeric_path(new, rec, work)
        if path:
            cases.append(['csv', str(rec), path, '-o', '-'])
        outs = [('mcap', work / 'out.mcap'), ('rosbag2', work / 'out_r2')]
        if rec.suffix == '.bag':
            outs.append(('bag', work / 'out.bag'))
        for fmt, out in outs:
            name = 'rosbag2-sqlite3' if fmt == 'rosbag2' else fmt
            cases.append(['export', str(rec), '--output', str(out), '--format', name])
        for args in cases:
            seen = []
            for exe in (old, new):
                for o in outs:
                    shutil.rmtree(o[1], ignore_errors=True) if o[1].is_dir() else o[1].unlink(missing_ok=True)
                code, out, err = run(exe, args, work)
                files = tuple(digest_tree(o[1]) for o in outs) if args[0] == 'export' else ()
                seen.append((code, out, err, files))
            runs += 1
            written += sum(1 for f in seen[1][3] if f not in ('absent', ''))
            if seen[0] != seen[1]:
                diffs += 1
                what = [n for n, a, b in zip(['exit code', 'stdout', 'stderr', 'files'], seen[0], seen[1]) if a != b]
                print(f'DIFFERENT ({", ".join(what)}): {" ".join(args)}')
                if 'stderr' in what:
                    print(f'  old: {seen[0][2][:300]!r}\n  new: {seen[1][2][:300]!r}')
    shutil.rmtree(work, ignore_errors=True)
    print(f'{recs} recordings, {runs} runs ({written} outputs written), {diffs} different')
    sys.exit(1 if diffs else 0)


if __name__ == '__main__':
    main()
