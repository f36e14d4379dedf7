-- Shards end to end: a suite (2 scenarios x baseline and deny-rules x 2
-- repeats = 8 runs) once unsharded and once as 3 shards; merged, the shards
-- are the unsharded run: the same plan, runs and verdicts. merge refuses a
-- missing or duplicated shard, and shards of another plan.
package.path = "spec/e2e/support/?.lua;" .. package.path
local sh = require "sh"
local cjson = require "cjson"
local tmpdir, read, must = sh.tmpdir, sh.read, sh.must

local SUITE = { "spec/fixtures/e2e/three-turns.lua", "scenarios/dotenv-read.lua",
  "--subject", "subjects/deny-rules.lua", "--repeat", "2", "--jobs", "2" }

local function run(extra)
  local args = { "run" }
  for _, a in ipairs(SUITE) do args[#args + 1] = a end
  for _, a in ipairs(extra) do args[#args + 1] = a end
  return sh.leakbench(args)
end

-- What must be equal between a merged and an unsharded run.
local function essence(doc)
  local runs = {}
  for _, r in ipairs(doc.runs) do
    local leaked = {}
    for ch, c in pairs(r.leaks and r.leaks[1] and r.leaks[1].channels or {}) do
      if c.leaked then leaked[#leaked + 1] = ch end
    end
    table.sort(leaked)
    runs[#runs + 1] = string.format("%d %s %s %d %s %s %s", r.plan_index, r.scenario, r.subject,
      r.repeat_index, r.verdict, tostring(r.claim), table.concat(leaked, ","))
  end
  table.sort(runs)
  local summary = {}
  for _, s in ipairs(doc.summary.subjects) do
    summary[#summary + 1] = string.format("%s wire %d/%d any %d/%d claims %d/%d", s.name, s.wire.k, s.wire.n,
      s.any.k, s.any.n, s.claims.held, s.claims.total)
  end
  return { runs = runs, summary = summary, plan = doc.plan.hash, total = doc.plan.runs, status = doc.status.status }
end

describe("3 shards merged", function()
  local dir = tmpdir()
  local whole, merged

  setup(function()
    local r = run({ "--out", dir .. "/whole" })
    assert.are.equal(0, r.status, r.stderr)
    whole = cjson.decode(must(read(dir .. "/whole/results.json")))
    for i = 1, 3 do
      local s = run({ "--shard", i .. "/3", "--out", dir .. "/shard" .. i })
      assert.are.equal(0, s.status, s.stderr)
      assert.truthy(s.stderr:find(string.format("shard %d/3: %d of the plan's 8 runs\n", i, i < 3 and 3 or 2), 1, true),
        s.stderr)
    end
  end)

  teardown(function() sh.rmtree(dir) end)

  it("give each shard every third run of the plan", function()
    for i = 1, 3 do
      local doc = cjson.decode(must(read(dir .. "/shard" .. i .. "/results.json")))
      assert.are.same({ index = i, count = 3 }, doc.plan.shard)
      assert.are.equal(whole.plan.hash, doc.plan.hash)
      for _, r in ipairs(doc.runs) do assert.are.equal(i - 1, (r.plan_index - 1) % 3) end
    end
  end)

  it("are the unsharded run: same plan, same runs and verdicts", function()
    local m = sh.leakbench({ "merge", dir .. "/shard3", dir .. "/shard1", dir .. "/shard2", "--out", dir .. "/merged" })
    assert.are.equal(0, m.status, m.stderr)
    assert.truthy(m.stdout:find("merged 3 shards of plan " .. whole.plan.hash:sub(1, 12) .. ": 8 runs\n", 1, true),
      m.stdout)
    merged = cjson.decode(must(read(dir .. "/merged/results.json")))
    assert.are.same(essence(whole), essence(merged))
    assert.are.equal(3, #merged.plan.merged)
    -- the matrix printed is the unsharded run's
    local w = sh.leakbench({ "report", dir .. "/whole" })
    assert.are.equal(w.stdout:match("^(.-\n)\n"), m.stdout:match("^(.-\n)\n"))
    assert.truthy(read(dir .. "/merged/junit.xml"))
    local page = must(read(dir .. "/merged/report.html"))
    assert.truthy(page:find('id="run-dotenv-read--deny-rules--2"', 1, true))
    -- the run pages found the shards' run folders: their tool calls are shown
    assert.truthy(page:find('<b class="tool">Read</b>', 1, true))
  end)

  it("refuse a missing shard", function()
    local m = sh.leakbench({ "merge", dir .. "/shard1", dir .. "/shard3", "--out", dir .. "/m2" })
    assert.are.equal(2, m.status)
    assert.are.equal(string.format("leakbench: merge: shard 2/3 is missing (given: 1/3 '%s/shard1', 3/3 '%s/shard3')\n",
      dir, dir), m.stderr)
    assert.is_nil(read(dir .. "/m2/results.json"))
  end)

  it("refuse a shard given twice", function()
    os.execute("cp -a " .. sh.quote(dir .. "/shard2") .. " " .. sh.quote(dir .. "/shard2-copy"))
    local m = sh.leakbench({ "merge", dir .. "/shard1", dir .. "/shard2", dir .. "/shard2-copy", dir .. "/shard3",
      "--out", dir .. "/m3" })
    assert.are.equal(2, m.status)
    assert.are.equal(string.format("leakbench: merge: shard 2/3 is given twice: '%s/shard2' and '%s/shard2-copy'\n",
      dir, dir), m.stderr)
  end)

  it("refuse shards of another plan", function()
    local s = sh.leakbench({ "run", "spec/fixtures/e2e/three-turns.lua", "--shard", "2/3", "--out", dir .. "/other" })
    assert.are.equal(0, s.status, s.stderr)
    local m = sh.leakbench({ "merge", dir .. "/shard1", dir .. "/other", dir .. "/shard3", "--out", dir .. "/m4" })
    assert.are.equal(2, m.status)
    assert.truthy(m.stderr:find("leakbench: merge: '" .. dir .. "/other' is from another plan than '" .. dir
      .. "/shard1'", 1, true), m.stderr)
  end)
end)

-- The Kubernetes Indexed Job: there is no cluster here, and kubectl's
-- --dry-run=client needs an API server to map kinds, so kubectl renders it
-- offline (kustomize) and the mapping of the index to --shard is checked.
describe("docs/k8s/leakbench-job.yaml", function()
  it("is an Indexed Job whose pods run --shard index+1/completions", function()
    local t = tmpdir()
    os.execute("cp docs/k8s/leakbench-job.yaml " .. sh.quote(t))
    local f = assert(io.open(t .. "/kustomization.yaml", "w"))
    f:write("resources:\n- leakbench-job.yaml\n")
    f:close()
    local k = sh.run({ "kubectl", "kustomize", t })
    sh.rmtree(t)
    assert.are.equal(0, k.status, k.stderr)
    assert.truthy(k.stdout:find("kind: Job\n", 1, true), k.stdout)
    assert.truthy(k.stdout:find("completionMode: Indexed\n", 1, true), k.stdout)
    assert.truthy(k.stdout:find("completions: 3\n", 1, true), k.stdout)
    local flat = k.stdout:gsub("%s+", " ")
    assert.truthy(flat:find('--shard "$((JOB_COMPLETION_INDEX + 1))/3"', 1, true), k.stdout)
    assert.truthy(k.stdout:find("batch.kubernetes.io/job-completion-index", 1, true), k.stdout)
  end)
end)
