"""ROS 2 peers for bagscope's live tests: rclpy (Fast DDS) and Cyclone DDS's Python API.

  peer.py sub OUT TOPIC=TYPE... [--count N] [--timeout S] [--transient-local] [--best-effort]
      rclpy raw subscriptions; OUT gets one JSON line per message: topic, hex bytes, receive
      time (ns); written when N messages arrived in all or at the timeout.
  peer.py pub TOPIC COUNT HZ OUT [--wait [N]] [--type T] [--no-type-description]
      rclpy talker (std_msgs/msg/String "hello N", or nav_msgs/msg/Goals), after N subscribers
      matched with --wait, spinning between messages (so it answers ~/get_type_description,
      which --no-type-description turns off);
      OUT gets the serialized bytes sent and when, rewritten after every message.
  peer.py cyclone-pub TOPIC COUNT HZ OUT
      Cyclone DDS writer of std_msgs/msg/String "cyclone N" (reliable, volatile), once a reader
      matched; OUT as for pub.
  peer.py cyclone-sub OUT TOPIC=TYPE... [--count N] [--timeout S] [--transient-local]
      Cyclone DDS readers (types of tests/ros2/cyclone_types.py); OUT as for sub.

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


def pairs(specs):
    return [tuple(s.split("=", 1)) for s in specs]


def write(out, got):
    with open(out + ".tmp", "w") as f:
        for topic, b, t in got:
            f.write(json.dumps({"topic": topic, "hex": b.hex(), "t": t}) + "\n")
    os.rename(out + ".tmp", out)


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
    for topic, ty in pairs(a.topics):
        node.create_subscription(
            msg_class(ty),
            topic,
            lambda m, topic=topic: got.append((topic, bytes(m), time.time_ns())),
            qos,
            raw=True,
        )
    print("ready", flush=True)
    end = time.time() + a.timeout
    while time.time() < end and (a.count is None or len(got) < a.count):
        rclpy.spin_once(node, timeout_sec=0.05)
    write(a.out, got)
    node.destroy_node()
    rclpy.shutdown()


def talker_message(ros_type, i):
    """Message i of the talker: std_msgs/msg/String "hello i", or nav_msgs/msg/Goals with i
    goals at x = 0..i-1 in frame "map" (a type bagscope does not ship)."""
    if ros_type == "std_msgs/msg/String":
        from std_msgs.msg import String

        return String(data=f"hello {i}")
    if ros_type == "nav_msgs/msg/Goals":
        from geometry_msgs.msg import PoseStamped
        from nav_msgs.msg import Goals

        m = Goals()
        m.header.frame_id = "map"
        m.header.stamp.sec = i
        for k in range(i):
            g = PoseStamped()
            g.header.frame_id = "map"
            g.pose.position.x = float(k)
            g.pose.orientation.w = 1.0
            m.goals.append(g)
        return m
    raise SystemExit(f"the talker does not publish {ros_type}")


def rclpy_pub(a):
    import rclpy
    from rclpy.serialization import serialize_message

    rclpy.init()
    overrides = []
    if a.no_type_description:
        from rclpy.parameter import Parameter

        overrides = [Parameter("start_type_description_service", value=False)]
    node = rclpy.create_node("bagscope_test_talker", parameter_overrides=overrides)
    pub = node.create_publisher(msg_class(a.type), a.topic, 10)
    if a.wait:
        while pub.get_subscription_count() < a.wait:
            rclpy.spin_once(node, timeout_sec=0.05)
        # The subscriber has seen this publisher once it has been matched here for a moment.
        end = time.time() + 0.5
        while time.time() < end:
            rclpy.spin_once(node, timeout_sec=0.05)
    sent = []
    period = 1.0 / a.hz
    next_t = time.time()
    for i in range(a.count):
        m = talker_message(a.type, i)
        pub.publish(m)
        sent.append({"hex": serialize_message(m).hex(), "t": time.time_ns()})
        with open(a.out + ".tmp", "w") as f:
            for s in sent:
                f.write(json.dumps(s) + "\n")
        os.replace(a.out + ".tmp", a.out)
        next_t += period
        # Spinning between messages, as a node does, answers its services (the recorder
        # asks ~/get_type_description).
        while time.time() < next_t:
            rclpy.spin_once(node, timeout_sec=max(0.0, next_t - time.time()))
    node.destroy_node()
    rclpy.shutdown()


def rclpy_pub_raw(a):
    """Publishes the serialized messages of a JSON-lines file (`hex`), as they are, through
    rclpy's own `Publisher.publish` of bytes."""
    import rclpy

    rclpy.init()
    node = rclpy.create_node("bagscope_test_raw_talker")
    pub = node.create_publisher(msg_class(a.type), a.topic, 10)
    while pub.get_subscription_count() < 1:
        rclpy.spin_once(node, timeout_sec=0.05)
    end = time.time() + 0.5
    while time.time() < end:
        rclpy.spin_once(node, timeout_sec=0.05)
    with open(a.messages) as f:
        for line in f:
            pub.publish(bytes.fromhex(json.loads(line)["hex"]))
            rclpy.spin_once(node, timeout_sec=0.02)
    end = time.time() + 1.0
    while time.time() < end:
        rclpy.spin_once(node, timeout_sec=0.05)
    node.destroy_node()
    rclpy.shutdown()


