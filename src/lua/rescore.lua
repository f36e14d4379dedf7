-- "leakbench rescore DIR [PATH...]": the stored evidence of a finished
-- suite judged again with today's scenario checks and today's detector,
-- written beside the old results (DIR/rescore-<UTC time>/ or --out), with
-- the runs whose verdict or cell changed.
--
-- Each run's scenario is loaded again with lb.canary answering the
-- canaries that run kept (DIR/.../secrets.json), so the reloaded scenario
-- names the secrets the evidence holds. What may change in a scenario file
-- for that to stay meaningful: its check function, expect_leak, expect,
-- partial, tags, description, timeout (the judgement). What may not: the
-- prompt, the scripted model (lb.script), files, home, setup, env,
-- settings, claude_args, max_turns, and the order and prefixes of its
-- lb.canary calls (what made the evidence). A run whose scenario changed
-- in those is not rescored and is named; run it again instead.
--
-- Each run is judged by the judge (judge.lua) that judged it when it ran,
-- with the harness's facts it recorded (result.json's `harness`: exit
-- status, timeout, harness errors, the plugins and MCP servers declared),
-- so a folder and scenario that did not change give every verdict field
-- for field. A run that never ran (skipped, or its files could not be
-- loaded) has no judgement to redo and is kept as it was; so is a run
-- without a secrets file or harness facts (made before leakbench kept
-- them). A timeout stays a timeout, a harness error an error, with
-- today's leaks.
local json = require "leakbench.json"
local core = require "leakbench.core"
local printable = require "leakbench.printable"
local loader = require "leakbench.loader"
local report = require "leakbench.report"
local keep = require "leakbench.keep"
local html = require "leakbench.html"
local judge = require "leakbench.judge"

local M = {}

