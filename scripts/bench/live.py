#!/usr/bin/env python3
"""bagscope play / record against a live ROS 1 graph, side by side with the C++ rosbag tools
(Debian's ros-core and python3-rosbag), everything on 127.0.0.1 with a roscore of its own.

    python3 scripts/data/live_bags.py --out bench-bags      # once (11 GB for live_mixed.bag)
    cargo build --release
    python3 scripts/bench/live.py bench-bags

1. lateness: `bagscope play --rate 1` of live_mixed.bag (1080p rgb8 camera at 30 Hz, IMU at
   200 Hz, 50 small topics at 10 Hz, 60 s), with `rostopic hz` subscribed to the camera and
   the IMU; bagscope reports each message's lateness against its schedule.
2. largest sustained rate of small messages: live_small.bag (200,000 std_msgs/Float64
   recorded within 2 s) played by `bagscope play` and by C++ `rosbag play` (its default queue,
   and --queue 1000000), each at rate 20 (2 MHz, more than any keeps up with), into the same
   subscriber: C++ `rosbag record -a`, then `bagscope record -a`; the rate is the messages
   recorded over the span of their receive times; lost = played - recorded.
3. recording 10,000 messages/s for 60 s (live_10k.bag played by `bagscope play`): `bagscope
   record -a` and C++ `rosbag record -a` at once, messages recorded and CPU seconds used
   (user + system of the recorder's processes, psutil).
"""
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
import xmlrpc.client
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[2]
BIN = ROOT / 'target/release/bagscope'


def free_port():
    s = socket.socket()
    s.bind(('127.0.0.1', 0))
    p = s.getsockname()[1]
    s.close()
    return p


class Graph:
    def __init__(self, tmp):
        self.port = free_port()
        self.uri = f'http://127.0.0.1:{self.port}/'
        self.env = dict(os.environ, ROS_MASTER_URI=self.uri, ROS_IP='127.0.0.1',
                        ROS_HOME=str(tmp / 'ros_home'), ROS_LOG_DIR=str(tmp / 'ros_home/log'))
        self.env.pop('ROS_HOSTNAME', None)
        self.core = self.spawn(['roscore', '-p', str(self.port)], tmp / 'roscore.log')
        m = xmlrpc.client.ServerProxy(self.uri)
        for _ in range(300):
            try:
                m.getUri('/bench')
                return
            except OSError:
                time.sleep(0.1)
        raise SystemExit('roscore did not start')

    def spawn(self, args, log):
        return subprocess.Popen(args, env=self.env, stdout=open(log, 'w'), stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True)

    def run(self, args):
        return subprocess.run(args, env=self.env, capture_output=True, text=True)

    def subscribers(self, topic):
        state = xmlrpc.client.ServerProxy(self.uri).getSystemState('/bench')[2]
        for t, nodes in state[1]:
            if t == topic:
                return nodes
        return []

    def wait_subscribed(self, topic, n=1, timeout=30):
        end = time.time() + timeout
        while len(self.subscribers(topic)) < n:
            if time.time() > end:
                raise SystemExit(f'nobody subscribed to {topic}')
            time.sleep(0.1)

    def close(self):
        stop(self.core)


def stop(p, sig=signal.SIGINT, wait=30):
    if p.poll() is None:
        os.killpg(p.pid, sig)
        try:
            p.wait(wait)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()


