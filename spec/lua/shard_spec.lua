-- Shards: --shard I/N parsing, the plan's stable order and hash, each
-- shard's every-N-th part, and merge's checks that shards make one plan.
local shard = require "leakbench.shard"

local function queue(names, subjects, repeats)
  local q = {}
  for _, sc in ipairs(names) do
    for _, sj in ipairs(subjects) do
      for k = 1, repeats do
        q[#q + 1] = { scenario = { name = sc }, subject = { name = sj }, repeat_index = k }
      end
    end
  end
  return q
end

local CTX = { model = "m", timeout = 300 }

describe("shard.parse", function()
  it("takes I/N with 1 <= I <= N", function()
    assert.are.same({ 2, 3 }, { shard.parse("2/3") })
    assert.are.same({ 1, 1 }, { shard.parse("1/1") })
    for _, bad in ipairs({ "0/3", "4/3", "3", "a/b", "1/0", "-1/2", "1/3/4" }) do
      local i, err = shard.parse(bad)
      assert.is_nil(i)
      assert.are.equal("option '--shard' takes I/N with 1 <= I <= N (shard I of N), got '" .. bad .. "'", err)
    end
  end)
end)

describe("shard.plan and shard.select", function()
  it("hashes the plan the same whatever the shard, and differently for another plan", function()
    local a = shard.plan(queue({ "x", "y" }, { "baseline", "s" }, 2), CTX)
    local b = shard.plan(queue({ "x", "y" }, { "baseline", "s" }, 2), CTX, { index = 2, count = 3 })
    assert.are.equal(a.hash, b.hash)
    assert.are.equal(8, a.runs)
    assert.are.same({ index = 2, count = 3 }, b.shard)
    assert.are_not.equal(a.hash, shard.plan(queue({ "x", "y" }, { "baseline", "s" }, 3), CTX).hash)
    assert.are_not.equal(a.hash, shard.plan(queue({ "y", "x" }, { "baseline", "s" }, 2), CTX).hash)
    assert.are_not.equal(a.hash, shard.plan(queue({ "x", "y" }, { "baseline", "s" }, 2),
      { model = "other", timeout = 300 }).hash)
  end)

  it("gives shard I every N-th run; the shards share none and hold all", function()
    local q = queue({ "a", "b", "c" }, { "baseline", "s" }, 2)
    shard.plan(q, CTX)
    local seen = {}
    for i = 1, 3 do
      for _, job in ipairs(shard.select(q, i, 3)) do
        assert.are.equal(i - 1, (job.plan_index - 1) % 3)
        assert.is_nil(seen[job.plan_index])
        seen[job.plan_index] = true
      end
    end
    for k = 1, #q do assert.is_true(seen[k]) end
    -- more shards than runs: the last ones are empty
    assert.are.same({}, shard.select(q, 13, 20))
    assert.are.equal(1, #shard.select(q, 12, 20))
  end)
end)

describe("shard.check", function()
  local function doc(i, n, indexes, hash)
    local runs = {}
    for _, k in ipairs(indexes) do runs[#runs + 1] = { scenario = "s", subject = "baseline", plan_index = k } end
    return { plan = { hash = hash or "abc", runs = 5, shard = { index = i, count = n } }, runs = runs }
  end

  it("accepts the shards of one plan, in any order", function()
    assert.is_true(shard.check({ { dir = "c", doc = doc(3, 3, { 3 }) }, { dir = "a", doc = doc(1, 3, { 1, 4 }) },
      { dir = "b", doc = doc(2, 3, { 2, 5 }) } }))
  end)

  it("refuses a missing shard, a shard twice, another plan, and a plan not covered", function()
    local a, b, c = doc(1, 3, { 1, 4 }), doc(2, 3, { 2, 5 }), doc(3, 3, { 3 })
    assert.are.same({ nil, "shard 2/3 is missing (given: 1/3 'A', 3/3 'C')" },
      { shard.check({ { dir = "A", doc = a }, { dir = "C", doc = c } }) })
    assert.are.same({ nil, "shard 1/3 is given twice: 'A' and 'A2'" },
      { shard.check({ { dir = "A", doc = a }, { dir = "A2", doc = a },
                      { dir = "B", doc = b }, { dir = "C", doc = c } }) })
    assert.are.same({ nil, "'B' is from another plan than 'A' (plan def, not abc): shards must run the same "
      .. "scenario and subject files with the same options" },
      { shard.check({ { dir = "A", doc = a }, { dir = "B", doc = doc(2, 3, { 2, 5 }, "def") } }) })
    assert.are.same({ nil, "'B' is shard 2/4, 'A' shard 1/3: not the same split" },
      { shard.check({ { dir = "A", doc = a }, { dir = "B", doc = doc(2, 4, { 2 }) } }) })
    assert.are.same({ nil, "the shards hold 4 of the plan's 5 runs (run 5 is in none)" },
      { shard.check({ { dir = "A", doc = a }, { dir = "B", doc = doc(2, 3, { 2 }) }, { dir = "C", doc = c } }) })
    assert.are.same({ nil, "'X' has no plan (its results.json was not written by 'leakbench run' of this version)" },
      { shard.check({ { dir = "X", doc = { runs = {} } } }) })
  end)
end)
