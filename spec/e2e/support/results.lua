-- Reading a finished run's result from end-to-end specs (outside the
-- binary, so report.lua itself cannot be loaded here).
local M = {}

-- The channels a leak is judged in by these specs, in report.lua's order.
M.CHANNELS = { "wire", "transcript", "answer" }

-- leaked(r) -> the set of M.CHANNELS in which any secret of run R (an
-- entry of results.json's "runs") leaked: report.lua's M.leaked(),
-- without the forms.
function M.leaked(r)
  local out = {}
  for _, s in ipairs(r.leaks or {}) do
    for _, ch in ipairs(M.CHANNELS) do
      local c = s.channels and s.channels[ch]
      if c == true or (type(c) == "table" and c.leaked) then out[ch] = true end
    end
  end
  return out
end

-- The text of the tool results in the stream.jsonl of the run folder DIR.
function M.tool_results(dir)
  local cjson = require "cjson"
  local f = io.open(dir .. "/stream.jsonl", "rb")
  local text = f and f:read("a") or ""
  if f then f:close() end
  local t = {}
  for line in text:gmatch("[^\n]+") do
    local ok, ev = pcall(cjson.decode, line)
    if ok and ev.type == "user" then
      for _, c in ipairs(ev.message.content) do
        if type(c.content) == "string" then t[#t + 1] = c.content end
      end
    end
  end
  return t
end

-- tool_output(dir) -> M.tool_results of the run folder DIR, joined by
-- newlines.
function M.tool_output(dir)
  return table.concat(M.tool_results(dir), "\n")
end

-- matrix(stdout) -> { [scenario] = { cell, ... } }: the rows of the
-- matrix a run printed (cells apart by two spaces or more), the header
-- row aside.
function M.matrix(stdout)
  local rows = {}
  for line in stdout:gmatch("[^\n]+") do
    local name, rest = line:match("^([%w][%w-]+)%s%s+(.*)$")
    if name and name ~= "scenario" then
      local cells = {}
      for cell in (rest .. "  "):gmatch("(.-)%s%s+") do
        if cell ~= "" then cells[#cells + 1] = cell end
      end
      rows[name] = cells
    end
  end
  return rows
end

-- egress(dir) -> the trap's records of the run folder DIR, decoded.
function M.egress(dir)
  local cjson = require "cjson"
  local f = io.open(dir .. "/egress/egress.jsonl", "rb")
  local text = f and f:read("a") or ""
  if f then f:close() end
  local t = {}
  for line in text:gmatch("[^\n]+") do t[#t + 1] = cjson.decode(line) end
  return t
end

return M
