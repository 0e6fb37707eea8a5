#!/usr/bin/env bash
# Screenshots of the real window under Xvfb, into screenshots/. Needs: xvfb imagemagick xdotool
# (apt-get install -y --no-install-recommends xvfb xauth imagemagick xdotool) and a release build.
# Last redone for demo, log, find, export, plots, start, two, ros2, recovered, tf, scene-demo,
# scene-topdown and scene-lidar on 2026-11-28 (live keeps the clicks of an older layout).
# The clicks are at the places the widgets are drawn in a 1600×1000 window with the fonts egui
# ships; a change of layout needs them moved.
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN=${BIN:-./target/release/bagscope}
[ -x "$BIN" ] || cargo build --release
OUT=screenshots
mkdir -p "$OUT"
TMP=$(mktemp -d)
# The demo bag where the app keeps it (its cameras open at once), and a copy elsewhere.
export XDG_CACHE_HOME=$TMP/cache
mkdir -p "$XDG_CACHE_HOME/bagscope"
DEMO=$XDG_CACHE_HOME/bagscope/demo-v4.bag
"$BIN" demo "$DEMO" >/dev/null
cp "$DEMO" "$TMP/demo.bag"
"$BIN" demo "$TMP/run1.bag" --seconds 60 >/dev/null
"$BIN" demo "$TMP/run2.bag" --seconds 90 >/dev/null
DISP=:93
Xvfb $DISP -screen 0 1600x1000x24 >/dev/null 2>&1 &
XVFB=$!
trap 'kill $XVFB 2>/dev/null || true' EXIT
sleep 1
export DISPLAY=$DISP
# XDG_CONFIG_HOME/XDG_DATA_HOME point at a fresh place so no saved layout or recent list leaks in.
fresh() { export XDG_DATA_HOME=$(mktemp -d) XDG_CONFIG_HOME=$(mktemp -d); }
fresh

shot() { # name, seconds to wait
  sleep "$2"
  import -window root "$OUT/$1.png"
}
focus() { xdotool search --name bagscope | head -1 | xargs -r xdotool windowfocus 2>/dev/null || true; }

# The demo: camera panels (colour, depth through turbo, overhead jpeg), thumbnails on the
# camera rows, the inspector; then the log panel, Find, plots, export and the start screen.
# Panels and windows are opened from the command palette (Ctrl+K), which does not move.
palette() { xdotool key ctrl+k; sleep 0.7; xdotool type --delay 30 "$1"; sleep 0.5; xdotool key Return; }
"$BIN" "$DEMO" & APP=$!
sleep 6
focus
xdotool mousemove 69 267 click 1          # select /imu/data in the tree
sleep 0.5
xdotool mousemove 1050 493 click 1        # playhead at ~ 1:50 (on the timeline's ruler)
sleep 1
xdotool mousemove 833 236                 # hover the front camera: the pixel's value
shot demo 1.5
xdotool key ctrl+l                        # Log
xdotool mousemove 5 990
shot log 1.5
xdotool mousemove 1142 467 click 1        # Log closed (its ×)
palette 'Find'
sleep 1
xdotool type --delay 20 '/battery/voltage.data crosses 12.2'
xdotool key Return
xdotool mousemove 5 990
shot find 2
xdotool mousemove 982 86 click 1          # Find closed
palette 'Export'
xdotool mousemove 5 990
shot export 1.5
xdotool mousemove 565 34 click 1          # Export closed
for p in "1377 553" "1377 438" "1377 507"; do
  xdotool mousemove $p click 1            # plot linear_acceleration.z, angular_velocity.z, .x
  sleep 0.4
done
xdotool mousemove 980 686 click 1         # remove linear_acceleration.z (9.8 flattens the rest)
xdotool mousemove 900 760                 # hover the plot: the value under the pointer
shot plots 2
palette 'Close'                           # the start screen
xdotool mousemove 5 990
shot start 1.5
kill $APP; wait $APP 2>/dev/null || true

# Two runs on one timeline, with the Recordings window (offsets, align starts).
fresh
"$BIN" "$TMP/run1.bag" "$TMP/run2.bag" & APP=$!
sleep 8
xdotool mousemove 5 990
shot two 1
kill $APP; wait $APP 2>/dev/null || true

