#!/usr/bin/env python3
"""bagscope play --ros2 against rclpy's publisher (Fast DDS), into the same subscriber, in a
network namespace of its own with only loopback (run as root; the script re-runs itself under
`unshare --net`).

    python3 scripts/data/live_bags.py --out bench-bags --only small   # once
    cargo build --release
    python3 scripts/bench/play_ros2.py bench-bags [N]
    python3 scripts/bench/play_ros2.py bench-bags lateness [reliable|best_effort]

The messages: live_small.bag's 200,000 std_msgs/Float64 on 10 topics recorded within 2 s,
played by `bagscope play --ros2 --to-ros2` at rates 0.5, 1 and 20 (50 kHz, 100 kHz and 2 MHz
asked: flat out), and the
same number of std_msgs/msg/Float64 published by an rclpy node in a loop as fast as it goes
(10 publishers, round robin). The subscriber is `bagscope record --ros2` (and then an rclpy
node counting messages); the rate is what it received over the span of its receive times, the
publisher's rate is messages over the wall time of its loop. N (default 3) runs of each,
interleaved; medians.

`lateness`: `bagscope play --ros2 --to-ros2 --rate 1` of live_mixed.bag (scripts/
gen_live_bags.py: a 1080p rgb8 camera at 30 Hz, an IMU at 200 Hz, 50 small topics at 10 Hz,
60 s, 11 GB) with an rclpy node subscribed (raw) to the camera and the IMU (reliable, or
best-effort as asked; keep last 10); the player reports each message's lateness against its
schedule, the subscriber what it received of each topic.
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BIN = ROOT / 'target/release/bagscope'
TOPICS = [f'/fast_{k}' for k in range(10)]
# live_small.bag is 100 kHz: rate 0.5 asks 50 kHz, 1 asks 100 kHz, 20 is flat out.
RATES = ['0.5', '1', '20']

RCLPY_PUB = r'''
import sys, time, rclpy
from std_msgs.msg import Float64
n = int(sys.argv[1]); topics = sys.argv[2:]
rclpy.init(); node = rclpy.create_node("bench_pub")
pubs = [node.create_publisher(Float64, t, 1000) for t in topics]
while any(p.get_subscription_count() == 0 for p in pubs):
    rclpy.spin_once(node, timeout_sec=0.05)
time.sleep(1.0)
m = Float64(); t = time.time()
for i in range(n):
    m.data = float(i)
    pubs[i % len(pubs)].publish(m)
dt = time.time() - t
print(f"published {n} in {dt:.3f} s", flush=True)
time.sleep(2.0)
'''

RCLPY_SUB = r'''
import sys, time, rclpy
from rclpy.qos import QoSProfile, ReliabilityPolicy, HistoryPolicy
from std_msgs.msg import Float64
out = sys.argv[1]; topics = sys.argv[2:]
rclpy.init(); node = rclpy.create_node("bench_sub")
ts = []
qos = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=1000, reliability=ReliabilityPolicy.RELIABLE)
for t in topics:
    node.create_subscription(Float64, t, lambda m: ts.append(time.time()), qos, raw=True)
print("ready", flush=True)
last = time.time()
seen = 0
while time.time() - last < 4.0 or not ts:
    rclpy.spin_once(node, timeout_sec=0.05)
    if len(ts) != seen:
        seen = len(ts); last = time.time()
open(out, "w").write(json.dumps([len(ts), (ts[-1] - ts[0]) if ts else 0]))
'''.replace('import sys,', 'import json, sys,')


RCLPY_HZ = r'''
import json, sys, time, rclpy
from rclpy.qos import QoSProfile, ReliabilityPolicy, HistoryPolicy
from sensor_msgs.msg import Image, Imu
out, rel = sys.argv[1], sys.argv[2]
rclpy.init(); node = rclpy.create_node("bench_hz")
qos = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=10,
                 reliability=ReliabilityPolicy.RELIABLE if rel == "reliable" else ReliabilityPolicy.BEST_EFFORT)
got = {"/camera/image_raw": [], "/imu": []}
for t, ty in [("/camera/image_raw", Image), ("/imu", Imu)]:
    node.create_subscription(ty, t, lambda m, t=t: got[t].append(time.time()), qos, raw=True)
print("ready", flush=True)
end = None
while True:
    rclpy.spin_once(node, timeout_sec=0.05)
    last = max((v[-1] for v in got.values() if v), default=None)
    if last is not None and time.time() - last > 5.0:
        break
res = {t: [len(v), (v[-1] - v[0]) if len(v) > 1 else 0] for t, v in got.items()}
open(out, "w").write(json.dumps(res))
'''


def lateness(bags, rel):
    bag = bags / 'live_mixed.bag'
    with tempfile.TemporaryDirectory(prefix='bagscope-bench-ros2-') as tmp:
        tmp = Path(tmp)
        out, log = tmp / 'hz.json', tmp / 'hz.log'
        sub = subprocess.Popen([sys.executable, '-c', RCLPY_HZ, str(out), rel],
                               stdout=open(log, 'w'), stderr=subprocess.STDOUT)
        for _ in range(300):
            if 'ready' in log.read_text():
                break
            time.sleep(0.1)
        r = subprocess.run([str(BIN), 'play', '--ros2', '--to-ros2', '-q', '--delay', '3',
                            str(bag)], capture_output=True, text=True)
        sub.wait(300)
        print(f'lateness, bagscope play --ros2 --to-ros2 of {bag.name} at rate 1 '
              f'(1080p rgb8 at 30 Hz, IMU 200 Hz, 50 small topics at 10 Hz, 60 s), '
              f'an rclpy subscriber ({rel}) on the camera and the IMU:')
        print('   ' + ' '.join(r.stderr.strip().splitlines()[-1:]))
        for t, (n, span) in json.loads(out.read_text()).items():
            print(f'   {t}: {n} received, {n / span if span else 0:.2f} Hz')


def isolated():
    out = subprocess.run(['ip', '-o', 'link', 'show'], capture_output=True, text=True).stdout
    return all(': lo:' in line for line in out.splitlines())


def recorded(path):
    """Messages in `path` and the span of their receive times (s)."""
    out = subprocess.run([str(BIN), 'info', '--json', str(path)], capture_output=True, text=True)
    info = json.loads(out.stdout)
    n = info.get('messages', 0)
    span = (info.get('end_ns', 0) - info.get('start_ns', 0)) / 1e9
    return n, span


def bagscope_record(tmp, i):
    out = tmp / f'rec_{i}.mcap'
    p = subprocess.Popen([str(BIN), 'record', '--ros2', '-q', '-o', str(out)] +
                         sum((['--topic', t] for t in TOPICS), []),
                         stdout=subprocess.DEVNULL, stderr=open(tmp / f'rec_{i}.log', 'w'))
    time.sleep(1.5)

    def finish():
        time.sleep(2.0)
        p.send_signal(2)
        p.wait(60)
        return recorded(out)
    return finish


def rclpy_record(tmp, i):
    out = tmp / f'sub_{i}.json'
    log = tmp / f'sub_{i}.log'
    p = subprocess.Popen([sys.executable, '-c', RCLPY_SUB, str(out)] + TOPICS,
                         stdout=open(log, 'w'), stderr=subprocess.STDOUT)
    for _ in range(300):
        if 'ready' in log.read_text():
            break
        time.sleep(0.1)

    def finish():
        p.wait(120)
        return tuple(json.loads(out.read_text()))
    return finish


def run_bagscope(bags, rate):
    t = time.time()
    r = subprocess.run([str(BIN), 'play', '--ros2', '--to-ros2', '-q', '--rate', str(rate),
                        '--wait-for-subscribers', str(bags / 'live_small.bag')],
                       capture_output=True, text=True)
    return time.time() - t, ' '.join(r.stderr.strip().splitlines()[-1:])


def run_rclpy(n):
    r = subprocess.run([sys.executable, '-c', RCLPY_PUB, str(n)] + TOPICS,
                       capture_output=True, text=True)
    return r.stdout.strip()


def main():
    if not isolated():
        os.execvp('unshare', ['unshare', '--net', '--', 'bash', '-c',
                              'ip link set lo up && ip link set lo multicast on && exec "$@"',
                              'bash', sys.executable] + sys.argv)
    os.environ.update(ROS_AUTOMATIC_DISCOVERY_RANGE='LOCALHOST',
                      RMW_IMPLEMENTATION='rmw_fastrtps_cpp')
    bags = Path(sys.argv[1] if len(sys.argv) > 1 else 'bench-bags')
    if len(sys.argv) > 2 and sys.argv[2] == 'lateness':
        lateness(bags, sys.argv[3] if len(sys.argv) > 3 else 'reliable')
        return
    reps = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    n = 200_000
    print(f'bagscope play --ros2 vs rclpy publisher: {n} std_msgs/Float64 on 10 topics, '
          f'{reps} runs each, interleaved (network namespace, loopback only)')
    with tempfile.TemporaryDirectory(prefix='bagscope-bench-ros2-') as tmp:
        tmp = Path(tmp)
        for sname, sub in [('bagscope record --ros2', bagscope_record),
                           ('an rclpy subscriber', rclpy_record)]:
            rows = {f'bagscope play --rate {r}': [] for r in RATES}
            rows['rclpy publisher'] = []
            for i in range(reps):
                for k, pname in enumerate(rows):
                    finish = sub(tmp, f'{k}_{i}')
                    if pname.startswith('bagscope'):
                        wall, note = run_bagscope(bags, pname.split()[-1])
                    else:
                        t = time.time()
                        note = run_rclpy(n)
                        wall = time.time() - t
                    got, span = finish()
                    rows[pname].append((got, span, wall, note))
            print(f'  into {sname}:')
            med = {}
            for pname, rs in rows.items():
                rates = [g / s if s else 0 for g, s, _, _ in rs]
                med[pname] = statistics.median(rates)
                for g, s, w, note in rs:
                    print(f'    {pname:26s} received {g:7d} of {n} (lost {n - g:6d}) over {s:6.2f} s '
                          f'= {g / s if s else 0:8.0f} msg/s   [{note}]')
            for pname in rows:
                print(f'    median received rate, {pname:26s} {med[pname]:8.0f} msg/s')


if __name__ == '__main__':
    main()
