#!/usr/bin/env bash
# Screenshots of the real window under Xvfb, into screenshots/. Needs: xvfb imagemagick xdotool
# (apt-get install -y --no-install-recommends xvfb xauth imagemagick xdotool) and a release build.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-./target/release/bagscope}
[ -x "$BIN" ] || cargo build --release
OUT=screenshots
mkdir -p "$OUT"
DEMO=$(mktemp -d)/demo.bag
"$BIN" demo "$DEMO" >/dev/null
DISP=:93
Xvfb $DISP -screen 0 1600x1000x24 >/dev/null 2>&1 &
XVFB=$!
trap 'kill $XVFB 2>/dev/null || true' EXIT
sleep 1
export DISPLAY=$DISP
# XDG_CONFIG_HOME/XDG_DATA_HOME point at a fresh place so no saved layout or recent list leaks in.
export XDG_DATA_HOME=$(mktemp -d) XDG_CONFIG_HOME=$(mktemp -d)

shot() { # name, seconds to wait, then xdotool steps run by the caller
  sleep "$2"
  import -window root "$OUT/$1.png"
}

"$BIN" "$DEMO" & APP=$!
sleep 4
xdotool mousemove 75 244 click 1          # select /imu/data in the tree
sleep 0.5
xdotool mousemove 800 520 click 1         # playhead at ~ 50 s
sleep 0.5
xdotool mousemove 1201 37 click 1         # raw bytes on
sleep 0.5
xdotool mousemove 1290 200                # hover a field: its bytes light up
shot demo 1.5
xdotool mousemove 1201 37 click 1         # raw bytes off
sleep 0.3
xdotool mousemove 1187 538 click 1        # plot linear_acceleration.z
sleep 0.3
xdotool mousemove 1187 423 click 1        # plot angular_velocity.z
sleep 0.3
xdotool mousemove 1187 492 click 1        # plot linear_acceleration.x
sleep 0.3
xdotool mousemove 800 700
shot plots 2
xdotool mousemove 515 12 click 1          # Export…
xdotool mousemove 5 990
shot export 1
xdotool mousemove 653 12 click 1          # Close: the start screen, the demo bag under Recent files
xdotool mousemove 5 990
shot start 1
kill $APP; wait $APP 2>/dev/null || true

"$BIN" "${1:-../shared/bags/foxglove-cli/gps.bag.active}" & APP=$!
sleep 4
xdotool mousemove 590 12 click 1          # Bag info, with the recovery warnings
xdotool mousemove 5 990
shot recovered 1.5
kill $APP; wait $APP 2>/dev/null || true
echo "wrote $OUT/{start,demo,plots,export,recovered}.png"
