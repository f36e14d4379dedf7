-- Hostile scenario files through `leakbench run` itself (the loader's
-- specs cover `list`): each becomes an error run with its exact message and
-- file:line, nothing is written outside the run folder, an endless loop
-- neither hangs the planning nor the run, and the good scenario beside them
-- still runs and passes.
package.path = "spec/e2e/support/?.lua;" .. package.path
local sh = require "sh"
local cjson = require "cjson"
local tmpdir, read, must = sh.tmpdir, sh.read, sh.must

local DIR = "spec/fixtures/hostile"

describe("leakbench run of hostile scenario files", function()
  local out = tmpdir()
  local r, doc, t0, took
  local by = {}

  setup(function()
    os.execute("rm -rf /tmp/x/PWNED")
    t0 = os.time()
    r = sh.leakbench({ "run", DIR .. "/patch-string.lua", DIR .. "/read-shadow.lua", DIR .. "/getenv.lua",
      DIR .. "/loop.lua", "spec/fixtures/e2e/check-loop.lua", "spec/fixtures/e2e/three-turns.lua", "--out", out })
    took = os.time() - t0
    doc = cjson.decode(must(read(out .. "/results.json"), "no results.json: " .. r.stderr))
    for _, run in ipairs(doc.runs) do by[run.scenario] = run end
  end)

  teardown(function() os.execute("rm -rf " .. sh.quote(out)) end)

  it("makes each broken file an error with its file:line, and runs the good one", function()
    assert.are.equal("error", by["patch-string"].verdict)
    assert.are.equal(DIR .. "/patch-string.lua:11: field 'files': path '../../../../tmp/x/PWNED' "
      .. "must be relative and stay inside", by["patch-string"].reason)
    assert.are.equal(DIR .. "/read-shadow.lua:2: cannot read file '/etc/shadow': outside the file's "
      .. "directory '" .. DIR .. "'", by["read-shadow"].reason)
    assert.are.equal(DIR .. "/getenv.lua:1: attempt to call a nil value (field 'getenv')", by.getenv.reason)
    assert.are.equal(DIR .. "/loop.lua:2: loading ran more than 100000000 instructions (instruction budget)",
      by.loop.reason)
    assert.are.equal("pass", by["three-turns"].verdict, tostring(by["three-turns"].reason))
    assert.are.equal(3, r.status, r.stderr)
  end)

  it("writes nothing outside the run folder", function()
    assert.is_nil(io.open("/tmp/x/PWNED", "rb"))
  end)

  it("bounds an endless loop at load and in check", function()
    local c = must(by["check-loop"], "no check-loop run")
    assert.are.equal("error", c.verdict)
    assert.truthy(c.reason:find("check%-loop%.lua:%d+: check ran more than %d+ instructions")
      or c.reason:find("check%-loop%.lua:%d+: check took more than"), c.reason)
    assert.truthy(took < 240, "took " .. took .. " s")
  end)
end)