def cpu_seconds(p):
    try:
        procs = [psutil.Process(p.pid)] + psutil.Process(p.pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return 0.0
    total = 0.0
    for q in procs:
        try:
            c = q.cpu_times()
            total += c.user + c.system
        except psutil.NoSuchProcess:
            pass
    return total


def wait_file(path, timeout=60):
    end = time.time() + timeout
    while not path.exists():
        if time.time() > end:
            raise SystemExit(f'{path} did not appear')
        time.sleep(0.1)
    time.sleep(0.5)


def recorded(path, prefix=''):
    import bagscope
    with bagscope.open(str(path)) as r:
        n = 0
        first = last = None
        for m in r.messages(raw=True):
            if not m.topic.startswith(prefix):
                continue
            n += 1
            first = m.time_ns if first is None else first
            last = m.time_ns
    return n, (last - first) / 1e9 if n > 1 else 0.0


def lateness(bags, tmp):
    bag = bags / 'live_mixed.bag'
    if not bag.exists():
        print(f'{bag}: missing (scripts/data/live_bags.py)')
        return
    g = Graph(tmp)
    try:
        play = g.spawn([str(BIN), 'play', str(bag), '-q', '--delay', '3'], tmp / 'play_mixed.log')
        time.sleep(1)
        hz = g.spawn(['rostopic', 'hz', '/camera/image_raw', '/imu'], tmp / 'hz_mixed.log')
        play.wait(200)
        stop(hz)
        said = (tmp / 'play_mixed.log').read_text()
        print('1. lateness, live_mixed.bag at rate 1 (60 s, 1080p rgb8 at 30 Hz, IMU 200 Hz, 50 small '
              'topics at 10 Hz):')
        print('   ' + said.strip().splitlines()[-1])
        rates = re.findall(r'^(/\S+)\s+([\d.]+)', (tmp / 'hz_mixed.log').read_text(), re.M)
        if rates:
            print('   rostopic hz, last report: ' + ', '.join(f'{t} {r} Hz' for t, r in rates[-2:]))
    finally:
        g.close()


def sustained(bags, tmp):
    bag = bags / 'live_small.bag'
    players = [
        ('bagscope play', [str(BIN), 'play', str(bag), '-q', '--rate', '20',
                           '--wait-for-subscribers']),
        ('rosbag play (queue 100)', ['rosbag', 'play', '-q', '-r', '20', '--wait-for-subscribers',
                                     str(bag)]),
        ('rosbag play --queue 1000000', ['rosbag', 'play', '-q', '-r', '20', '--queue=1000000',
                                         '--wait-for-subscribers', str(bag)]),
    ]
    recorders = [
        # (name, command, a topic it subscribes to once up, subscribers expected there)
        ('C++ rosbag record -a', lambda out: ['rosbag', 'record', '-a', '-O', str(out)], '/rosout', 2),
        ('bagscope record -a', lambda out: [str(BIN), 'record', '-q', '-a', '-o', str(out)],
         '/rosout_agg', 1),
    ]
    print('2. largest sustained rate of small messages (live_small.bag: 200,000 std_msgs/Float64 '
          'recorded within 2 s, played at rate 20 = 2 MHz, so every player runs flat out); the rate is what the subscriber '
          'recorded over the span of its receive times:')
    g = Graph(tmp)
    try:
        for rname, rcmd, up, subs in recorders:
            rows = []
            for name, cmd in players:
                out = tmp / f'sustained_{len(rows)}.bag'
                rec = g.spawn(rcmd(out), tmp / f'rec_{len(rows)}.log')
                g.wait_subscribed(up, subs)
                t = time.time()
                r = g.run(cmd)
                wall = time.time() - t
                time.sleep(1)
                stop(rec)
                wait_file(out)
                n, span = recorded(out, '/fast_')
                rows.append((name, n, span, wall, r.returncode))
                out.unlink()
            print(f'   into {rname}:')
            for name, n, span, wall, rc in rows:
                print(f'     {name:30s} recorded {n:7d} (lost {200000 - n:6d}) over {span:6.2f} s = '
                      f'{n / span if span else 0:9.0f} msg/s  (player ran {wall:.2f} s, exit {rc})')
            if rows[0][2] and rows[1][2] and rows[2][2]:
                ours = rows[0][1] / rows[0][2]
                print(f'     ratio bagscope / rosbag play: {ours / (rows[1][1] / rows[1][2]):.2f}x '
                      f'(default queue), {ours / (rows[2][1] / rows[2][2]):.2f}x (--queue 1000000)')
    finally:
        g.close()


def recording(bags, tmp):
    bag = bags / 'live_10k.bag'
    g = Graph(tmp)
    try:
        a, b = tmp / 'ours.bag', tmp / 'cpp.bag'
        ours = g.spawn([str(BIN), 'record', '-q', '--all', '-o', str(a)], tmp / 'rec_ours.log')
        cpp = g.spawn(['rosbag', 'record', '-a', '-O', str(b)], tmp / 'rec_cpp.log')
        # Both recorders up: C++ subscribes to /rosout (beside rosout's own subscription),
        # bagscope to /rosout_agg.
        g.wait_subscribed('/rosout', 2)
        g.wait_subscribed('/rosout_agg', 1)
        c0 = (cpu_seconds(ours), cpu_seconds(cpp))
        play = g.run([str(BIN), 'play', str(bag), '-q', '--delay', '3'])
        time.sleep(1.5)
        c1 = (cpu_seconds(ours), cpu_seconds(cpp))
        stop(ours)
        stop(cpp)
        wait_file(a)
        wait_file(b)
        na, _ = recorded(a, '/load_')
        nb, _ = recorded(b, '/load_')
        print('3. recording 10,000 msg/s for 60 s (live_10k.bag, 600,000 std_msgs/Float64 on 50 topics, '
              'played by bagscope play; both recorders at once):')
        print('   ' + play.stderr.strip().splitlines()[-1])
        print(f'   bagscope record -a: {na} recorded (lost {600000 - na}), '
              f'{c1[0] - c0[0]:.2f} CPU s while playing')
        print(f'   rosbag record -a:   {nb} recorded (lost {600000 - nb}), '
              f'{c1[1] - c0[1]:.2f} CPU s while playing')
        if c1[1] - c0[1] > 0:
            print(f'   CPU ratio bagscope / rosbag record: {(c1[0] - c0[0]) / (c1[1] - c0[1]):.2f}')
    finally:
        g.close()


def main():
    bags = Path(sys.argv[1] if len(sys.argv) > 1 else 'bench-bags')
    only = sys.argv[2] if len(sys.argv) > 2 else None
    with tempfile.TemporaryDirectory(prefix='bagscope-bench-live-') as d:
        tmp = Path(d)
        for name, f in [('sustained', sustained), ('recording', recording), ('lateness', lateness)]:
            if only in (None, name):
                f(bags, tmp)


if __name__ == '__main__':
    main()
