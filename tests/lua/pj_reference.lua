-- The reference for bagscope's series scripts: a PlotJuggler custom function run by the
-- reference Lua interpreter (Debian's lua5.4) over the series `bagscope csv` wrote, as
-- PlotJuggler runs it (plotjuggler_app/transforms/lua_custom_function.cpp): the global section
-- once, then calc(time, value, v1, ..., vN) for every sample of the main series, each
-- additional source at its nearest sample (getIndexFromX: the first at or after the time, or
-- the one before when strictly nearer; the last past the end; NaN when empty). Values are
-- doubles, as PlotJuggler's are.
--
-- usage: lua5.4 pj_reference.lua GLOBAL_FILE FUNCTION_FILE MAIN.csv [EXTRA.csv ...]
-- prints: P,<time_ns>,<value>      a point of the series
--         N,<key>,<time_ns>,<value> a point of the named series <key>
--         E,<sample>,<message>     an error at that sample (and stops)

local function read_file(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("a")
  f:close()
  return s
end

-- time_ns,value rows (the header skipped; empty cells left out).
local function read_csv(path)
  local ts, secs, vs = {}, {}, {}
  local first = true
  for line in io.lines(path) do
    if first then
      first = false
    else
      local t, v = line:match("^(%d+),(.*)$")
      if t and v ~= "" then
        local ti = math.tointeger(tonumber(t))
        ts[#ts + 1] = ti
        secs[#secs + 1] = ti / 1e9
        vs[#vs + 1] = tonumber(v) * 1.0
      end
    end
  end
  return { ts = ts, secs = secs, vs = vs }
end

local function nearest(s, x)
  local n = #s.secs
  if n == 0 then return nil end
  local lo, hi = 1, n + 1
  while lo < hi do
    local mid = (lo + hi) // 2
    if s.secs[mid] < x then lo = mid + 1 else hi = mid end
  end
  if lo > n then return n end
  if lo > 1 and math.abs(s.secs[lo - 1] - x) < math.abs(s.secs[lo] - x) then
    return lo - 1
  end
  return lo
end

local function num(x)
  if x ~= x then return "nan" end
  return string.format("%.17g", x)
end

local function ns(t)
  return math.floor(t * 1e9 + 0.5)
end

local global_text = read_file(arg[1])
local function_text = read_file(arg[2])
local main = read_csv(arg[3])
local extra = {}
for i = 4, #arg do extra[#extra + 1] = read_csv(arg[i]) end

local params = "time, value"
for i = 1, #extra do params = params .. ", v" .. i end
local env = _G
assert(load(global_text, "=global", "t", env))()
assert(load("function calc(" .. params .. ")\n" .. function_text .. "\nend", "=function", "t", env))()

local out = {}
local named = {}
for k = 1, #main.ts do
  local t, v = main.secs[k], main.vs[k]
  local args = { t, v }
  for j, s in ipairs(extra) do
    local i = nearest(s, t)
    args[#args + 1] = i and s.vs[i] or (0 / 0)
  end
  local ok, a, b = pcall(calc, table.unpack(args, 1, 2 + #extra))
  if not ok then
    print("E," .. (k - 1) .. "," .. tostring(a))
    os.exit(0)
  end
  if type(a) == "number" and type(b) == "number" then
    out[#out + 1] = { ns(a), b }
  elseif type(a) == "number" then
    out[#out + 1] = { main.ts[k], a }
  elseif type(a) == "table" and #a > 0 then
    for _, p in ipairs(a) do out[#out + 1] = { ns(p[1]), p[2] } end
  elseif type(a) == "table" then
    for key, x in pairs(a) do
      named[#named + 1] = { key, main.ts[k], x }
    end
  else
    print("E," .. (k - 1) .. ",returned " .. type(a))
    os.exit(0)
  end
end
-- In time order, a stable sort (equal times keep their order).
for i, p in ipairs(out) do p[3] = i end
table.sort(out, function(x, y)
  if x[1] ~= y[1] then return x[1] < y[1] end
  return x[3] < y[3]
end)
for _, p in ipairs(out) do print("P," .. string.format("%d", p[1]) .. "," .. num(p[2])) end
for _, p in ipairs(named) do print("N," .. p[1] .. "," .. string.format("%d", p[2]) .. "," .. num(p[3])) end
