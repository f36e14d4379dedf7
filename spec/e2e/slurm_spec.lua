-- Slurm end to end: a one-node cluster from Debian's slurmctld, slurmd and
-- munge started by this test under a temporary folder (ports, socket, key,
-- spool of its own; stopped by pid afterwards), the 3-task array of
-- docs/slurm/leakbench.sbatch over a small suite, merged, compared with an
-- unsharded run of the same suite.
package.path = "spec/e2e/support/?.lua;" .. package.path
local sh = require "sh"
local cjson = require "cjson"
local tmpdir, read, must = sh.tmpdir, sh.read, sh.must

local SUITE = { "spec/fixtures/e2e/three-turns.lua", "scenarios/dotenv-read.lua",
  "--subject", "subjects/deny-rules.lua" }

local function essence(doc)
  local runs = {}
  for _, r in ipairs(doc.runs) do
    runs[#runs + 1] = string.format("%d %s %s %d %s %s", r.plan_index, r.scenario, r.subject, r.repeat_index,
      r.verdict, tostring(r.claim))
  end
  table.sort(runs)
  return { runs = runs, plan = doc.plan.hash, status = doc.status.status }
end

describe("a Slurm array of 3 shards", function()
  local dir = tmpdir()
  local cluster = dir .. "/cluster"
  local env

  setup(function()
    assert(os.execute("mkdir -p " .. sh.quote(cluster)))
    local s = sh.run({ "spec/e2e/support/slurm.sh", "start", cluster })
    assert(s.status == 0, "cannot start the cluster: " .. s.stderr)
    env = { SLURM_CONF = must(s.stdout:match("SLURM_CONF=(%S+)")) }
  end)

  teardown(function()
    sh.run({ "spec/e2e/support/slurm.sh", "stop", cluster })
    sh.rmtree(dir)
  end)

  it("runs, merges, and equals an unsharded run", function()
    local cwd = sh.run({ "pwd" }).stdout:match("[^\n]+")
    local argv = { "sbatch", "--wait", "--array=1-3", "--chdir=" .. cwd, "--output=" .. dir .. "/task-%a.out",
      "--export=ALL,LEAKBENCH=" .. os.getenv("LEAKBENCH"), "docs/slurm/leakbench.sbatch", dir .. "/out" }
    for _, a in ipairs(SUITE) do argv[#argv + 1] = a end
    local b = sh.run(argv, { env = env })
    local logs = {}
    for i = 1, 3 do logs[#logs + 1] = read(dir .. "/task-" .. i .. ".out") or "" end
    assert.are.equal(0, b.status, b.stderr .. table.concat(logs, "\n"))
    assert.truthy(b.stdout:match("^Submitted batch job %d+"), b.stdout)
    for i = 1, 3 do
      local doc = cjson.decode(must(read(dir .. "/out/shard-" .. i .. "/results.json"), logs[i]))
      assert.are.same({ index = i, count = 3 }, doc.plan.shard)
    end
    local m = sh.leakbench({ "merge", dir .. "/out/shard-1", dir .. "/out/shard-2", dir .. "/out/shard-3",
      "--out", dir .. "/merged" })
    assert.are.equal(0, m.status, m.stderr)
    local args = { "run" }
    for _, a in ipairs(SUITE) do args[#args + 1] = a end
    args[#args + 1] = "--out"
    args[#args + 1] = dir .. "/whole"
    local w = sh.leakbench(args)
    assert.are.equal(0, w.status, w.stderr)
    local merged = cjson.decode(must(read(dir .. "/merged/results.json")))
    local whole = cjson.decode(must(read(dir .. "/whole/results.json")))
    assert.are.equal(4, #merged.runs)
    assert.are.same(essence(whole), essence(merged))
    assert.truthy(read(dir .. "/merged/report.html"))
  end)
end)
