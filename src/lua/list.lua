-- "leakbench list": finds and loads scenario and subject files without
-- running anything, lists the good ones on stdout and reports each broken
-- one on stderr with its file:line. It checks what `run` checks before
-- anything runs: a file's kind by its content, names unique (case aside),
-- and it warns about a subject's blocks entry that names no scenario the
-- subject could know of. Exit status 2 when two files give one name, 1
-- when any file is broken or none was found.
local core = require "leakbench.core"
local loader = require "leakbench.loader"
local suggest = require "leakbench.suggest"
local printable = require "leakbench.printable"

local M = {}

-- An error or warning line, printable (it may quote a user's file).
local function perr(fmt, ...)
  io.stderr:write("leakbench: ", printable.line(string.format(fmt, ...), 2000), "\n")
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
  local dups = {}
  for _, e in ipairs(loader.duplicates(M.named(scenarios), "scenario")) do dups[#dups + 1] = e end
  for _, e in ipairs(loader.duplicates(M.named(subjects), "subject")) do dups[#dups + 1] = e end
  for _, e in ipairs(dups) do perr("%s", e) end
  for _, t in ipairs(subjects) do
    for _, msg in ipairs(M.unknown_blocks(t, scenarios)) do perr("%s", msg) end
  end
  -- Columns as wide as their longest entry (names, tags or kinds, files).
  local rows, w, w2 = {}, 8, 8
  for _, t in ipairs(scenarios) do
    rows[t] = #t.tags > 0 and printable.line(table.concat(t.tags, ","), 120) or "-"
  end
  for _, t in ipairs(subjects) do
    local kind = {}
    if t.interceptor then kind[#kind + 1] = "interceptor" end
    if next(t.settings) then kind[#kind + 1] = "settings" end
    if t.setup then kind[#kind + 1] = "setup" end
    if t.agent then kind[#kind + 1] = "agent" end
    if #t.plugins > 0 then kind[#kind + 1] = "plugins" end
    if next(t.mcp.servers) then kind[#kind + 1] = "mcp" end
    if t.permission_mode then kind[#kind + 1] = "mode=" .. printable.line(t.permission_mode, 40) end
    rows[t] = #kind > 0 and table.concat(kind, ",") or "-"
  end
  for t, second in pairs(rows) do
    w, w2 = math.max(w, #t.name), math.max(w2, #second)
  end
  local fmt = "  %-" .. w .. "s  %-" .. w2 .. "s  %s\n"
  if #scenarios > 0 then
    io.write(string.format("%d scenario%s:\n", #scenarios, #scenarios == 1 and "" or "s"))
    for _, t in ipairs(scenarios) do
      io.write(string.format(fmt, t.name, rows[t], printable.line(t.file, 1000)))
    end
  end
  if #subjects > 0 then
    io.write(string.format("%d subject%s:\n", #subjects, #subjects == 1 and "" or "s"))
    for _, t in ipairs(subjects) do
      io.write(string.format(fmt, t.name, rows[t], printable.line(t.file, 1000)))
    end
  end
  if #scenarios == 0 and #subjects == 0 and broken == 0 then
    perr("list: no scenario or subject files found in %s", table.concat(rest, " "))
    return 1
  end
  if #dups > 0 then return 2 end
  return broken > 0 and 1 or 0
end

-- { name=, file=, line= } of each loaded file in LIST.
function M.named(list)
  local out = {}
  for i, t in ipairs(list) do out[i] = { name = t.name, file = t.file, line = t.name_line } end
  return out
end

local function dirname(path)
  return path:match("^(.*)/[^/]*$") or "."
end

-- The scenario names SUBJECT could know of: those in SCENARIOS (what
-- list was given), in the subject file's own folder and its sibling
-- scenarios/, and in ./scenarios/.
local function known_scenarios(subject, scenarios)
  local known = {}
  for _, t in ipairs(scenarios) do known[t.name] = true end
  local dir = dirname(subject.file)
  local paths = {}
  for _, p in ipairs({ dir, dirname(dir) .. "/scenarios", "scenarios" }) do
    if core.listdir(p) then paths[#paths + 1] = p end
  end
  local files = loader.find(paths, core.listdir)
  for _, f in ipairs(files) do
    local t = loader.load(f)
    if t and t.kind == "scenario" then known[t.name] = true end
  end
  return known
end

-- Warnings for each blocks entry of SUBJECT that names no scenario it
-- could know of: a typo, most likely; a claim on it is untested.
function M.unknown_blocks(subject, scenarios)
  if #subject.blocks == 0 then return {} end
  local known = known_scenarios(subject, scenarios)
  local out = {}
  for i, b in ipairs(subject.blocks) do
    if not known[b] then
      out[#out + 1] = string.format("%s:%d: warning: field 'blocks[%d]' names scenario '%s', which is "
        .. "no scenario here: a claim on it is untested%s", subject.file, subject.blocks_line or 1, i,
        printable.line(b, 80), suggest.hint(b, known, 3))
    end
  end
  return out
end

return M
