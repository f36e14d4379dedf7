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

return M
