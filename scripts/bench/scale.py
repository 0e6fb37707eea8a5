#!/usr/bin/env python3
"""The Scale figures: sparse recordings of 1 GB to 1 TB (bagscope gen-sparse: a real index for
200,000,000 messages per TiB on 100 topics, camera pixels left as holes), and on each the
summary (open), the whole message tables with the peak memory of the process, the export of
one minute, and optionally the app's frames (cargo bench --bench ui_frame -- --scale).

Usage: python3 scripts/bench/scale.py DIR [--sizes 1G,10G,100G,1T] [--formats bag,mcap] [--app]
       (release build first: cargo build --release; the bags stay in DIR, kept out of git;
       1 TB takes about 15 GB (bag) and 13 GB (MCAP) of real disk and 2-4 minutes to write)
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BIN = ROOT / 'target' / 'release' / 'bagscope'


def timed(cmd):
    """Runs cmd under /usr/bin/time: (stdout, seconds, peak RSS in GB)."""
    t0 = time.time()
    p = subprocess.run(['/usr/bin/time', '-f', 'RSS_KB=%M'] + cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f'{cmd} failed: {p.stderr}')
    rss = int(re.search(r'RSS_KB=(\d+)', p.stderr).group(1))
    return p.stdout, time.time() - t0, rss / 1e6


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('dir')
    ap.add_argument('--sizes', default='1G,10G,100G,1T')
    ap.add_argument('--formats', default='bag,mcap')
    ap.add_argument('--app', action='store_true', help='also run the ui_frame bench on each')
    a = ap.parse_args()
    d = Path(a.dir)
    d.mkdir(parents=True, exist_ok=True)
    rows = []
    for size in a.sizes.split(','):
        for fmt in a.formats.split(','):
            bag = d / f's{size}.{fmt}'
            if not bag.exists():
                subprocess.run([BIN, 'gen-sparse', bag, '--format', fmt, '--size', size], check=True)
            out, _, _ = timed([BIN, 'bench', bag, '--op', 'summary', '--runs', '5'])
            summary = json.loads(out)['summary']
            out, _, rss = timed([BIN, 'bench', bag, '--op', 'tables', '--runs', '1'])
            tables = json.loads(out)['tables']
            minute = d / f'minute.{fmt}'
            start = 0.5 * summary['messages'] / 20000
            _, secs, erss = timed([BIN, 'export', bag, '-o', minute, '--start', f'+{start:.0f}',
                                   '--end', f'+{start + 60:.0f}'])
            minute.unlink()
            row = {'size': size, 'format': fmt, 'apparent_bytes': os.path.getsize(bag),
                   'real_bytes': os.stat(bag).st_blocks * 512, 'messages': summary['messages'],
                   'summary_ms': summary['seconds'] * 1e3, 'tables_s': tables['seconds'],
                   'tables_rss_gb': rss, 'export_minute_s': secs, 'export_rss_gb': erss}
            if a.app:
                p = subprocess.run(['cargo', 'bench', '--bench', 'ui_frame', '--', '--scale', str(bag)],
                                   cwd=ROOT, capture_output=True, text=True)
                row['app'] = [l for l in p.stdout.splitlines() if 'ms' in l or 'GB' in l]
            rows.append(row)
            print(json.dumps(row), flush=True)
    print()
    print('| size | format | real disk | messages | summary | tables | peak RSS (tables) | export 1 min |')
    print('|---|---|---|---|---|---|---|---|')
    for r in rows:
        print(f"| {r['apparent_bytes'] / 1e9:,.0f} GB | {r['format']} | {r['real_bytes'] / 1e9:.2f} GB "
              f"| {r['messages']:,} | {r['summary_ms']:.2f} ms | {r['tables_s']:.2f} s "
              f"| {r['tables_rss_gb']:.2f} GB | {r['export_minute_s']:.2f} s |")


if __name__ == '__main__':
    main()
