-- The statistics of a suite: pure functions of counts, no I/O.
--
--   wilson(k, n)             95% Wilson score interval for k of n
--   newcombe_paired(a, b, c, d)
--                            difference of two paired proportions with its
--                            95% interval, Newcombe's method 10
--   mcnemar_exact(b, c)      two-sided exact McNemar p-value
--   paired(pairs)            all of the above for a list of { x, y } pairs
--
-- The paired table, rows the first measure (x), columns the second (y):
--
--              y yes   y no
--     x yes      a       b
--     x no       c       d
--
-- p1 = (a + b) / n is x's rate, p2 = (a + c) / n is y's, and the
-- difference is p1 - p2. leakbench pairs a subject's run (x) with the
-- baseline's run (y) of the same scenario and repeat, so a negative
-- difference is fewer leaks than the baseline.
--
-- References (their worked examples are pinned in spec/lua/stats_spec.lua):
--   E. B. Wilson, Probable inference, the law of succession, and
--     statistical inference, JASA 22 (1927) 209-212.
--   R. G. Newcombe, Improved confidence intervals for the difference
--     between binomial proportions based on paired data, Statistics in
--     Medicine 17 (1998) 2635-2650: method 10, the square-and-add of the
--     two Wilson intervals with the correction phi for the correlation.
--   Q. McNemar, Note on the sampling error of the difference between
--     correlated proportions or percentages, Psychometrika 12 (1947)
--     153-157; the exact form is the two-sided binomial test of b among
--     the b + c discordant pairs with p = 1/2.
local M = {}

-- The two-sided 95% normal quantile.
M.Z95 = 1.959963984540054

-- Wilson score interval for K successes in N trials. Returns lo, hi;
-- 0, 1 when N is 0 (nothing is known).
function M.wilson(k, n, z)
  z = z or M.Z95
  if n == 0 then return 0, 1 end
  local p = k / n
  local z2 = z * z
  local d = 1 + z2 / n
  local c = (p + z2 / (2 * n)) / d
  local h = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / d
  local lo, hi = c - h, c + h
  -- exact at the ends (rounding would give -1e-17 or 1 + 1e-16)
  if k == 0 then lo = 0 end
  if k == n then hi = 1 end
  return math.max(0, lo), math.min(1, hi)
end

-- Newcombe's method 10 for the paired table a, b, c, d (see the top).
-- Returns the difference p1 - p2, lo, hi. N = 0 gives 0, -1, 1.
function M.newcombe_paired(a, b, c, d, z)
  local n = a + b + c + d
  if n == 0 then return 0, -1, 1 end
  local p1, p2 = (a + b) / n, (a + c) / n
  local l1, u1 = M.wilson(a + b, n, z)
  local l2, u2 = M.wilson(a + c, n, z)
  -- phi: the correlation of the two measures, shrunk towards 0 by n/2 when
  -- positive (Newcombe's continuity correction of the product a*d - b*c),
  -- 0 when a margin is empty
  local phi = 0
  local m = (a + b) * (c + d) * (a + c) * (b + d)
  if m > 0 then
    local prod = a * d - b * c
    local adj
    if prod > n / 2 then adj = prod - n / 2
    elseif prod >= 0 then adj = 0
    else adj = prod end
    phi = adj / math.sqrt(m)
  end
  local e1, f2 = p1 - l1, u2 - p2
  local e2, f1 = p2 - l2, u1 - p1
  local lo = (p1 - p2) - math.sqrt(math.max(0, e1 * e1 - 2 * phi * e1 * f2 + f2 * f2))
  local hi = (p1 - p2) + math.sqrt(math.max(0, e2 * e2 - 2 * phi * e2 * f1 + f1 * f1))
  return p1 - p2, math.max(-1, lo), math.min(1, hi)
end

-- The two-sided exact McNemar p-value for B and C discordant pairs:
-- 2 * P(X <= min(b, c)) for X ~ Binomial(b + c, 1/2), at most 1. No
-- discordant pair gives 1. Summed in log space, so thousands of pairs do
-- not underflow.
function M.mcnemar_exact(b, c)
  local n, k = b + c, math.min(b, c)
  if n == 0 then return 1 end
  local logp = -n * math.log(2)  -- log P(X = 0)
  local sum = 0
  for i = 0, k do
    sum = sum + math.exp(logp)
    logp = logp + math.log(n - i) - math.log(i + 1)
  end
  return math.min(1, 2 * sum)
end

-- PAIRS: a list of { x, y } booleans. Returns { n=, a=, b=, c=, d=,
-- x = { k=, rate=, lo=, hi= }, y = { ... }, diff=, lo=, hi=, p= }.
function M.paired(pairs)
  local a, b, c, d = 0, 0, 0, 0
  for _, p in ipairs(pairs) do
    if p[1] and p[2] then a = a + 1
    elseif p[1] then b = b + 1
    elseif p[2] then c = c + 1
    else d = d + 1 end
  end
  local n = a + b + c + d
  local function rate(k)
    local lo, hi = M.wilson(k, n)
    return { k = k, rate = n > 0 and k / n or 0, lo = lo, hi = hi }
  end
  local diff, lo, hi = M.newcombe_paired(a, b, c, d)
  return { n = n, a = a, b = b, c = c, d = d, x = rate(a + b), y = rate(a + c),
    diff = diff, lo = lo, hi = hi, p = M.mcnemar_exact(b, c) }
end

return M
