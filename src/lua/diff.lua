-- "leakbench diff A B": what changed between two results folders (run,
-- merge or rescore), so that CI can gate a protection's new release or a
-- Claude Code upgrade. Reads only the two results.json documents (never a
-- run folder); nothing here sees a raw secret.
--
-- It compares, by scenario and column (a subject; "NAME@VERSION" when
-- either side has runs of several Claude Code versions):
--   scenarios and subjects new in B or gone from A;
--   cells whose text (report.cell_repeats) changed;
--   claims: each scenario a subject claims, its state in A and in B
--     (held, broken, untested), the state of several repeats as
--     report.lua sums them (broken over untested over held);
--   wire leak rates: each column's k/n in A and in B, and the paired
--     difference B - A over the runs of the same scenario and repeat judged
--     on both sides (Newcombe's interval, exact McNemar p: stats.paired);
--   utility: the tasks each column did in A and in B, and which changed.
--
-- Exit status: 1 when a claim that held in A is broken in B (a
-- regression), 0 otherwise, 2 on a usage error or a folder that is not a
-- results folder.
local cjson = require "cjson"
local core = require "leakbench.core"
local json = require "leakbench.json"
local printable = require "leakbench.printable"
local report = require "leakbench.report"
local stats = require "leakbench.stats"
local html = require "leakbench.html"

local M = {}

M.EXIT = { ok = 0, regression = 1, usage = 2 }

local JUDGED = { pass = true, fail = true, invalid = true }

local function perr(fmt, ...)
  io.stderr:write("leakbench: diff: ", string.format(fmt, ...), "\n")
end

--- M.load(path) -> doc or nil, msg. PATH: a results folder, or a
--- results.json file. The message names the file and what is wrong.
function M.load(path)
  local file = path
  if core.stat(path .. "/results.json") or not path:match("%.json$") then
    file = path:gsub("/+$", "") .. "/results.json"
  end
  local text, err = core.read_file(file)
  if not text then
    -- the reason in the grammar of errors: lowercase (strerror's is not)
    return nil, (tostring(err):gsub(": (%u)(%l[^:]*)$", function(a, b) return ": " .. a:lower() .. b end))
  end
  local ok, doc = pcall(cjson.decode, text)
  if not ok or type(doc) ~= "table" or doc.schema ~= report.SCHEMA or type(doc.runs) ~= "table" then
    return nil, string.format("'%s' is not a leakbench results file (%s)", file, report.SCHEMA)
  end
  doc.scenarios = type(doc.scenarios) == "table" and doc.scenarios or {}
  doc.subjects = type(doc.subjects) == "table" and doc.subjects or {}
  return doc
end

-- The column of run R: its subject, with "@VERSION" when BY_VERSION.
local function column(r, by_version)
  local s = tostring(r.subject)
  if by_version then s = s .. "@" .. tostring(r.claude_version) end
  return s
end

local function add_once(list, seen, x)
  if x ~= nil and not seen[x] then
    seen[x] = true
    list[#list + 1] = x
  end
end

-- What one document holds, indexed: scenario and column orders, the runs
-- of each cell, the runs by cell and repeat, utility scenarios, claims.
local function index(doc, by_version)
  local ix = { scen = {}, cols = {}, scen_set = {}, col_set = {}, cells = {}, by_rep = {},
    utility = {}, claims = {}, ran = {} }
  for _, s in ipairs(doc.scenarios) do
    add_once(ix.scen, ix.scen_set, s.name)
    ix.utility[s.name] = s.utility == true
  end
  if not by_version then
    for _, s in ipairs(doc.subjects) do add_once(ix.cols, ix.col_set, s.name) end
  end
  for _, r in ipairs(doc.runs) do
    local col = column(r, by_version)
    add_once(ix.scen, ix.scen_set, r.scenario)
    add_once(ix.cols, ix.col_set, col)
    ix.ran[col] = true
    local key = tostring(r.scenario) .. "\0" .. col
    ix.cells[key] = ix.cells[key] or {}
    table.insert(ix.cells[key], r)
    ix.by_rep[key .. "\0" .. (math.tointeger(r.repeat_index) or 1)] = r
    if r.claim then
      ix.claims[col] = ix.claims[col] or {}
      local prev = ix.claims[col][r.scenario]
      local st = r.claim
      if prev == "broken" or st == "broken" then st = "broken"
      elseif prev == "untested" or st == "untested" then st = "untested" end
      ix.claims[col][r.scenario] = st
    end
  end
  return ix
end

-- The names in list A but not in set B.
local function minus(a, bset)
  local out = {}
  for _, x in ipairs(a) do if not bset[x] then out[#out + 1] = x end end
  return out
end

local function side(path, doc)
  return { path = path, suite_id = doc.suite_id, finished = doc.finished, mode = doc.mode,
    model = doc.model, leakbench = doc.leakbench, claude_versions = json.array(report.versions(doc)),
    runs = #doc.runs }
end

-- Tasks done and not done of column COL in IX.
local function utility_of(ix, col)
  local done, tasks, set = 0, 0, {}
  for _, sc in ipairs(ix.scen) do
    if ix.utility[sc] then
      for _, r in ipairs(ix.cells[sc .. "\0" .. col] or {}) do
        tasks = tasks + 1
        if r.verdict == "pass" then done = done + 1 end
      end
      local runs = ix.cells[sc .. "\0" .. col]
      if runs then
        local all = true
        for _, r in ipairs(runs) do all = all and r.verdict == "pass" end
        set[sc] = all
      end
    end
  end
  return done, tasks, set
end

--- M.compare(a, b[, paths]) -> the differences of results documents A and
--- B (as M.load returns them), a table that json.encode writes as
--- `leakbench diff --json` does:
---   { schema, a = {path, suite_id, ...}, b = {...},
---     scenarios = { added = {...}, removed = {...} },
---     subjects = { added, removed },
---     cells = { { scenario, subject, a, b }, ... },      -- changed only
---     claims = { { subject, scenario, a, b }, ... },     -- changed only
---     regressions = { { subject, scenario }, ... },     -- held -> broken
---     wire = { { subject, a = {k, n}, b = {k, n}, paired = {pairs, diff, lo, hi, p} } },
---     utility = { { subject, a = {k, n}, b = {k, n}, lost = {...}, gained = {...} } },
---     status }
-- The cells of SCEN x COLS whose letters differ between IA and IB (the
-- indexes of documents A and B) into D.cells; D.cells_total counts them all.
local function compare_cells(d, ia, ib, scen, cols)
  d.cells_total = 0
  for _, sc in ipairs(scen) do
    for _, col in ipairs(cols) do
      local key = sc .. "\0" .. col
      local ra, rb = ia.cells[key], ib.cells[key]
      if ra or rb then
        d.cells_total = d.cells_total + 1
        local ca = ra and report.cell_repeats(ra) or "-"
        local cb = rb and report.cell_repeats(rb) or "-"
        if ca ~= cb then
          d.cells[#d.cells + 1] = { scenario = sc, subject = col, a = ca, b = cb }
        end
      end
    end
  end
end

-- The claims that changed into D.claims, those held in A and broken in B
-- also into D.regressions.
local function compare_claims(d, ia, ib, scen, cols)
  for _, col in ipairs(cols) do
    local ca, cb = ia.claims[col] or {}, ib.claims[col] or {}
    for _, sc in ipairs(scen) do
      local sa, sb = ca[sc], cb[sc]
      if (sa or sb) and sa ~= sb then
        d.claims[#d.claims + 1] = { subject = col, scenario = sc, a = sa or "none", b = sb or "none" }
        if sa == "held" and sb == "broken" then
          d.regressions[#d.regressions + 1] = { subject = col, scenario = sc }
        end
      end
    end
  end
end

-- Column COL's wire leaks in A and B, and its runs paired by repeat.
local function compare_wire(d, ia, ib, scen, col)
  local wa, na, wb, nb, pairs_ = 0, 0, 0, 0, {}
  for _, sc in ipairs(scen) do
    for _, r in ipairs(ia.cells[sc .. "\0" .. col] or {}) do
      if JUDGED[r.verdict] then
        na = na + 1
        if report.leaked(r).wire then wa = wa + 1 end
      end
    end
    for _, r in ipairs(ib.cells[sc .. "\0" .. col] or {}) do
      if JUDGED[r.verdict] then
        nb = nb + 1
        local lb = report.leaked(r).wire ~= nil
        if lb then wb = wb + 1 end
        local key = sc .. "\0" .. col .. "\0" .. (math.tointeger(r.repeat_index) or 1)
        local ra = ia.by_rep[key]
        if ra and JUDGED[ra.verdict] then
          pairs_[#pairs_ + 1] = { lb, report.leaked(ra).wire ~= nil }
        end
      end
    end
  end
  local p = stats.paired(pairs_)
  d.wire[#d.wire + 1] = { subject = col, a = { k = wa, n = na }, b = { k = wb, n = nb },
    paired = { pairs = p.n, diff = p.diff, lo = p.lo, hi = p.hi, p = p.p,
      only_a = p.c, only_b = p.b } }
end

-- Column COL's utility in A and B, and the scenarios it lost or gained.
local function compare_utility(d, ia, ib, scen, col)
  local ka, ta, sa = utility_of(ia, col)
  local kb, tb, sb = utility_of(ib, col)
  if ta + tb == 0 then return end
  local lost, gained = {}, {}
  for _, sc in ipairs(scen) do
    if sa[sc] == true and sb[sc] == false then lost[#lost + 1] = sc end
    if sa[sc] == false and sb[sc] == true then gained[#gained + 1] = sc end
  end
  d.utility[#d.utility + 1] = { subject = col, a = { k = ka, n = ta }, b = { k = kb, n = tb },
    lost = json.array(lost), gained = json.array(gained) }
end

function M.compare(a, b, paths)
  paths = paths or {}
  local by_version = #report.versions(a) > 1 or #report.versions(b) > 1
  local ia, ib = index(a, by_version), index(b, by_version)
  local d = { schema = "leakbench.diff/1", a = side(paths[1], a), b = side(paths[2], b),
    scenarios = { added = json.array(minus(ib.scen, ia.scen_set)),
      removed = json.array(minus(ia.scen, ib.scen_set)) },
    subjects = { added = json.array(minus(ib.cols, ia.col_set)),
      removed = json.array(minus(ia.cols, ib.col_set)) },
    cells = json.array(), claims = json.array(), regressions = json.array(),
    wire = json.array(), utility = json.array() }
  -- Scenarios and columns in B's order, then those only A has.
  local scen, scen_set, cols, col_set = {}, {}, {}, {}
  for _, x in ipairs(ib.scen) do add_once(scen, scen_set, x) end
  for _, x in ipairs(ia.scen) do add_once(scen, scen_set, x) end
  for _, x in ipairs(ib.cols) do add_once(cols, col_set, x) end
  for _, x in ipairs(ia.cols) do add_once(cols, col_set, x) end
  compare_cells(d, ia, ib, scen, cols)
  compare_claims(d, ia, ib, scen, cols)
  for _, col in ipairs(cols) do
    if ia.ran[col] and ib.ran[col] then
      compare_wire(d, ia, ib, scen, col)
      compare_utility(d, ia, ib, scen, col)
    end
  end
  d.status = #d.regressions > 0 and M.EXIT.regression or M.EXIT.ok
  return d
end

local function L(s) return printable.line(s) end

local function names(list)
  local out = {}
  for _, x in ipairs(list) do out[#out + 1] = L(x) end
  return table.concat(out, ", ")
end

local function describe_side(s)
  local v = #s.claude_versions > 0 and ("claude-code " .. table.concat(s.claude_versions, ", ")) or nil
  local parts = { L(s.path or s.suite_id or "?") }
  local extra = {}
  if s.finished then extra[#extra + 1] = L(s.finished) end
  if v then extra[#extra + 1] = L(v) end
  if s.mode then extra[#extra + 1] = L(s.mode) end
  extra[#extra + 1] = s.runs .. " runs"
  parts[#parts + 1] = "(" .. table.concat(extra, " · ") .. ")"
  return table.concat(parts, " ")
end

-- A table of rows (lists of strings) with padded columns, as lines.
local function columns(rows, indent)
  local w = {}
  for _, row in ipairs(rows) do
    for j, c in ipairs(row) do w[j] = math.max(w[j] or 0, utf8.len(c) or #c) end
  end
  local out = {}
  for _, row in ipairs(rows) do
    local parts = {}
    for j, c in ipairs(row) do
      parts[j] = j < #row and (c .. string.rep(" ", w[j] - (utf8.len(c) or #c))) or c
    end
    out[#out + 1] = indent .. table.concat(parts, "  ")
  end
  return out
end

--- M.text(d) -> the differences D (M.compare) for people, lines ending
--- in a newline. Every name from a user's file passes printable.line.
function M.text(d)
  local lines = { "A: " .. describe_side(d.a), "B: " .. describe_side(d.b) }
  local function section(title) lines[#lines + 1] = "" lines[#lines + 1] = title end
  if #d.scenarios.added + #d.scenarios.removed + #d.subjects.added + #d.subjects.removed > 0 then
    section("scenarios and subjects:")
    if #d.scenarios.added > 0 then lines[#lines + 1] = "  new scenarios: " .. names(d.scenarios.added) end
    if #d.scenarios.removed > 0 then lines[#lines + 1] = "  removed scenarios: " .. names(d.scenarios.removed) end
    if #d.subjects.added > 0 then lines[#lines + 1] = "  new subjects: " .. names(d.subjects.added) end
    if #d.subjects.removed > 0 then lines[#lines + 1] = "  removed subjects: " .. names(d.subjects.removed) end
  end
  if #d.cells > 0 then
    section(string.format("cells (%d of %d changed):", #d.cells, d.cells_total))
    local rows = { { "scenario", "subject", "A", "", "B" } }
    for _, c in ipairs(d.cells) do
      rows[#rows + 1] = { L(c.scenario), L(c.subject), L(c.a), "→", L(c.b) }
    end
    for _, l in ipairs(columns(rows, "  ")) do lines[#lines + 1] = l end
  else
    section(string.format("cells: none of %d changed", d.cells_total))
  end
  if #d.claims > 0 then
    section("claims:")
    local rows = {}
    for _, c in ipairs(d.claims) do
      local note = ""
      if c.a == "held" and c.b == "broken" then note = "  REGRESSION"
      elseif c.a == "broken" and c.b == "held" then note = "  fixed" end
      rows[#rows + 1] = { L(c.subject), L(c.scenario), c.a .. " → " .. c.b .. note }
    end
    for _, l in ipairs(columns(rows, "  ")) do lines[#lines + 1] = l end
  end
  if #d.wire > 0 then
    section("leaks on the wire (A → B; paired difference B − A by scenario and repeat):")
    local rows = {}
    for _, w in ipairs(d.wire) do
      local p = w.paired
      rows[#rows + 1] = { L(w.subject), string.format("%d/%d → %d/%d", w.a.k, w.a.n, w.b.k, w.b.n),
        p.pairs > 0 and string.format("%s; %d pair%s", report.format_paired(p), p.pairs,
          p.pairs == 1 and "" or "s") or "no pairs" }
    end
    for _, l in ipairs(columns(rows, "  ")) do lines[#lines + 1] = l end
  end
  if #d.utility > 0 then
    section("utility (tasks done, A → B):")
    local rows = {}
    for _, u in ipairs(d.utility) do
      local extra = {}
      if #u.lost > 0 then extra[#extra + 1] = "no longer done: " .. names(u.lost) end
      if #u.gained > 0 then extra[#extra + 1] = "now done: " .. names(u.gained) end
      rows[#rows + 1] = { L(u.subject), string.format("%d/%d → %d/%d", u.a.k, u.a.n, u.b.k, u.b.n),
        table.concat(extra, "; ") }
    end
    for _, l in ipairs(columns(rows, "  ")) do lines[#lines + 1] = (l:gsub("%s+$", "")) end
  end
  lines[#lines + 1] = ""
  if #d.regressions > 0 then
    local r = {}
    for _, x in ipairs(d.regressions) do r[#r + 1] = L(x.subject) .. " × " .. L(x.scenario) end
    lines[#lines + 1] = string.format("%d claim%s held in A and broken in B: %s", #d.regressions,
      #d.regressions == 1 and "" or "s", table.concat(r, ", "))
  else
    lines[#lines + 1] = "no claim that held in A is broken in B"
  end
  return table.concat(lines, "\n") .. "\n"
end

--- M.html(d) -> the differences D as a section of B's report.html.
function M.html(d)
  local h = printable.html
  local out = { '<section class="diff"><h2>Changes since ', h(d.a.path or d.a.suite_id or "A"), "</h2>\n" }
  local function list(title, items)
    if #items == 0 then return end
    local parts = {}
    for _, n in ipairs(items) do parts[#parts + 1] = "<code>" .. h(n) .. "</code>" end
    out[#out + 1] = "<p>" .. h(title) .. ": " .. table.concat(parts, ", ") .. "</p>\n"
  end
  list("new scenarios", d.scenarios.added)
  list("removed scenarios", d.scenarios.removed)
  list("new subjects", d.subjects.added)
  list("removed subjects", d.subjects.removed)
  out[#out + 1] = string.format("<p>%d of %d cells changed</p>\n", #d.cells, d.cells_total)
  if #d.cells > 0 then
    out[#out + 1] = '<table class="diff-cells"><tr><th>scenario</th><th>subject</th><th>A</th><th>B</th></tr>\n'
    for _, c in ipairs(d.cells) do
      out[#out + 1] = string.format("<tr><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>\n", h(c.scenario),
        h(c.subject), h(c.a), h(c.b))
    end
    out[#out + 1] = "</table>\n"
  end
  if #d.claims > 0 then
    out[#out + 1] = '<table class="diff-claims"><tr><th>subject</th><th>claim</th><th>A</th><th>B</th></tr>\n'
    for _, c in ipairs(d.claims) do
      out[#out + 1] = string.format('<tr%s><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>\n',
        c.a == "held" and c.b == "broken" and ' class="regression"' or "", h(c.subject), h(c.scenario), h(c.a), h(c.b))
    end
    out[#out + 1] = "</table>\n"
  end
  if #d.wire > 0 then
    out[#out + 1] = '<table class="diff-wire"><tr><th>subject</th><th>leaks on the wire, A → B</th>'
      .. "<th>paired difference B − A</th></tr>\n"
    for _, w in ipairs(d.wire) do
      out[#out + 1] = string.format("<tr><td>%s</td><td>%d/%d → %d/%d</td><td>%s</td></tr>\n", h(w.subject),
        w.a.k, w.a.n, w.b.k, w.b.n, w.paired.pairs > 0 and h(report.format_paired(w.paired) .. " · "
          .. w.paired.pairs .. " pairs") or "no pairs")
    end
    out[#out + 1] = "</table>\n"
  end
  out[#out + 1] = string.format("<p><b>%s</b></p></section>\n", #d.regressions > 0
    and h(#d.regressions .. " claim(s) held in A and broken in B") or "no claim that held in A is broken in B")
  return table.concat(out)
end

--- M.main(opts, rest) -> exit status; "leakbench diff [--json] [--report] A B".
function M.main(opts, rest)
  if #rest ~= 2 then
    perr("expected two results folders, got %d (usage: leakbench diff [--json] [--report] A B)", #rest)
    return M.EXIT.usage
  end
  local docs = {}
  for i = 1, 2 do
    local doc, err = M.load(rest[i])
    if not doc then
      perr("%s", err)
      return M.EXIT.usage
    end
    docs[i] = doc
  end
  local d = M.compare(docs[1], docs[2], rest)
  if opts.report then
    local dir = rest[2]:match("^(.*)/results%.json$") or rest[2]
    html.try_write(dir, docs[2], nil, { top = M.html(d) })
  end
  if opts.json then
    io.write(json.encode(d), "\n")
  else
    io.write(M.text(d))
  end
  return d.status
end

return M
