-- "leakbench list": finds and loads scenario and subject files without
-- running anything, lists the good ones on stdout and reports each broken
-- one on stderr with its file:line. Exit status 1 when any file is broken
-- or none was found.
local core = require "leakbench.core"
local loader = require "leakbench.loader"

local M = {}

local function perr(fmt, ...)
  io.stderr:write("leakbench: ", string.format(fmt, ...), "\n")
end

--- M.main(opts, paths) -> exit status. PATHS default to scenarios/.
function M.main(_, rest)
  if #rest == 0 then rest = { "scenarios/" } end
  local files, errs = loader.find(rest, core.listdir)
  local broken = #errs
  for _, e in ipairs(errs) do perr("%s", e) end
  local scenarios, subjects = {}, {}
  for _, f in ipairs(files) do
    local t, err = loader.load(f)
    if not t then
      broken = broken + 1
      perr("%s", err)
    elseif t.kind == "subject" then
      subjects[#subjects + 1] = t
      for _, w in ipairs(t.warnings) do perr("warning: %s", w) end
    else
      scenarios[#scenarios + 1] = t
    end
  end
  local w = 8
  for _, t in ipairs(scenarios) do w = math.max(w, #t.name) end
  for _, t in ipairs(subjects) do w = math.max(w, #t.name) end
  if #scenarios > 0 then
    io.write(string.format("%d scenario%s:\n", #scenarios, #scenarios == 1 and "" or "s"))
    for _, t in ipairs(scenarios) do
      local tags = #t.tags > 0 and table.concat(t.tags, ",") or "-"
      io.write(string.format("  %-" .. w .. "s  %-24s %s\n", t.name, tags, t.file))
    end
  end
  if #subjects > 0 then
    io.write(string.format("%d subject%s:\n", #subjects, #subjects == 1 and "" or "s"))
    for _, t in ipairs(subjects) do
      local kind = {}
      if t.interceptor then kind[#kind + 1] = "interceptor" end
      if next(t.settings) then kind[#kind + 1] = "settings" end
      if t.setup then kind[#kind + 1] = "setup" end
      if t.agent then kind[#kind + 1] = "agent" end
      if #t.plugins > 0 then kind[#kind + 1] = "plugins" end
      if next(t.mcp.servers) then kind[#kind + 1] = "mcp" end
      if t.permission_mode then kind[#kind + 1] = "mode=" .. t.permission_mode end
      io.write(string.format("  %-" .. w .. "s  %-24s %s\n", t.name,
        #kind > 0 and table.concat(kind, ",") or "-", t.file))
    end
  end
  if #scenarios == 0 and #subjects == 0 and broken == 0 then
    perr("list: no scenario or subject files found in %s", table.concat(rest, " "))
    return 1
  end
  return broken > 0 and 1 or 0
end

return M
