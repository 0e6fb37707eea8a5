#!/usr/bin/env python3
"""Writes crates/bagscope-reader/interfaces/<distro>.msgs: the standard ROS message definitions bagscope ships,
for recordings that store none (rosbag2 SQLite before iron, ROS 1 bags before 1.2).

The definitions are those of the public interface packages (Apache-2.0 / BSD), as the `rosbags`
library (Apache-2.0) carries them per distro; each type's own fields and constants are written
in .msg syntax, types separated by a line of `=` and `MSG: pkg/msg/Type`, as bags store them.

    pip install rosbags==0.11.9 && python3 scripts/data/interfaces.py
"""
import pathlib

from rosbags.typesys import Stores, get_typestore
from rosbags.typesys.base import Nodetype

OUT = pathlib.Path(__file__).resolve().parents[2] / "crates" / "bagscope-reader" / "interfaces"
DISTROS = {
    "ros1_noetic": Stores.ROS1_NOETIC,
    "ros2_dashing": Stores.ROS2_DASHING,
    "ros2_foxy": Stores.ROS2_FOXY,
    "ros2_humble": Stores.ROS2_HUMBLE,
    "ros2_jazzy": Stores.ROS2_JAZZY,
}


def type_text(node, ros1):
    kind, rest = node
    if kind == Nodetype.BASE:
        name, bound = rest
        return f"{name}<={bound}" if bound else name
    if kind == Nodetype.NAME:
        if ros1:
            # rosbags models ROS 1 time and duration as the ROS 2 builtin types.
            builtin = {"builtin_interfaces/msg/Time": "time", "builtin_interfaces/msg/Duration": "duration"}
            return builtin.get(rest, rest.replace("/msg/", "/"))
        return rest
    if kind == Nodetype.ARRAY:
        sub, n = rest
        return f"{type_text(sub, ros1)}[{n}]"
    if kind == Nodetype.SEQUENCE:
        sub, bound = rest
        return f"{type_text(sub, ros1)}[<={bound}]" if bound else f"{type_text(sub, ros1)}[]"
    raise ValueError(node)


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    for distro, store in DISTROS.items():
        ts = get_typestore(store)
        ros1 = distro.startswith("ros1")
        parts = []
        for name in sorted(ts.fielddefs):
            if ros1 and name.startswith("builtin_interfaces/"):
                continue
            consts, fields = ts.fielddefs[name]
            lines = []
            for cname, ctype, value in consts:
                if isinstance(value, bool):
                    value = str(value).lower()
                lines.append(f"{ctype} {cname}={value}")
            for fname, node in fields:
                # rosidl's member of an empty type: the ROS 2 parser adds it itself, and ROS 1
                # types have no such member (std_msgs/Empty is zero bytes).
                if fname == "structure_needs_at_least_one_member":
                    continue
                lines.append(f"{type_text(node, ros1)} {fname}")
            shown = name.replace("/msg/", "/") if ros1 else name
            parts.append(f"MSG: {shown}\n" + "\n".join(lines) + "\n")
        sep = "=" * 80 + "\n"
        text = f"# {distro}: {len(parts)} types, from rosbags {__import__('rosbags').__version__ if hasattr(__import__('rosbags'), '__version__') else '0.11.9'} typestore; see scripts/data/interfaces.py\n" + sep + sep.join(parts)
        (OUT / f"{distro}.msgs").write_text(text)
        print(distro, len(parts), len(text))


if __name__ == "__main__":
    main()
