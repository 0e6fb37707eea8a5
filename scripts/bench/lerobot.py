#!/usr/bin/env python3
"""`bagscope export --format lerobot` against a reference converter written as today's are
(scripts/bench/lerobot_reference.py: rosbags, PyAV decoding every frame and encoding it again
with libsvtav1, pyarrow), side by side in one run (docs/benchmarks/2026-11-29-lerobot.md):

    python3 scripts/bench/lerobot.py WORKDIR [ROUNDS]

Writes into WORKDIR the demo recording (180 s, one H.264 camera) and a 600 s one, whose camera
is mapped twice (two camera features: two MP4s written), and times both converters
interleaved (scripts/bench/interleave.py). Needs `pip install rosbags av pyarrow numpy`.
"""
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BIN = ROOT / "target" / "release" / "bagscope"
MAP = """fps: 10
task: drive
align: hold
observation.state: [/odom.pose.pose.position.x, /odom.pose.pose.position.y]
action: [/cmd_vel.linear.x, /cmd_vel.angular.z]
"""


def main() -> int:
    work = Path(sys.argv[1])
    rounds = sys.argv[2] if len(sys.argv) > 2 else "3"
    work.mkdir(parents=True, exist_ok=True)
    cmds = []
    for seconds, cams in [(180, 1), (600, 2)]:
        bag = work / f"demo{seconds}.bag"
        if not bag.exists():
            subprocess.run([BIN, "demo", bag, "--seconds", str(seconds)], check=True,
                           stdout=subprocess.DEVNULL)
        m = work / f"map{seconds}.yaml"
        m.write_text(MAP + "".join(f"observation.images.cam{k}: /camera/front/h264\n"
                                   for k in range(cams)))
        cmds.append(f"sh -c 'rm -rf {work}/ours{seconds} && {BIN} export {bag} --format lerobot "
                    f"--mapping {m} -o {work}/ours{seconds}'")
        cams_args = " ".join(["/camera/front/h264"] * cams)
        cmds.append(f"sh -c 'rm -rf {work}/ref{seconds} && {sys.executable} "
                    f"{ROOT}/scripts/bench/lerobot_reference.py {bag} {work}/ref{seconds} 10 "
                    "/odom:pose.pose.position.x,/odom:pose.pose.position.y "
                    f"/cmd_vel:linear.x,/cmd_vel:angular.z {cams_args} >/dev/null 2>&1'")
    return subprocess.call([sys.executable, str(ROOT / "scripts/bench/interleave.py"), rounds, "--",
                            " ;; ".join(cmds)])


if __name__ == "__main__":
    sys.exit(main())
