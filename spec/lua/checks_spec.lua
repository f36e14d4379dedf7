-- Every expectation of a check, passed or failed, for the run's page:
-- loader.check collects each lb.expect (file:line, message, whether it
-- held), bounded however often a hostile check calls it, and result.json
-- keeps them (explain.checks) with the secrets masked.
local loader = require "leakbench.loader"
local explain = require "leakbench.explain"
local lb = require "leakbench"
local core = require "leakbench.core"

describe("loader.check", function()
  it("returns every lb.expect in order, passed and failed, with its line", function()
    local verdict, _, failed, checks = loader.check({ file = "x.lua", check = function()
      lb.expect(true, "the agent read .env")
      lb.expect(1, "a truthy value holds")
      lb.expect(false, "the answer names the port")
    end }, {})
    assert.are.equal("fail", verdict)
    assert.are.equal(1, #failed)
    assert.are.equal(3, #checks)
    assert.are.same({ true, true, false }, { checks[1].ok, checks[2].ok, checks[3].ok })
    assert.are.equal("the answer names the port", checks[3].message)
    assert.truthy(checks[1].where:match("checks_spec%.lua:%d+$"), checks[1].where)
  end)

  it("keeps at most MAX_CHECKS of a check that calls lb.expect without end, and counts the rest", function()
    local verdict, _, _, checks = loader.check({ file = "x.lua", check = function()
      for _ = 1, 100000 do lb.expect(true, "again") end
    end }, {})
    assert.are.equal("pass", verdict)
    assert.are.equal(loader.MAX_CHECKS, #checks)
    assert.are.equal(100000 - loader.MAX_CHECKS, checks.more)
  end)

  it("keeps at most MAX_CHECK_MESSAGE bytes of a message", function()
    local _, _, _, checks = loader.check({ file = "x.lua", check = function()
      lb.expect(true, string.rep("x", 10 << 20))
    end }, {})
    assert.are.equal(loader.MAX_CHECK_MESSAGE, #checks[1].message)
  end)

  it("stops collecting when the check ends, even when it raised", function()
    loader.check({ file = "x.lua", check = function() error("boom", 0) end }, {})
    -- outside a check lb.expect reports to no one and behaves as before
    assert.are.equal(5, lb.expect(5, "x"))
    assert.is_nil(lb._expectations(nil))
  end)
end)

describe("explain.checks", function()
  it("masks secrets in the messages", function()
    local key = core.canary("sk-live-")
    local checks = explain.checks({ { ok = false, message = "the answer is " .. key, where = "x.lua:3" } }, { key })
    assert.is_nil(checks[1].message:find(key, 1, true))
    assert.truthy(checks[1].message:find("«secret:", 1, true))
  end)
end)
