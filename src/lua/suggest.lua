-- "Did you mean": the known name nearest to a misspelled one, for the
-- command line (verbs, flags), the loader (fields) and the runner
-- (scenario names in a subject's blocks).
local M = {}

--- M.distance(a, b) -> the Levenshtein distance between strings A and B.
function M.distance(a, b)
  local prev = {}
  for j = 0, #b do prev[j] = j end
  for i = 1, #a do
    local cur = { [0] = i }
    for j = 1, #b do
      cur[j] = math.min(prev[j] + 1, cur[j - 1] + 1,
        prev[j - 1] + (a:sub(i, i) == b:sub(j, j) and 0 or 1))
    end
    prev = cur
  end
  return prev[#b]
end

-- The longest word a suggestion is looked for: past it nothing known is
-- near, and the distance (quadratic) would cost more than it tells.
M.MAX_WORD = 64

--- M.closest(word, names, max) -> the name of the list NAMES nearest to
--- WORD, at most MAX edits away (the first of equals), or nil. Bounded:
--- a WORD longer than M.MAX_WORD has none, and a name whose length
--- differs from WORD's by more than MAX is not measured.
function M.closest(word, names, max)
  if type(word) ~= "string" or #word > M.MAX_WORD then return nil end
  local best, bd
  for _, n in ipairs(names) do
    local d = math.abs(#word - #n) <= max and M.distance(word, n) or max + 1
    if d <= max and (not bd or d < bd) then best, bd = n, d end
  end
  return best
end

--- M.hint(word, set, max) -> " (did you mean 'X'?)" for the key of SET
--- nearest to WORD (the first by name of equals), or "".
function M.hint(word, set, max)
  local names = {}
  for k in pairs(set) do names[#names + 1] = k end
  table.sort(names)
  local best = M.closest(word, names, max)
  return best and " (did you mean '" .. best .. "'?)" or ""
end

return M
