# Sourced by the CI scripts that need an X server of their own: `xvfb_start WxH DIR` starts Xvfb
# on a display it picks itself (`-displayfd`: the first one no live server holds; a stale lock
# of a server that died is taken over), waits until it serves (up to a minute: a loaded machine
# has been seen to take over five seconds) and exports DISPLAY; its pid is in $xvfb_pid and
# what it printed in DIR/xvfb.log. A server that does not come up is said with its own words,
# never left for the app to fail on.
xvfb_pid=
xvfb_start() {
    local size=$1 dir=$2 i
    : >"$dir/xvfb.display"
    Xvfb -displayfd 3 -screen 0 "${size}x24" -nolisten tcp \
        3>"$dir/xvfb.display" >"$dir/xvfb.log" 2>&1 &
    xvfb_pid=$!
    for i in $(seq 600); do
        if grep -q '^[0-9][0-9]*$' "$dir/xvfb.display" 2>/dev/null; then
            DISPLAY=:$(head -1 "$dir/xvfb.display")
            export DISPLAY
            return 0
        fi
        kill -0 "$xvfb_pid" 2>/dev/null || break
        sleep 0.1
    done
    echo "Xvfb did not start (after ${i} tries): $(cat "$dir/xvfb.log")" >&2
    return 1
}
