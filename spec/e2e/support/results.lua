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

return M
