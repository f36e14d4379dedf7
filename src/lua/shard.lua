-- Shards of a suite: "leakbench run --shard I/N" and "leakbench merge".
--
-- The plan is every run of the suite (scenario x subject x version x
-- repeat) in the runner's order, which is stable: scenario files sorted as
-- loader.find gives them, subjects as given, repeats counting up. Its hash
-- covers what makes the runs: each run's scenario and subject by name and
-- file content (not path: shards run on other machines), version and
-- repeat, and the model, mode and timeout. Shard I (1-based) of N gets
-- the runs whose place p in the plan has (p - 1) % N == I - 1, so the
-- shards of one plan share nothing and together hold all of it. Every
-- results.json records { hash, runs, shard = { index, count } } as
-- doc.plan and each run its plan_index.
--
-- merge checks that the shards are one plan: the same hash and count, no
-- index missing and none twice, and every place of the plan held once;
-- then it writes one results.json, junit.xml and report.html, the same as
-- an unsharded run of that plan would (the run folders stay where the
-- shards put them; results.json names them).
local core = require "leakbench.core"
local printable = require "leakbench.printable"
local report = require "leakbench.report"
local html = require "leakbench.html"
local json = require "leakbench.json"

local M = {}

M.SCHEMA = "leakbench.plan/1"

-- An error or warning line, printable (it may quote a user's file).
local function perr(fmt, ...)
  io.stderr:write("leakbench: ", printable.line(string.format(fmt, ...), 2000), "\n")
end

-- "I/N" -> I, N; or nil, why.
function M.parse(s)
  local i, n = tostring(s):match("^(%d+)/(%d+)$")
  i, n = math.tointeger(tonumber(i)), math.tointeger(tonumber(n))
  if not i or n < 1 or i < 1 or i > n then
    return nil, string.format("option '--shard' takes I/N with 1 <= I <= N (shard I of N), got '%s'", tostring(s))
  end
  return i, n
end

local function file_hash(f)
  if not f then return "-" end
  return core.sha256_file(f) or ("unreadable:" .. f)
end

-- The version a job runs: whatever field the runner names it by.
local function version_of(job)
  local v = job.claude_version or job.version
  if type(v) == "table" then v = v.version or v.name end
  return v and tostring(v) or "-"
end

-- The plan of QUEUE (the runner's jobs, in order) under CTX (model, live,
-- timeout): sets job.plan_index, returns { hash =, runs =, shard = }.
function M.plan(queue, ctx, shard)
  local parts = { M.SCHEMA, "mode", ctx.live and "live" or "scripted", "model", tostring(ctx.model),
    "timeout", tostring(ctx.timeout) }
  local files = {}
  local function fh(f)
    if f and not files[f] then files[f] = file_hash(f) end
    return f and files[f] or "-"
  end
  for i, job in ipairs(queue) do
    job.plan_index = i
    parts[#parts + 1] = table.concat({ job.scenario.name, fh(job.scenario.file), job.subject.name,
      fh(job.subject.file), version_of(job), tostring(job.repeat_index) }, "\1")
  end
  return { hash = core.sha256(table.concat(parts, "\0")), runs = #queue,
    shard = shard and { index = shard.index, count = shard.count } or nil }
end

