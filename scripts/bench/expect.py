#!/usr/bin/env python3
"""`bagscope check --expect` against `bagscope info --freq` on the 5 M-message benchmark bag
(docs/benchmarks/2026-11-29-expectations.md):

    python3 scripts/bench/expect.py [BAG] [ROUNDS]

BAG defaults to bench-bags/many_small_lz4.bag (../shared/tools/gen_bench_bags.py). Writes two
rules files beside it, both met by the bag: `rules_index.yaml` (every topic's type, count, rate,
share of periods, longest gap, start and end: what the index says, as `info --freq` reads it)
and `rules_values.yaml` (the same, and on the 1 kHz `/imu` two value conditions and its header
stamps' lag: its messages read from every chunk), then times the three commands interleaved
(scripts/bench/interleave.py).
"""
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BIN = ROOT / "target" / "release" / "bagscope"


def main() -> int:
    bag = Path(sys.argv[1] if len(sys.argv) > 1 else "bench-bags/many_small_lz4.bag")
    rounds = sys.argv[2] if len(sys.argv) > 2 else "7"
    info = json.loads(subprocess.check_output([BIN, "info", "--json", bag]))
    lines = ["topics:"]
    for t in info["topics"]:
        lines += [f"  {json.dumps(t['name'])}:", f"    type: {t['type']}", "    count: [1000, null]",
                  "    rate: [50, 2000]", "    rate_share: 0.5", "    max_gap: 0.1",
                  "    start_within: 1.0", "    end_within: 1.0"]
    index = bag.parent / "rules_index.yaml"
    index.write_text("\n".join(lines) + "\n")
    text = index.read_text().replace(
        '  "/imu":\n',
        '  "/imu":\n    stamp_lag: [-0.01, 0.01]\n    values:\n'
        "      - .linear_acceleration.z > 0\n      - .angular_velocity.x < 100\n", 1)
    values = bag.parent / "rules_values.yaml"
    values.write_text(text)
    for r in (index, values):
        subprocess.run([BIN, "check", "--expect", r, bag], check=True, stdout=subprocess.DEVNULL)
    cmds = [f"{BIN} info --freq {bag}", f"{BIN} check --expect {index} {bag}",
            f"{BIN} check --expect {values} {bag}"]
    return subprocess.call([sys.executable, str(ROOT / "scripts/bench/interleave.py"), rounds, "--",
                            " ;; ".join(cmds)])


if __name__ == "__main__":
    sys.exit(main())
