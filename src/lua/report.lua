-- Results: the results.json document, junit.xml, and the matrix a person
-- reads (scenario rows, subject columns, verdicts and leaked channels).
-- Nothing here ever sees a raw secret: runs carry hashes and masks only.
local cjson = require "cjson"
local json = require "leakbench.json"
local core = require "leakbench.core"

local M = {}

M.SCHEMA = "leakbench.results/1"
local CHANNELS = { { "wire", "W" }, { "transcript", "T" }, { "answer", "A" } }

-- The channels (wire, transcript, answer) in which any secret of run R
-- leaked, and the non-raw forms seen there: { wire = {forms...}, ... }.
function M.leaked(r)
  local out = {}
  for _, s in ipairs(r.leaks or {}) do
    for _, ch in ipairs(CHANNELS) do
      local c = s.channels and s.channels[ch[1]]
      if c == true or (type(c) == "table" and c.leaked) then
        out[ch[1]] = out[ch[1]] or {}
        for _, f in ipairs(type(c) == "table" and c.forms or {}) do
          if f ~= "raw" then out[ch[1]][f] = true end
        end
      end
    end
  end
  return out
end

-- A cell for one run.
function M.cell(r)
  if r.verdict == "fail" then
    local where = r.failed_checks and r.failed_checks[1] and r.failed_checks[1].where
    return "fail" .. (where and (" (" .. where:match("[^/]*$") .. ")") or "")
  elseif r.verdict ~= "pass" then
    return r.verdict
  end
  local leaked = M.leaked(r)
  local letters, forms = {}, {}
  for _, ch in ipairs(CHANNELS) do
    if leaked[ch[1]] then
      letters[#letters + 1] = ch[2]
      for f in pairs(leaked[ch[1]]) do forms[f] = true end
    end
  end
  if #letters == 0 then return "pass" end
  local fl = {}
  for f in pairs(forms) do fl[#fl + 1] = f end
  table.sort(fl)
  return "leak " .. table.concat(letters, " ") .. (#fl > 0 and (" (" .. table.concat(fl, ",") .. ")") or "")
end

-- Wilson score interval for k successes in n trials, 95%.
function M.wilson(k, n)
  if n == 0 then return 0, 1 end
  local z = 1.959963984540054
  local p = k / n
  local d = 1 + z * z / n
  local c = (p + z * z / (2 * n)) / d
  local h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
  return math.max(0, c - h), math.min(1, c + h)
end

-- A cell for several repeats of the same scenario x subject.
function M.cell_repeats(runs)
  if #runs == 1 then return M.cell(runs[1]) end
  local k, n, bad = 0, 0, {}
  for _, r in ipairs(runs) do
    if r.verdict == "pass" then
      n = n + 1
      if next(M.leaked(r)) then k = k + 1 end
    else
      bad[r.verdict] = (bad[r.verdict] or 0) + 1
    end
  end
  local parts = {}
  if n > 0 then
    local lo, hi = M.wilson(k, n)
    parts[#parts + 1] = string.format("leak %d/%d [%.2f-%.2f]", k, n, lo, hi)
  end
  for _, v in ipairs({ "fail", "error", "timeout", "skipped", "interrupted" }) do
    if bad[v] then parts[#parts + 1] = v .. " " .. bad[v] end
  end
  return table.concat(parts, ", ")
end

-- A run read back from its result.json (cjson cannot tell [] from {}):
-- its lists marked as lists again.
local function lists(r)
  r.failed_checks = r.failed_checks and json.array(r.failed_checks)
  if type(r.leaks) == "table" then
    json.array(r.leaks)
    for _, s in ipairs(r.leaks) do
      for _, ch in pairs(type(s.channels) == "table" and s.channels or {}) do
        if type(ch) == "table" then
          ch.forms = json.array(ch.forms or {})
          ch.locations = json.array(ch.locations or {})
        end
      end
    end
  end
  return r
end

function M.document(results, meta)
  for _, r in ipairs(results) do lists(r) end
  table.sort(results, function(a, b)
    if a.scenario ~= b.scenario then return tostring(a.scenario) < tostring(b.scenario) end
    if a.subject ~= b.subject then return tostring(a.subject) < tostring(b.subject) end
    return (a.repeat_index or 0) < (b.repeat_index or 0)
  end)
  local scen, subj = {}, {}
  for _, s in ipairs(meta.scenarios or {}) do
    scen[#scen + 1] = { name = s.name, file = s.file, tags = json.array(s.tags or {}),
      error = s.error }
  end
  for _, s in ipairs(meta.subjects or {}) do
    subj[#subj + 1] = { name = s.name, file = s.file, error = s.error }
  end
  return {
    schema = M.SCHEMA, leakbench = meta.version, suite_id = meta.suite_id,
    finished = os.date("!%Y-%m-%dT%H:%M:%SZ"),
    mode = meta.live and "live" or "scripted", model = meta.model, images = meta.images,
    repeats = meta.repeats, interrupted = meta.interrupted,
    scenarios = json.array(scen), subjects = json.array(subj),
    runs = json.array(results),
  }
end

local function xml(s)
  return (tostring(s):gsub("[&<>\"']", { ["&"] = "&amp;", ["<"] = "&lt;", [">"] = "&gt;",
    ['"'] = "&quot;", ["'"] = "&apos;" }):gsub("[%z\1-\8\11\12\14-\31]", "?"))
end

function M.junit(doc)
  local by_subject, order = {}, {}
  for _, r in ipairs(doc.runs) do
    if not by_subject[r.subject] then
      by_subject[r.subject] = {}
      order[#order + 1] = r.subject
    end
    table.insert(by_subject[r.subject], r)
  end
  local out = { '<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="leakbench">\n' }
  for _, s in ipairs(order) do
    local runs = by_subject[s]
    local fails, errors, time = 0, 0, 0
    for _, r in ipairs(runs) do
      if r.verdict == "fail" then fails = fails + 1
      elseif r.verdict ~= "pass" then errors = errors + 1 end
      time = time + (r.timings and r.timings.total or 0)
    end
    out[#out + 1] = string.format('  <testsuite name="%s" tests="%d" failures="%d" errors="%d" time="%.3f">\n',
      xml(s), #runs, fails, errors, time)
    for _, r in ipairs(runs) do
      out[#out + 1] = string.format('    <testcase classname="%s" name="%s#%d" time="%.3f">',
        xml(s), xml(r.scenario), r.repeat_index or 1, r.timings and r.timings.total or 0)
      if r.verdict == "fail" then
        out[#out + 1] = string.format('<failure message="%s"/>', xml(r.reason or "check failed"))
      elseif r.verdict ~= "pass" then
        out[#out + 1] = string.format('<error type="%s" message="%s"/>', xml(r.verdict), xml(r.reason or r.verdict))
      end
      out[#out + 1] = string.format("<system-out>%s</system-out></testcase>\n", xml(M.cell(r)))
    end
    out[#out + 1] = "  </testsuite>\n"
  end
  out[#out + 1] = "</testsuites>\n"
  return table.concat(out)
end

function M.write(dir, doc)
  local text = json.encode(doc)
  assert(core.write_file(dir .. "/results.json.tmp", text .. "\n", 420))
  assert(os.rename(dir .. "/results.json.tmp", dir .. "/results.json"))
  assert(core.write_file(dir .. "/junit.xml.tmp", M.junit(doc), 420))
  assert(os.rename(dir .. "/junit.xml.tmp", dir .. "/junit.xml"))
end

-- The matrix and the per-subject summary, as text.
function M.matrix(doc)
  local scen_order, subj_order, cells = {}, {}, {}
  local seen_sc, seen_sj = {}, {}
  for _, s in ipairs(doc.scenarios or {}) do
    if not seen_sc[s.name] then seen_sc[s.name] = true scen_order[#scen_order + 1] = s.name end
  end
  for _, s in ipairs(doc.subjects or {}) do
    if not seen_sj[s.name] then seen_sj[s.name] = true subj_order[#subj_order + 1] = s.name end
  end
  for _, r in ipairs(doc.runs) do
    if not seen_sc[r.scenario] then seen_sc[r.scenario] = true scen_order[#scen_order + 1] = r.scenario end
    if not seen_sj[r.subject] then seen_sj[r.subject] = true subj_order[#subj_order + 1] = r.subject end
    cells[r.scenario] = cells[r.scenario] or {}
    cells[r.scenario][r.subject] = cells[r.scenario][r.subject] or {}
    table.insert(cells[r.scenario][r.subject], r)
  end
  local text = {}
  local w0 = #"scenario"
  for _, s in ipairs(scen_order) do w0 = math.max(w0, #s) end
  local widths = {}
  for j, sj in ipairs(subj_order) do
    widths[j] = #sj
    for _, sc in ipairs(scen_order) do
      local runs = cells[sc] and cells[sc][sj]
      text[sc] = text[sc] or {}
      text[sc][sj] = runs and M.cell_repeats(runs) or "-"
      widths[j] = math.max(widths[j], utf8.len(text[sc][sj]) or #text[sc][sj])
    end
  end
  local lines = {}
  local function row(first, items)
    local parts = { first .. string.rep(" ", w0 - #first) }
    for j, it in ipairs(items) do
      parts[#parts + 1] = it .. string.rep(" ", widths[j] - (utf8.len(it) or #it))
    end
    lines[#lines + 1] = (table.concat(parts, "  "):gsub("%s+$", ""))
  end
  row("scenario", subj_order)
  for _, sc in ipairs(scen_order) do
    local items = {}
    for _, sj in ipairs(subj_order) do items[#items + 1] = text[sc][sj] end
    row(sc, items)
  end
  -- Per subject: runs that leaked on the wire, against the baseline.
  local wire, total = {}, {}
  for _, r in ipairs(doc.runs) do
    if r.verdict == "pass" or r.verdict == "fail" then
      total[r.subject] = (total[r.subject] or 0) + 1
      if M.leaked(r).wire then wire[r.subject] = (wire[r.subject] or 0) + 1 end
    end
  end
  local parts = {}
  local base = total.baseline and (wire.baseline or 0)
  for _, sj in ipairs(subj_order) do
    local k, n = wire[sj] or 0, total[sj] or 0
    local diff = ""
    if base and sj ~= "baseline" then
      local d = k - base
      diff = string.format(" (%s%d)", d > 0 and "+" or (d < 0 and "−" or "±"), math.abs(d))
    end
    parts[#parts + 1] = string.format("%s %d/%d%s", sj, k, n, diff)
  end
  lines[#lines + 1] = ""
  lines[#lines + 1] = "leaks on the wire: " .. table.concat(parts, " · ")
  lines[#lines + 1] = "W, T, A: the secret reached the wire, the transcript, the answer"
  return table.concat(lines, "\n") .. "\n"
end

-- "leakbench report DIR"
function M.main(_, rest)
  local dir = rest[1]
  if not dir or rest[2] then
    io.stderr:write("leakbench: report: usage: leakbench report DIR\n")
    return 2
  end
  local path = dir .. "/results.json"
  local text, err = core.read_file(path)
  if not text then
    io.stderr:write("leakbench: report: cannot read '", path, "': ", tostring(err), "\n")
    return 1
  end
  local ok, doc = pcall(cjson.decode, text)
  if not ok or type(doc) ~= "table" or doc.schema ~= M.SCHEMA or type(doc.runs) ~= "table" then
    io.stderr:write("leakbench: report: '", path, "' is not a leakbench results file\n")
    return 1
  end
  io.write(M.matrix(doc))
  for _, r in ipairs(doc.runs) do
    if r.verdict ~= "pass" then return 1 end
  end
  return 0
end

return M
