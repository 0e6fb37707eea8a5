#!/usr/bin/env bash
# A layout file gives the same window as the view built by hand (issue 49), seen as a user sees
# it: the real app in an X server of its own (Xvfb, Mesa's software GL), twice on the demo
# recording, the screen read back with xwd once it has stopped changing:
#
# - by hand: a state row typed into the timeline's box, a plot typed into the plot bar, /tf
#   unticked in the topic tree, a bookmark at the playhead (B), the front camera's image panel
#   from the command palette (Ctrl+K), the log (Ctrl+L);
# - `bagscope --layout view.json demo.bag` with a layout file saying the same.
#
# The two screens must be the same, pixel for pixel. The clicks are at the places the boxes
# are drawn in a 1600×1000 window with the fonts egui ships: a change of the app's layout needs
# them moved (scripts/dev/screenshots.sh has the same). Each run has an X server of its own: a
# window killed while it holds the keyboard's focus leaves Xvfb sending keys nowhere.
#
# Run by .ci/run; needs Xvfb, xdotool and xwd (x11-apps), which .ci/run installs, and the dev
# build of bagscope (BIN to use another).
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN=${BIN:-$PWD/target/debug/bagscope}
[ -x "$BIN" ] || { echo "layout_window: no $BIN (cargo build first)" >&2; exit 1; }
out=$PWD/target/layout-window
rm -rf "$out"
mkdir -p "$out"
tmp=$(mktemp -d)
app=
# shellcheck source=scripts/ci/xvfb.sh
. scripts/ci/xvfb.sh
cleanup() {
    [ -n "$app" ] && kill "$app" 2>/dev/null || true
    [ -n "$xvfb_pid" ] && kill "$xvfb_pid" 2>/dev/null || true
    rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "layout_window: $*" >&2; exit 1; }

"$BIN" demo "$tmp/demo.bag" >/dev/null
cat >"$tmp/view.json" <<'EOF'
{
  "bagscope_layout": 1,
  "images": ["/camera/front/image_raw"],
  "series": ["/imu/data.linear_acceleration.x"],
  "log": true,
  "hidden_topics": ["/tf"],
  "bookmarks": [{"from_start_ns": 0, "label": "Bookmark 1"}],
  "state_rows": ["/rosout.level"]
}
EOF

# The screen into $1 once two reads a second apart are the same (at most a minute).
settled() {
    local prev="" i
    for i in $(seq 60); do
        sleep 1
        xwd -root -silent >"$1"
        local now
        now=$(md5sum <"$1")
        [ "$now" = "$prev" ] && return 0
        prev=$now
    done
    fail "the window did not settle within a minute"
}

# One run: $1 its name, the rest bagscope's arguments; $BY_HAND set: the view built by hand.
shoot() {
    local name=$1
    shift
    mkdir -p "$tmp/x-$name"
    xvfb_start 1600x1000 "$tmp/x-$name" || fail "no X server for the $name run"
    # Nothing saved from an earlier run (recent files, remembered layouts) comes in.
    local home=$tmp/home-$name
    mkdir -p "$home"
    HOME=$home XDG_DATA_HOME=$home/data XDG_CONFIG_HOME=$home/config XDG_CACHE_HOME=$home/cache \
        "$BIN" "$@" >"$out/$name.log" 2>&1 &
    app=$!
    for _ in $(seq 600); do
        xdotool search --name '^bagscope' >/dev/null 2>&1 && break
        kill -0 "$app" 2>/dev/null || fail "bagscope exited: $(cat "$out/$name.log")"
        sleep 0.1
    done
    # The pointer out of the way (a tooltip or a hovered button would differ).
    xdotool mousemove 1590 990
    settled "$out/$name-opened.xwd"
    if [ -n "${BY_HAND:-}" ]; then
        xdotool windowfocus "$(xdotool search --name '^bagscope' | head -1)"
        sleep 0.3
        xdotool mousemove 985 66 click 1
        sleep 0.3
        xdotool type --delay 20 '/rosout.level'
        xdotool key Return
        sleep 0.5
        xdotool mousemove 656 923 click 1
        sleep 0.3
        xdotool type --delay 20 '/imu/data.linear_acceleration.x'
        xdotool key Return
        sleep 0.5
        xdotool mousemove 16 474 click 1 # /tf's box in the tree
        sleep 0.3
        xdotool mousemove 1400 700 click 1 # nothing (the inspector's empty space)
        sleep 0.3
        xdotool key b
        sleep 0.3
        xdotool key ctrl+k
        sleep 0.5
        xdotool type --delay 30 'image panel front/image_raw'
        sleep 0.5
        xdotool key Return
        sleep 0.5
        xdotool key ctrl+l
        xdotool mousemove 1590 990
    fi
    settled "$out/$name.xwd"
    kill "$app"
    wait "$app" 2>/dev/null || true
    app=
    kill "$xvfb_pid"
    wait "$xvfb_pid" 2>/dev/null || true
    xvfb_pid=
}

BY_HAND=1 shoot by-hand "$tmp/demo.bag"
shoot layout --layout "$tmp/view.json" "$tmp/demo.bag"
cmp -s "$out/by-hand-opened.xwd" "$out/by-hand.xwd" \
    && fail "building the view by hand changed nothing on the screen (see $out)"
cmp -s "$out/by-hand.xwd" "$out/layout.xwd" \
    || fail "--layout gives another screen than the view built by hand: $out/by-hand.xwd, $out/layout.xwd"
echo "layout_window: --layout and the view built by hand give the same screen ($(stat -c %s "$out/layout.xwd") bytes)"
