-- What `leakbench run` shows while it runs, on stderr.
--
-- On a terminal: one line, redrawn in place, that never wraps (a wrapped
-- line cannot be redrawn: each redraw would leave a new line behind): it
-- is fitted to the terminal's width at each redraw (60 columns and up;
-- narrower ones get it cut), dropping the bar, then the times, before the
-- counts. The counts: runs done of all, running, runs that leaked a secret
-- in any channel, failed (a check failed or a claim broke), errors (every
-- other verdict that is not a pass: error, timeout, invalid, skipped).
-- Above it, one permanent line for each run that did not simply pass.
--
-- Without a terminal: one line per run, "[k/n] scenario × subject #r:
-- CELL", CELL exactly as the matrix shows that run (report.cell, with the
-- subject's claim on it), then for a run that did not pass its reason and
-- cause. Every string from a user's file or the evidence passes
-- printable.line.
local core = require "leakbench.core"
local printable = require "leakbench.printable"
local report = require "leakbench.report"

local M = {}

M.BAR_MIN, M.BAR_MAX = 10, 30

local P = {}
P.__index = P

--- M.new(total, opts) -> a progress display for TOTAL runs. OPTS (all
--- optional): multi (several Claude Code versions: labels name them),
--- claims ({ [subject] = { [scenario] = true } }: the subjects' blocks),
--- tty (default: stderr is a terminal), out (a file, default io.stderr),
--- width (a function returning the columns, default the terminal's, else
--- $COLUMNS, else 80), now (a clock, default core.now).
function M.new(total, opts)
  opts = opts or {}
  local tty = opts.tty
  if tty == nil then tty = core.isatty(2) end
  local self = setmetatable({ total = total, done = 0, running = 0, leaks = 0, failed = 0, errors = 0,
    multi = opts.multi, claims = opts.claims or {}, tty = tty, out = opts.out or io.stderr,
    width = opts.width or function()
      return core.term_width(2) or math.tointeger(tonumber(os.getenv("COLUMNS"))) or 80
    end,
    now = opts.now or core.now }, P)
  self.t0 = self.now()
  return self
end

local function fmt_time(s)
  s = math.floor(s + 0.5)
  if s >= 3600 then return string.format("%d:%02d:%02d", s // 3600, s % 3600 // 60, s % 60) end
  return string.format("%d:%02d", s // 60, s % 60)
end
M.fmt_time = fmt_time

local function len(s) return utf8.len(s) or #s end

-- S cut to N characters.
local function clip(s, n)
  if len(s) <= n then return s end
  return s:sub(1, (utf8.offset(s, n + 1) or (#s + 1)) - 1)
end

--- p:line([width]) -> the one-line status, at most WIDTH - 1 characters
--- (the last column is never written: some terminals wrap there).
function P:line(width)
  width = width or self.width()
  local avail = math.max(1, width - 1)
  local elapsed = self.now() - self.t0
  local counts = { string.format("%d/%d", self.done, self.total),
    string.format("%d running", self.running), string.format("%d leaked", self.leaks),
    string.format("%d failed", self.failed), string.format("%d errors", self.errors) }
  local times = { fmt_time(elapsed) .. " elapsed" }
  if self.done > 0 and self.done < self.total then
    times[2] = "~" .. fmt_time(elapsed / self.done * (self.total - self.done)) .. " left"
  end
  local function text(t)
    local all = {}
    for _, x in ipairs(counts) do all[#all + 1] = x end
    for _, x in ipairs(t) do all[#all + 1] = x end
    return table.concat(all, "  ")
  end
  -- with a bar, dropping times until it fits; then without one
  for n = #times, 0, -1 do
    local s = text({ table.unpack(times, 1, n) })
    local room = avail - len(s) - 3   -- "[" bar "] "
    if room >= M.BAR_MIN then
      local w = math.min(M.BAR_MAX, room)
      local fill = math.floor(w * self.done / math.max(self.total, 1))
      return "[" .. string.rep("=", fill) .. string.rep(" ", w - fill) .. "] " .. s
    end
  end
  for n = #times, 0, -1 do
    local s = text({ table.unpack(times, 1, n) })
    if len(s) <= avail then return s end
  end
  return clip(text({}), avail)
end

--- M.fit(parts, width) -> PARTS joined by " · " into lines of at most
--- WIDTH - 1 characters, broken between parts (a part longer than that
--- is cut).
function M.fit(parts, width)
  local avail, lines, cur = math.max(1, width - 1), {}, nil
  for _, p in ipairs(parts) do
    p = clip(p, avail)
    if cur and len(cur) + 3 + len(p) <= avail then
      cur = cur .. " · " .. p
    else
      if cur then lines[#lines + 1] = cur end
      cur = p
    end
  end
  if cur then lines[#lines + 1] = cur end
  return lines
end

--- M.header(parts[, opts]) -> writes the run's first line: PARTS joined
--- by " · "; on a terminal, fitted to its width (M.fit). OPTS: tty, out,
--- width as M.new takes them.
function M.header(parts, opts)
  local p = M.new(0, opts)
  local lines = { table.concat(parts, " · ") }
  if p.tty then lines = M.fit(parts, p.width()) end
  for _, l in ipairs(lines) do p.out:write(l, "\n") end
end

function P:tick()
  if self.tty then
    self.out:write("\r\27[K", self:line())
    self.out:flush()
  end
end

-- "scenario × subject #k", the subject as NAME@VERSION when several
-- Claude Code versions run.
function P:label(r)
  return string.format("%s × %s%s #%d", printable.line(r.scenario), printable.line(r.subject),
    self.multi and ("@" .. printable.line(r.claude_version)) or "", math.tointeger(r.repeat_index) or 1)
end

--- p:cell(r) -> run R's cell as the matrix will show it: report.cell,
--- with the claim the document will give it.
function P:cell(r)
  local c = r
  if r.claim == nil and self.claims[r.subject] and self.claims[r.subject][r.scenario] then
    c = setmetatable({ claim = report.claim_of(r) }, { __index = r })
  end
  return report.cell(c)
end

-- The reason and cause of a run that did not pass, for its line.
local function why(r)
  if r.verdict == "pass" then return "" end
  local parts = {}
  if type(r.reason) == "string" then parts[#parts + 1] = r.reason:match("^[^\n]*") end
  if type(r.cause) == "string" then parts[#parts + 1] = "cause: " .. r.cause end
  if #parts == 0 then return "" end
  return " — " .. printable.line(table.concat(parts, " — "), 600)
end

--- p:finished(r) -> counts run R (a result.json) and shows it.
function P:finished(r)
  self.done = self.done + 1
  local cell = self:cell(r)
  local broken = cell:find("claim broken", 1, true) ~= nil
  if next(report.leaked(r)) and (r.verdict == "pass" or r.verdict == "fail" or r.verdict == "invalid") then
    self.leaks = self.leaks + 1
  end
  if r.verdict == "fail" or broken then self.failed = self.failed + 1
  elseif r.verdict ~= "pass" then self.errors = self.errors + 1 end
  local line = string.format("%s: %s%s", self:label(r), printable.line(cell), why(r))
  if self.tty then
    self.out:write("\r\27[K")
    if r.verdict ~= "pass" or broken then self.out:write(line, "\n") end
    self:tick()
  else
    self.out:write(string.format("[%d/%d] %s\n", self.done, self.total, line))
  end
end

function P:close()
  if self.tty then
    self.out:write("\r\27[K")
    self.out:flush()
  end
end

return M
