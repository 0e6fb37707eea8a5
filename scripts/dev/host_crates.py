#!/usr/bin/env python3
"""Lists the crates that only run while compiling (proc macros, build-script dependencies, and the
syn/quote/proc-macro2 family they stand on), which Cargo.toml puts back at opt-level 0 in the dev
profile. Prints the lines of `[profile.dev.package]` to paste; with --check, exits 1 if
Cargo.toml lacks one.

    python3 scripts/dev/host_crates.py [--check]
"""
import json
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# Used at run time too, but only by D-Bus type parsing (the file dialog's portal), never hot.
ALSO = {"syn", "quote", "proc-macro2", "unicode-ident", "zvariant_utils"}


def host_only() -> list[str]:
    meta = json.loads(subprocess.run(
        ["cargo", "metadata", "--format-version", "1", "--filter-platform", "x86_64-unknown-linux-gnu"],
        cwd=ROOT, check=True, capture_output=True, text=True).stdout)
    pkg = {p["id"]: p for p in meta["packages"]}
    nodes = {n["id"]: n for n in meta["resolve"]["nodes"]}

    def proc_macro(i: str) -> bool:
        return any("proc-macro" in t["kind"] for t in pkg[i]["targets"])

    # What the workspace's code links: normal and dev dependencies, not through proc macros.
    linked, stack = set(), list(meta["workspace_members"])
    while stack:
        i = stack.pop()
        if i in linked:
            continue
        linked.add(i)
        for d in nodes[i]["deps"]:
            if any(k["kind"] in (None, "dev") for k in d["dep_kinds"]) and not proc_macro(d["pkg"]):
                stack.append(d["pkg"])
    linked_names = {pkg[i]["name"] for i in linked}
    names = {pkg[i]["name"] for i in set(nodes) - linked} - linked_names
    return sorted(names | ALSO)


def main() -> int:
    names = host_only()
    if "--check" in sys.argv:
        toml = tomllib.loads((ROOT / "Cargo.toml").read_text())
        have = toml["profile"]["dev"]["package"]
        missing = [n for n in names if have.get(n, {}).get("opt-level") != 0]
        for n in missing:
            print(f"Cargo.toml: [profile.dev.package] has no {n} = {{ opt-level = 0 }}")
        return 1 if missing else 0
    for n in names:
        print(f"{n} = {{ opt-level = 0 }}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
