"""ROS 2 peers for bagscope's live tests: rclpy (Fast DDS) and Cyclone DDS's Python API.

  peer.py sub TOPIC TYPE OUT [--count N] [--timeout S] [--transient-local] [--best-effort]
      rclpy raw subscription; OUT gets one JSON line per message: hex bytes, receive time (ns).
  peer.py pub TOPIC COUNT HZ OUT
      rclpy talker (std_msgs/msg/String "hello N"); OUT gets the serialized bytes sent.
  peer.py cyclone-sub TOPIC TYPE OUT [--count N] [--timeout S] [--transient-local]
      Cyclone DDS reader (types of tests/ros2/cyclone_types.py); OUT as for sub.

Every participant is told to stay on this machine (ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST for
rclpy; a Cyclone configuration with the loopback interface only); the tests run them inside a
network namespace that has nothing but loopback as well.
"""
import argparse
import importlib
import json
import os
import sys
import time

os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
os.environ.setdefault("RMW_IMPLEMENTATION", "rmw_fastrtps_cpp")


def msg_class(ros_type):
    pkg, kind, name = ros_type.split("/")
    return getattr(importlib.import_module(f"{pkg}.{kind}"), name)


def rclpy_sub(a):
    import rclpy
    from rclpy.qos import QoSProfile, ReliabilityPolicy, DurabilityPolicy, HistoryPolicy

    rclpy.init()
    node = rclpy.create_node("bagscope_test_sub")
    qos = QoSProfile(
        history=HistoryPolicy.KEEP_ALL,
        depth=1000,
        reliability=ReliabilityPolicy.BEST_EFFORT if a.best_effort else ReliabilityPolicy.RELIABLE,
        durability=DurabilityPolicy.TRANSIENT_LOCAL if a.transient_local else DurabilityPolicy.VOLATILE,
    )
    got = []
    node.create_subscription(
        msg_class(a.type), a.topic, lambda m: got.append((m, time.time_ns())), qos, raw=True
    )
    print("ready", flush=True)
    end = time.time() + a.timeout
    while time.time() < end and (a.count is None or len(got) < a.count):
        rclpy.spin_once(node, timeout_sec=0.05)
    with open(a.out + ".tmp", "w") as f:
        for m, t in got:
            f.write(json.dumps({"hex": bytes(m).hex(), "t": t}) + "\n")
    os.rename(a.out + ".tmp", a.out)
    node.destroy_node()
    rclpy.shutdown()


def rclpy_pub(a):
    import rclpy
    from rclpy.serialization import serialize_message
    from std_msgs.msg import String

    rclpy.init()
    node = rclpy.create_node("bagscope_test_talker")
    pub = node.create_publisher(String, a.topic, 10)
    sent = []
    period = 1.0 / a.hz
    next_t = time.time()
    for i in range(a.count):
        m = String(data=f"hello {i}")
        pub.publish(m)
        sent.append({"hex": serialize_message(m).hex(), "t": time.time_ns()})
        with open(a.out + ".tmp", "w") as f:
            for s in sent:
                f.write(json.dumps(s) + "\n")
        os.replace(a.out + ".tmp", a.out)
        next_t += period
        time.sleep(max(0.0, next_t - time.time()))
    node.destroy_node()
    rclpy.shutdown()


def cyclone_sub(a):
    os.environ["CYCLONEDDS_URI"] = (
        "<CycloneDDS><Domain><General><Interfaces>"
        '<NetworkInterface name="lo"/></Interfaces></General></Domain></CycloneDDS>'
    )
    from cyclonedds.domain import DomainParticipant
    from cyclonedds.topic import Topic
    from cyclonedds.sub import DataReader
    from cyclonedds.core import Qos, Policy
    from cyclonedds.util import duration

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import cyclone_types

    cls = cyclone_types.by_ros_type(a.type)
    dp = DomainParticipant(int(os.environ.get("ROS_DOMAIN_ID", "0")))
    topic = Topic(dp, "rt/" + a.topic.lstrip("/"), cls)
    qos = Qos(
        Policy.Reliability.Reliable(duration(seconds=1)),
        Policy.Durability.TransientLocal if a.transient_local else Policy.Durability.Volatile,
        Policy.History.KeepAll,
    )
    reader = DataReader(dp, topic, qos=qos)
    print("ready", flush=True)
    got = []
    end = time.time() + a.timeout
    while time.time() < end and (a.count is None or len(got) < a.count):
        for s in reader.take(N=100):
            got.append((s.serialize(), time.time_ns()))
        time.sleep(0.01)
    with open(a.out + ".tmp", "w") as f:
        for b, t in got:
            f.write(json.dumps({"hex": b.hex(), "t": t}) + "\n")
    os.rename(a.out + ".tmp", a.out)


def main():
    p = argparse.ArgumentParser()
    sp = p.add_subparsers(dest="cmd", required=True)
    for name in ("sub", "cyclone-sub"):
        s = sp.add_parser(name)
        s.add_argument("topic")
        s.add_argument("type")
        s.add_argument("out")
        s.add_argument("--count", type=int)
        s.add_argument("--timeout", type=float, default=20.0)
        s.add_argument("--transient-local", action="store_true")
        s.add_argument("--best-effort", action="store_true")
    s = sp.add_parser("pub")
    s.add_argument("topic")
    s.add_argument("count", type=int)
    s.add_argument("hz", type=float)
    s.add_argument("out")
    a = p.parse_args()
    {"sub": rclpy_sub, "pub": rclpy_pub, "cyclone-sub": cyclone_sub}[a.cmd](a)


if __name__ == "__main__":
    main()
