#!/usr/bin/env bash
# The release files as a user installs them (issue 50), from `cargo xtask dist --dev`'s dist/:
#
# - the wheel in a fresh virtual environment: `bagscope --version` names this commit,
#   `bagscope info` of a corpus recording prints what the source build prints, the module
#   imports, `python -m bagscope` runs, and the app from that install shows its window under Xvfb;
# - the .deb with dpkg: its desktop entry passes desktop-file-validate, gio gives a .bag, an
#   .mcap, a misnamed MCAP and a .db3 their content types, bagscope is the application for
#   them, `gio open` of a recording starts bagscope on it; `dpkg -r` leaves none of its files.
#
# Run by .ci/run as root (dpkg). Needs Xvfb, desktop-file-utils, shared-mime-info, gio
# (libglib2.0-bin) and x11-utils (xwininfo), which .ci/run installs.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
corpus=$root/../shared
fail() { echo "install_check: $*" >&2; exit 1; }
tmp=$(mktemp -d)
# shellcheck source=scripts/ci/xvfb.sh
. scripts/ci/xvfb.sh
cleanup() {
    pkill -f "$tmp/" 2>/dev/null || true
    [ -n "$xvfb_pid" ] && kill "$xvfb_pid" 2>/dev/null || true
    rm -rf "$tmp"
}
trap cleanup EXIT
commit=$(git rev-parse --short=12 HEAD)
bag=$corpus/bags/rosbag.js/example-lz4.bag
mcap=$corpus/bags2/lichtblick/example.mcap
db3=$corpus/bags2/mcap/chatter.db3

# A display of our own for the windows below.
xvfb_start 1280x800 "$tmp" || fail "no X server"

# Waits up to 30 s for a window named bagscope; its line of `xwininfo -tree`.
window() {
    for _ in $(seq 300); do
        if w=$(xwininfo -root -tree 2>/dev/null | grep '"bagscope' | head -1) && [ -n "$w" ]; then
            echo "$w"
            return 0
        fi
        sleep 0.1
    done
    return 1
}

# --- The wheel, in a fresh virtual environment.
wheel=$(ls dist/bagscope-*.whl)
python3 -m venv "$tmp/venv"
"$tmp/venv/bin/pip" install --quiet --disable-pip-version-check "$wheel"
v=$("$tmp/venv/bin/bagscope" --version)
[[ $v == *"commit $commit"* ]] || fail "wheel: --version says '$v', not commit $commit"
"$tmp/venv/bin/bagscope" info "$bag" >"$tmp/info-wheel.txt"
target/debug/bagscope info "$bag" >"$tmp/info-source.txt"
cmp -s "$tmp/info-wheel.txt" "$tmp/info-source.txt" || {
    diff "$tmp/info-wheel.txt" "$tmp/info-source.txt" | head -20
    fail "wheel: bagscope info differs from the source build's"
}
"$tmp/venv/bin/python" -c "import bagscope; r = bagscope.open('$bag'); assert sum(t.count for t in r.topics) > 0" \
    || fail "wheel: import bagscope"
v=$("$tmp/venv/bin/python" -m bagscope --version)
[[ $v == *"commit $commit"* ]] || fail "wheel: python -m bagscope --version says '$v'"
HOME=$tmp/home "$tmp/venv/bin/bagscope" "$mcap" >"$tmp/app.log" 2>&1 &
app=$!
w=$(window) || { cat "$tmp/app.log"; fail "wheel: no bagscope window"; }
echo "install_check: wheel's app window: $w"
kill "$app"; wait "$app" 2>/dev/null || true
echo "install_check: wheel $(basename "$wheel") ($(du -m "$wheel" | cut -f1) MB): ok"

# --- The .deb.
deb=$(ls dist/bagscope_*_amd64.deb)
dpkg -i "$deb" >/dev/null
files=$(dpkg -L bagscope | while read -r f; do [ -f "$f" ] && echo "$f"; done)
v=$(/usr/bin/bagscope --version)
[[ $v == *"commit $commit"* ]] || fail "deb: /usr/bin/bagscope --version says '$v'"
desktop-file-validate /usr/share/applications/bagscope.desktop || fail "deb: desktop-file-validate"
cp "$bag" "$tmp/run.bag"
cp "$mcap" "$tmp/run.mcap"
cp "$mcap" "$tmp/renamed.bag"
cp "$mcap" "$tmp/no-extension"
cp "$db3" "$tmp/run_0.db3"
check_type() {
    t=$(gio info -a standard::content-type "$1" | sed -n 's/.*content-type: //p')
    [ "$t" = "$2" ] || fail "deb: gio gives $1 the type '$t', not $2"
}
check_type "$tmp/run.bag" application/x-rosbag
check_type "$tmp/run.mcap" application/x-mcap
check_type "$tmp/renamed.bag" application/x-mcap
check_type "$tmp/no-extension" application/x-mcap
check_type "$tmp/run_0.db3" application/x-rosbag2-sqlite
# `gio mime` prints line by line (g_print flushes each): piped into `grep -q`, which exits at
# the first match, it dies of SIGPIPE on the next line and pipefail failed the check 89 times in
# 200 here, so its whole output is taken first and matched after.
for t in application/x-rosbag application/x-mcap application/x-rosbag2-sqlite; do
    m=$(gio mime "$t")
    [[ $m =~ Default\ application.*bagscope\.desktop ]] || fail "deb: gio mime $t says: $m"
done
HOME=$tmp/home gio open "$tmp/run.mcap"
w=$(window) || fail "deb: gio open started no bagscope window"
pgrep -f "^/usr/bin/bagscope $tmp/run.mcap" >/dev/null || fail "deb: gio open did not start /usr/bin/bagscope on the recording"
echo "install_check: gio open's window: $w"
pkill -f "^/usr/bin/bagscope $tmp/run.mcap" || true
dpkg -r bagscope >/dev/null
for f in $files; do
    [ ! -e "$f" ] || fail "deb: $f left after dpkg -r"
done
m=$(gio mime application/x-mcap 2>/dev/null || true)
if [[ $m == *bagscope* ]]; then fail "deb: bagscope still handles application/x-mcap: $m"; fi
echo "install_check: deb $(basename "$deb") ($(du -m "$deb" | cut -f1) MB): ok"
