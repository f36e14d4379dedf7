-- The statistics against published worked examples, to the digits the
-- sources print.
--
--   [N98a] R. G. Newcombe, Two-sided confidence intervals for the single
--          proportion: comparison of seven methods, Statistics in Medicine
--          17 (1998) 857-872, Table II, method 3 (Wilson score, no
--          continuity correction): 81/263, 15/148, 0/20, 1/29.
--   [FLL]  M. W. Fagerland, S. Lydersen, P. Laake, Statistical Analysis of
--          Contingency Tables, CRC Press 2017, chapter 8 (the paired 2x2
--          table), the example of Cavo et al. (2012): complete response
--          before and after consolidation therapy, the table
--          [[59, 6], [16, 80]]. Newcombe's square-and-add interval (the
--          method 10 of R. G. Newcombe, Improved confidence intervals for
--          the difference between binomial proportions based on paired
--          data, Statistics in Medicine 17 (1998) 2635-2650):
--          -0.0621 (-0.1186 to -0.0046); the McNemar exact conditional
--          test: P = 0.052479. The same numbers are pinned by the authors'
--          R package contingencytables (tests/testthat/test-ch8.R).
local stats = require "leakbench.stats"

local function round(x, digits)
  local m = 10 ^ digits
  return math.floor(x * m + 0.5) / m
end

describe("stats.wilson", function()
  it("gives Newcombe's (1998a) Wilson intervals to four places", function()
    for _, c in ipairs({
      { 81, 263, 0.2553, 0.3662 },
      { 15, 148, 0.0624, 0.1605 },
      { 0, 20, 0.0000, 0.1611 },
      { 1, 29, 0.0061, 0.1718 },
    }) do
      local lo, hi = stats.wilson(c[1], c[2])
      assert.are.equal(c[3], round(lo, 4), c[1] .. "/" .. c[2] .. " lower")
      assert.are.equal(c[4], round(hi, 4), c[1] .. "/" .. c[2] .. " upper")
    end
  end)

  it("is exactly 0 and 1 at the ends and says nothing for n = 0", function()
    local lo, hi = stats.wilson(0, 5)
    assert.are.equal(0, lo)
    assert.is_true(hi < 1)
    lo, hi = stats.wilson(5, 5)
    assert.are.equal(1, hi)
    assert.is_true(lo > 0)
    lo, hi = stats.wilson(0, 0)
    assert.are.equal(0, lo)
    assert.are.equal(1, hi)
  end)
end)

describe("stats.newcombe_paired", function()
  it("gives Fagerland et al.'s interval for Cavo et al. (2012)", function()
    local d, lo, hi = stats.newcombe_paired(59, 6, 16, 80)
    assert.are.equal(-0.0621, round(d, 4))
    assert.are.equal(-0.1186, round(lo, 4))
    assert.are.equal(-0.0046, round(hi, 4))
  end)

  it("is symmetric: swapping the two measures negates the interval", function()
    local d, lo, hi = stats.newcombe_paired(59, 16, 6, 80)
    assert.are.equal(0.0621, round(d, 4))
    assert.are.equal(0.0046, round(lo, 4))
    assert.are.equal(0.1186, round(hi, 4))
  end)

  it("stays inside [-1, 1] and contains the estimate at the extremes", function()
    for _, t in ipairs({ { 0, 10, 0, 0 }, { 0, 0, 10, 0 }, { 10, 0, 0, 0 }, { 0, 0, 0, 10 },
      { 0, 1, 0, 0 }, { 3, 0, 0, 3 } }) do
      local d, lo, hi = stats.newcombe_paired(t[1], t[2], t[3], t[4])
      assert.is_true(lo >= -1 and hi <= 1 and lo <= d and d <= hi, table.concat(t, ","))
    end
    local d, lo, hi = stats.newcombe_paired(0, 0, 0, 0)
    assert.are.same({ 0, -1, 1 }, { d, lo, hi })
  end)
end)

describe("stats.mcnemar_exact", function()
  it("gives Fagerland et al.'s exact conditional p for Cavo et al. (2012)", function()
    assert.are.equal(0.052479, round(stats.mcnemar_exact(6, 16), 6))
  end)

  it("is the two-sided binomial tail, 1 with no discordant pair, and never underflows", function()
    -- 1 of 8 discordant pairs: 2 * (1 + 8) / 256
    assert.are.equal(2 * 9 / 256, stats.mcnemar_exact(1, 7))
    assert.are.equal(1, stats.mcnemar_exact(0, 0))
    assert.are.equal(1, stats.mcnemar_exact(5, 5))
    -- 0 of 10: 2 / 1024
    assert.are.equal(2 / 1024, stats.mcnemar_exact(0, 10))
    local p = stats.mcnemar_exact(1000, 1100)
    assert.is_true(p > 0.02 and p < 0.04, tostring(p))
  end)
end)

describe("stats.paired", function()
  it("counts the table from pairs and carries every number", function()
    local pairs_ = {}
    local function add(n, x, y) for _ = 1, n do pairs_[#pairs_ + 1] = { x, y } end end
    add(59, true, true)
    add(6, true, false)
    add(16, false, true)
    add(80, false, false)
    local p = stats.paired(pairs_)
    assert.are.same({ 161, 59, 6, 16, 80 }, { p.n, p.a, p.b, p.c, p.d })
    assert.are.equal(65, p.x.k)
    assert.are.equal(75, p.y.k)
    assert.are.equal(-0.1186, round(p.lo, 4))
    assert.are.equal(0.052479, round(p.p, 6))
  end)
end)