# A rosbag2 recording (MCAP storage) with a CDR message decoded.
fresh
"$BIN" "${2:-../shared/bags2/rosbag2/v9_mcap/bag_with_topics_and_service_events_and_action}" & APP=$!
sleep 6
focus
xdotool mousemove 63 130 click 1          # /rosout (rcl_interfaces/msg/Log, shipped definition)
sleep 0.5
xdotool mousemove 1075 700 click 1        # playhead
xdotool mousemove 5 990
shot ros2 1.5
kill $APP; wait $APP 2>/dev/null || true

fresh
"$BIN" "${1:-../shared/bags/foxglove-cli/gps.bag.active}" & APP=$!
sleep 6
focus
palette 'Bag info'                        # with the recovery warnings
xdotool mousemove 5 990
shot recovered 2
kill $APP; wait $APP 2>/dev/null || true
# The TF window on the turtles of rosbag.js/example.bag: the tree at the playhead, the carrot in
# the world.
fresh
"$BIN" "${3:-../shared/bags/rosbag.js/example.bag}" & APP=$!
sleep 6
focus
palette 'TF'
sleep 1.5
xdotool mousemove 1094 576 click 1        # playhead at ~ 18.6 s
xdotool mousemove 5 990
shot tf 1.5
kill $APP; wait $APP 2>/dev/null || true
# Live: the demo played into a roscore on loopback by `bagscope play --ros1 --loop`, recorded
# live by the app (which opens the demo with its cameras first, and keeps them at Start).
if command -v roscore >/dev/null; then
  fresh
  PORT=11399
  export ROS_MASTER_URI=http://127.0.0.1:$PORT ROS_IP=127.0.0.1 ROS_HOME=$TMP/roshome
  roscore -p $PORT >/dev/null 2>&1 & CORE=$!
  sleep 4
  "$BIN" play "$TMP/demo.bag" --ros1 --loop -q >/dev/null 2>&1 & PLAY=$!
  "$BIN" & APP=$!
  sleep 4
  focus
  xdotool mousemove 516 12 click 1        # Live…
  sleep 1.5
  xdotool mousemove 341 137 click 1       # Find topics
  sleep 3
  xdotool mousemove 44 414 click 1        # Start
  sleep 3
  xdotool mousemove 69 267 click 1        # /imu/data in the tree: the inspector
  sleep 2
  xdotool mousemove 1302 446 click 1      # angular_velocity.z: plotted
  sleep 0.5
  xdotool mousemove 1302 537 click 1      # linear_acceleration.y: plotted
  xdotool mousemove 1500 990
  shot live 12
  kill $APP $PLAY; wait $APP $PLAY 2>/dev/null || true
  kill $CORE; wait $CORE 2>/dev/null || true
fi
# 3D: the demo at 2:16 in map following base_link (the lidar's cloud, the scan, the robot,
# the planner's markers and path, the frames), then top-down; a real lidar (embag's Luminar
# cloud, no transforms: drawn in its own frame).
fresh
"$BIN" "$TMP/demo.bag" & APP=$!
sleep 6
focus
xdotool mousemove 1061 493 click 1        # playhead at 2:16 (on the timeline's ruler)
sleep 1
palette '3D view'
sleep 3
xdotool mousemove 628 111 click 1         # Follow
sleep 0.7
xdotool mousemove 620 161 click 1         # base_link
sleep 1
xdotool mousemove 980 400
for i in $(seq 1 7); do xdotool click 4; sleep 0.1; done   # zoom in
xdotool mousemove 5 990
shot scene-demo 4
xdotool mousemove 722 111 click 1         # Top-down
xdotool mousemove 5 990
shot scene-topdown 3
kill $APP; wait $APP 2>/dev/null || true
fresh
"$BIN" ../shared/bags/embag/test.bag & APP=$!
sleep 7
focus
xdotool mousemove 734 88 click 1          # playhead at 0.7 s, a cloud
sleep 1
palette '3D view'
xdotool mousemove 5 990
shot scene-lidar 6
kill $APP; wait $APP 2>/dev/null || true
echo "wrote $OUT/{demo,log,find,plots,export,start,two,ros2,recovered,tf,live,scene-demo,scene-topdown,scene-lidar}.png"