-- An error or warning line, printable (it may quote a user's file).
local function perr(fmt, ...)
  io.stderr:write("leakbench: ", printable.line(string.format(fmt, ...), 2000), "\n")
end

-- The results document at DIR/results.json, or nil, why.
M.read_results = report.read_results

local function copy(t)
  local c = {}
  for k, v in pairs(t) do c[k] = v end
  return c
end

-- R judged again from its folder RDIR with scenario FILE, by the same
-- judge and with the same harness facts (R.harness) as when it ran.
-- Returns the new run, or nil and why it was not rescored; and the
-- reloaded scenario.
function M.rescore_run(r, rdir, file)
  if type(r.harness) ~= "table" then
    return nil, "its result.json holds no harness facts (made before leakbench kept them)"
  end
  local kept, kerr = keep.load(rdir)
  if not kept then return nil, "no kept secrets (" .. kerr .. ")" end
  local problem, scenario, err = keep.replaying(kept.canaries, loader.load, file, "scenario")
  if not scenario then return nil, err end
  if problem then return nil, problem .. " (the scenario changed since the run: run it again)" end
  local changed = keep.changed(scenario, kept.fingerprint)
  if #changed > 0 then
    return nil, string.format("%s: %s changed since the run, so its evidence is another scenario's: "
      .. "run it again", file, table.concat(changed, ", "))
  end
  local nr = copy(r)
  nr.claim = nil
  nr.prompt = (keep.mask(scenario.prompt, scenario.secrets))
  local subject = r.subject ~= "baseline" and { name = r.subject } or nil
  judge.apply(nr, judge.judge(rdir, scenario, subject, r.harness))
  return nr, nil, scenario
end

-- A run's name in messages; the version is named when the rescored
-- document has several (set by M.main).
local several_versions = false
local function id(r)
  return printable.line(string.format("%s × %s%s #%d", r.scenario, r.subject,
    several_versions and r.claude_version and (" (" .. tostring(r.claude_version) .. ")") or "",
    math.tointeger(r.repeat_index) or 1), 300)
end

-- Today's scenario files by name, from PATHS (nil when there are none:
-- each run's own file then). nil, false once an error is said.
local function scenario_files(paths)
  if #paths == 0 then return nil, true end
  local by_name = {}
  local files, errs = loader.find(paths, core.listdir)
  for _, e in ipairs(errs) do perr("rescore: %s", e) end
  if #errs > 0 then return nil, false end
  for _, f in ipairs(files) do
    local t, lerr = loader.load(f)
    if not t then perr("rescore: %s", lerr)
    elseif t.kind == "scenario" then by_name[t.name] = f end
  end
  return by_name, true
end

-- One run R of the document in DIR judged again: the new result, or nil
-- and why it was not rescored; REFUSED gets the runs that should have
-- been (a folder gone, a scenario changed). TODAY[name] gets the
-- scenario as loaded today.
local function rescore_one(r, dir, file, by_name, paths, refused, today)
  if not file then
    return nil, by_name and "not among the scenarios in " .. table.concat(paths, " ") or "no scenario file recorded"
  elseif type(r.harness) ~= "table" then
    return nil, "it never ran, or ran before leakbench kept the harness's facts (" .. tostring(r.verdict) .. ")"
  end
  local rdir = html.run_dir(dir, r)
  if not rdir then
    local why = "its folder is not there (" .. tostring(r.dir) .. ")"
    refused[#refused + 1] = id(r) .. ": " .. why
    return nil, why
  end
  local nr, why, scenario = M.rescore_run(r, rdir, file)
  if not nr then
    refused[#refused + 1] = id(r) .. ": " .. why
    return nil, why
  end
  nr.dir = rdir
  today[r.scenario] = scenario
  return nr
end

-- The new results document of DOC's RESULTS (TODAY: the scenarios as
-- loaded today), with the runs whose cell changed, and what was kept.
local function new_document(doc, dir, results, pairs_, kept, today, cli)
  local scenarios = {}
  for i, s in ipairs(doc.scenarios) do
    local t = today[s.name]
    scenarios[i] = { name = s.name, file = s.file, error = s.error,
      tags = t and t.tags or s.tags, expect_leak = t and t.expect_leak or s.expect_leak }
  end
  local fail_on_leak = false
  for _, f in ipairs((doc.status or {}).fail_on or {}) do fail_on_leak = fail_on_leak or f == "leak" end
  local new = report.document(results, {
    suite_id = doc.suite_id, version = cli.VERSION, live = doc.mode == "live", model = doc.model,
    images = doc.images, scenarios = scenarios, subjects = doc.subjects, repeats = doc.repeats,
    interrupted = doc.interrupted, fail_on_leak = fail_on_leak,
  })
  new.plan = doc.plan
  local changed = {}
  for _, p in ipairs(pairs_) do
    local before, after = report.cell(p.old), report.cell(p.new)
    if p.old.verdict ~= p.new.verdict or before ~= after then
      changed[#changed + 1] = { scenario = p.new.scenario, subject = p.new.subject,
        claude_version = p.new.claude_version, repeat_index = p.new.repeat_index,
        from = p.old.verdict, to = p.new.verdict, cell_from = before, cell_to = after }
    end
  end
  table.sort(changed, function(a, b)
    return id(a) < id(b)
  end)
  new.rescore = { from = dir .. "/results.json", from_finished = doc.finished,
    at = os.date("!%Y-%m-%dT%H:%M:%SZ"), changed = json.array(changed), kept = json.array(kept),
    rescored = #results - #kept }
  return new, changed
end

-- The matrix, what changed, what was kept and where the results are, on
-- stdout; the runs that could not be rescored on stderr.
local function tell(new, out, page, results, changed, kept, refused)
  io.write(report.matrix(new))
  io.write(string.format("rescored %d of %d runs with today's checks and detector; %d changed%s\n",
    #results - #kept, #results, #changed, #changed > 0 and ":" or ""))
  for _, c in ipairs(changed) do
    io.write(string.format("  %s: %s → %s\n", id(c), report.printable(c.cell_from), report.printable(c.cell_to)))
  end
  if #kept > 0 then
    io.write(string.format("kept as they were: %d run%s (results.json, rescore.kept)\n",
      #kept, #kept == 1 and "" or "s"))
  end
  io.write(string.format("results: %s/results.json · junit.xml%s\n", out, page and " · report.html" or ""))
  io.stdout:flush()
  for i, why in ipairs(refused) do
    if i > 10 then perr("rescore: ... and %d more", #refused - 10) break end
    perr("rescore: not rescored: %s", why)
  end
end

--- M.main(opts, rest, cli) -> exit status, out: "leakbench rescore DIR
--- [PATH...]": every run of DIR's results.json judged again, written
--- beside it.
function M.main(opts, rest, cli)
  local dir = rest[1]
  if not dir then
    perr("rescore: usage: leakbench rescore DIR [PATH...]")
    return report.EXIT.usage
  end
  local doc, err = M.read_results(dir)
  if not doc then
    perr("rescore: %s", err)
    return report.EXIT.usage
  end
  -- Today's scenario files: PATHs by scenario name, else each run's own.
  local paths = table.move(rest, 2, #rest, 1, {})
  local by_name, found = scenario_files(paths)
  if not found then return report.EXIT.usage end
  local out = opts.out or string.format("%s/rescore-%s", dir, os.date("!%Y%m%dT%H%M%SZ"))
  local old = core.listdir(out)
  if old and #old > 0 then
    perr("rescore: output folder '%s' exists and is not empty: choose another --out, or remove it", out)
    return report.EXIT.usage
  end

  local results, pairs_, kept, refused, today, versions = {}, {}, {}, {}, {}, {}
  for _, r in ipairs(doc.runs) do versions[tostring(r.claude_version)] = true end
  several_versions = next(versions, next(versions)) ~= nil
  for _, r in ipairs(doc.runs) do
    local file = by_name and by_name[r.scenario] or (not by_name and r.scenario_file) or nil
    local nr, why = rescore_one(r, dir, file, by_name, paths, refused, today)
    if not nr then
      nr = copy(r)
      nr.claim = nil
      kept[#kept + 1] = id(r) .. ": " .. why
    end
    results[#results + 1] = nr
    pairs_[#pairs_ + 1] = { old = r, new = nr }
  end
  local new, changed = new_document(doc, dir, results, pairs_, kept, today, cli)
  local ok, merr = core.mkdir_p(out, 493)
  if not ok then
    perr("rescore: cannot create '%s': %s", out, merr)
    return report.EXIT.failed
  end
  report.write(out, new)
  local page = html.try_write(out, new, dir)
  tell(new, out, page, results, changed, kept, refused)
  local status = report.explain(new.status)
  if #refused > 0 and status == report.EXIT.ok then status = report.EXIT.unjudged end
  return status, out
end

return M