def cyclone_localhost():
    os.environ["CYCLONEDDS_URI"] = (
        "<CycloneDDS><Domain><General><Interfaces>"
        '<NetworkInterface name="lo"/></Interfaces></General></Domain></CycloneDDS>'
    )


def cyclone_pub(a):
    cyclone_localhost()
    from cyclonedds.domain import DomainParticipant
    from cyclonedds.topic import Topic
    from cyclonedds.pub import DataWriter
    from cyclonedds.core import Qos, Policy
    from cyclonedds.util import duration

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import cyclone_types

    dp = DomainParticipant(int(os.environ.get("ROS_DOMAIN_ID", "0")))
    topic = Topic(dp, "rt/" + a.topic.lstrip("/"), cyclone_types.String)
    qos = Qos(
        Policy.Reliability.Reliable(duration(seconds=1)),
        Policy.Durability.Volatile,
        Policy.History.KeepLast(100),
    )
    w = DataWriter(dp, topic, qos=qos)
    while w.get_publication_matched_status().current_count == 0:
        time.sleep(0.05)
    time.sleep(0.5)
    sent = []
    for i in range(a.count):
        m = cyclone_types.String(data=f"cyclone {i}")
        w.write(m)
        sent.append({"hex": m.serialize().hex(), "t": time.time_ns()})
        time.sleep(1.0 / a.hz)
    with open(a.out + ".tmp", "w") as f:
        for s in sent:
            f.write(json.dumps(s) + "\n")
    os.replace(a.out + ".tmp", a.out)
    time.sleep(1.0)


def cyclone_sub(a):
    cyclone_localhost()
    from cyclonedds.domain import DomainParticipant
    from cyclonedds.topic import Topic
    from cyclonedds.sub import DataReader
    from cyclonedds.core import Qos, Policy
    from cyclonedds.util import duration

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import cyclone_types

    dp = DomainParticipant(int(os.environ.get("ROS_DOMAIN_ID", "0")))
    qos = Qos(
        Policy.Reliability.Reliable(duration(seconds=1)),
        Policy.Durability.TransientLocal if a.transient_local else Policy.Durability.Volatile,
        Policy.History.KeepAll,
    )
    readers = []
    for name, ty in pairs(a.topics):
        topic = Topic(dp, "rt/" + name.lstrip("/"), cyclone_types.by_ros_type(ty))
        readers.append((name, DataReader(dp, topic, qos=qos)))
    print("ready", flush=True)
    got = []
    end = time.time() + a.timeout
    while time.time() < end and (a.count is None or len(got) < a.count):
        for name, reader in readers:
            for s in reader.take(N=100):
                got.append((name, s.serialize(), time.time_ns()))
        time.sleep(0.005)
    write(a.out, got)


def main():
    p = argparse.ArgumentParser()
    sp = p.add_subparsers(dest="cmd", required=True)
    for name in ("sub", "cyclone-sub"):
        s = sp.add_parser(name)
        s.add_argument("out")
        s.add_argument("topics", nargs="+", metavar="TOPIC=TYPE")
        s.add_argument("--count", type=int)
        s.add_argument("--timeout", type=float, default=20.0)
        s.add_argument("--transient-local", action="store_true")
        s.add_argument("--best-effort", action="store_true")
    s = sp.add_parser("cyclone-pub")
    s.add_argument("topic")
    s.add_argument("count", type=int)
    s.add_argument("hz", type=float)
    s.add_argument("out")
    s = sp.add_parser("pub")
    s.add_argument("topic")
    s.add_argument("count", type=int)
    s.add_argument("hz", type=float)
    s.add_argument("out")
    # --wait: until a subscriber is matched; --wait N: until N are.
    s.add_argument("--wait", nargs="?", const=1, default=0, type=int)
    s.add_argument("--type", default="std_msgs/msg/String")
    s.add_argument("--no-type-description", action="store_true")
    s = sp.add_parser("pub-raw")
    s.add_argument("topic")
    s.add_argument("messages")
    s.add_argument("--type", default="std_msgs/msg/String")
    a = p.parse_args()
    {
        "sub": rclpy_sub,
        "pub": rclpy_pub,
        "pub-raw": rclpy_pub_raw,
        "cyclone-sub": cyclone_sub,
        "cyclone-pub": cyclone_pub,
    }[a.cmd](a)


if __name__ == "__main__":
    main()
