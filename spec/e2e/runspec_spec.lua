-- A run's options travel once, as its folder's runspec.json, end to end:
-- the runner writes it (the options with their defaults applied), exec-run
-- reads it before any container of the run exists, and the agent can see
-- it nowhere: the run folder is never mounted whole, only its project,
-- config and socket directories are.
package.path = "spec/e2e/support/?.lua;" .. package.path
local sh = require "sh"
local cjson = require "cjson"
local tmpdir, read, must = sh.tmpdir, sh.read, sh.must

local tool_results = require("results").tool_results

describe("a run's runspec.json", function()
  local out = tmpdir()
  local r, run

  setup(function()
    r = sh.leakbench({ "run", "spec/fixtures/e2e/runspec-probe.lua", "--out", out, "--timeout", "90" })
    run = cjson.decode(must(read(out .. "/results.json"), r.stderr)).runs[1]
  end)
  teardown(function() sh.rmtree(out) end)

  it("holds the run's options once, with the defaults applied", function()
    local spec = cjson.decode(must(read(run.dir .. "/runspec.json"), "no runspec.json"))
    assert.are.equal(run.run_id, spec.run_id)
    assert.are.equal(90, spec.timeout)
    assert.are.equal("string", type(spec.model))
    assert.are.equal(run.dir, spec.dir)
    assert.truthy(spec.scenario:find("runspec%-probe%.lua$"), spec.scenario)
  end)

  it("is nowhere the agent can see", function()
    assert.are.equal("pass", run.verdict, tostring(run.reason) .. "\n" .. r.stderr)
    local results = tool_results(run.dir)
    assert.are.equal(1, #results, r.stderr)
    assert.are.equal("0\nprobed\n", results[1]:gsub("^%s+", ""):gsub("[^\n]$", "%0\n"))
  end)
end)