-- The jobs of QUEUE in shard I of N, in order.
function M.select(queue, i, n)
  local out = {}
  for _, job in ipairs(queue) do
    if (job.plan_index - 1) % n == i - 1 then out[#out + 1] = job end
  end
  return out
end

local function shard_of(doc)
  local s = doc.plan and doc.plan.shard
  if type(s) == "table" then return math.tointeger(s.index), math.tointeger(s.count) end
  return 1, 1
end

-- Checks that DOCS (each { dir =, doc = }) are the shards of one plan.
-- Returns true or nil, why.
function M.check(docs)
  local first
  for _, d in ipairs(docs) do
    local p = d.doc.plan
    if type(p) ~= "table" or type(p.hash) ~= "string" then
      return nil, string.format("'%s' has no plan (its results.json was not written by 'leakbench run' "
        .. "of this version)", d.dir)
    end
    if not first then first = d
    elseif p.hash ~= first.doc.plan.hash then
      return nil, string.format("'%s' is from another plan than '%s' (plan %s, not %s): shards must run the "
        .. "same scenario and subject files with the same options", d.dir, first.dir, p.hash:sub(1, 12),
        first.doc.plan.hash:sub(1, 12))
    end
  end
  local _, n = shard_of(first.doc)
  local by = {}
  for _, d in ipairs(docs) do
    local i, c = shard_of(d.doc)
    if c ~= n then
      return nil, string.format("'%s' is shard %d/%d, '%s' shard %d/%d: not the same split", d.dir, i, c,
        first.dir, shard_of(first.doc))
    end
    if by[i] then
      return nil, string.format("shard %d/%d is given twice: '%s' and '%s'", i, n, by[i], d.dir)
    end
    by[i] = d.dir
  end
  local missing, have = {}, {}
  for i = 1, n do
    if by[i] then have[#have + 1] = string.format("%d/%d '%s'", i, n, by[i])
    else missing[#missing + 1] = string.format("%d/%d", i, n) end
  end
  if #missing > 0 then
    return nil, string.format("shard%s %s %s missing (given: %s)", #missing == 1 and "" or "s",
      table.concat(missing, ", "), #missing == 1 and "is" or "are", table.concat(have, ", "))
  end
  local seen, count = {}, 0
  for _, d in ipairs(docs) do
    for _, r in ipairs(d.doc.runs) do
      local k = math.tointeger(r.plan_index)
      if not k then
        return nil, string.format("'%s': run %s × %s #%d has no plan_index", d.dir, tostring(r.scenario),
          tostring(r.subject), math.tointeger(r.repeat_index) or 1)
      end
      if seen[k] then
        return nil, string.format("run %d of the plan is in both '%s' and '%s'", k, seen[k], d.dir)
      end
      seen[k] = d.dir
      count = count + 1
    end
  end
  local total = math.tointeger(first.doc.plan.runs) or count
  if count ~= total then
    for k = 1, total do
      if not seen[k] then
        return nil, string.format("the shards hold %d of the plan's %d runs (run %d is in none)", count, total, k)
      end
    end
  end
  return true
end

-- "leakbench merge DIR... --out DIR"
function M.merge(opts, rest, cli)
  if not opts.out or #rest == 0 then
    perr("merge: usage: leakbench merge DIR... --out DIR")
    return report.EXIT.usage
  end
  local docs = {}
  for _, dir in ipairs(rest) do
    local doc, err = report.read_results(dir)
    if not doc then
      perr("merge: %s", err)
      return report.EXIT.usage
    end
    docs[#docs + 1] = { dir = dir, doc = doc }
  end
  local ok, why = M.check(docs)
  if not ok then
    perr("merge: %s", why)
    return report.EXIT.usage
  end
  local old = core.listdir(opts.out)
  if old and #old > 0 then
    perr("merge: output folder '%s' exists and is not empty: choose another --out, or remove it", opts.out)
    return report.EXIT.usage
  end
  local first = docs[1].doc
  local runs, merged, interrupted, fail_on_leak = {}, {}, false, false
  for _, d in ipairs(docs) do
    local i, n = shard_of(d.doc)
    merged[#merged + 1] = { dir = d.dir, suite_id = d.doc.suite_id, index = i, count = n, runs = #d.doc.runs }
    interrupted = interrupted or d.doc.interrupted == true
    for _, f in ipairs((d.doc.status or {}).fail_on or {}) do fail_on_leak = fail_on_leak or f == "leak" end
    local ci, cf = (d.doc.images or {}).claude, (first.images or {}).claude
    if ci ~= cf then
      perr("merge: warning: '%s' ran image %s, '%s' ran %s", d.dir, tostring(ci), docs[1].dir, tostring(cf))
    end
    for _, r in ipairs(d.doc.runs) do
      local rdir = html.run_dir(d.dir, r)
      r.dir = rdir and (core.realpath(rdir) or rdir) or r.dir
      runs[#runs + 1] = r
    end
  end
  table.sort(merged, function(a, b) return a.index < b.index end)
  local doc = report.document(runs, {
    suite_id = core.uuid(), version = cli.VERSION, live = first.mode == "live", model = first.model,
    images = first.images, scenarios = first.scenarios, subjects = first.subjects, repeats = first.repeats,
    interrupted = interrupted, fail_on_leak = fail_on_leak,
  })
  doc.plan = { hash = first.plan.hash, runs = first.plan.runs,
    merged = json.array(merged) }
  local mok, merr = core.mkdir_p(opts.out, 493)
  if not mok then
    perr("merge: cannot create '%s': %s", opts.out, merr)
    return report.EXIT.failed
  end
  report.write(opts.out, doc)
  local page = html.try_write(opts.out, doc)
  io.write(report.matrix(doc))
  io.write(string.format("merged %d shard%s of plan %s: %d runs\n", #docs, #docs == 1 and "" or "s",
    first.plan.hash:sub(1, 12), #runs))
  io.write(string.format("results: %s/results.json · junit.xml%s\n", opts.out, page and " · report.html" or ""))
  io.stdout:flush()
  return report.explain(doc.status)
end

return M
