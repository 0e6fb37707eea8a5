-- Debian's lua5.4 running PlotJuggler's backward-difference snippet over values already in
-- memory: the samples of a CSV (time_ns,value) loaded into arrays first (not timed), then
-- calc(time, value) called for each, its results kept in an array, as bagscope keeps them.
-- Prints: samples, best seconds of RUNS runs.
-- usage: lua5.4 scripts/bench/lua_loop.lua VALUES.csv RUNS
local ts, vs = {}, {}
local first = true
for line in io.lines(arg[1]) do
  if first then first = false else
    local t, v = line:match("^(%d+),(.*)$")
    ts[#ts + 1] = math.tointeger(tonumber(t)) / 1e9
    vs[#vs + 1] = tonumber(v) * 1.0
  end
end
local best = math.huge
for _ = 1, tonumber(arg[2] or "3") do
  -- The snippet's global section and function, as PlotJuggler wraps them.
  prevX = 0
  prevY = 0
  is_first = true
  local function calc(time, value)
    if (is_first) then
      is_first = false
      prevX = time
      prevY = value
    end
    dx = time - prevX
    dy = value - prevY
    prevX = time
    prevY = value
    return dy/dx
  end
  local out = {}
  local t0 = os.clock()
  for i = 1, #ts do
    out[i] = calc(ts[i], vs[i])
  end
  local dt = os.clock() - t0
  if dt < best then best = dt end
end
print(#ts, best)
