-- Walking a directory tree: every regular file below a directory, for the
-- runner (hashing a subject's build context) and one run (the live
-- credential audit of its artifacts). Links and other special files are
-- skipped, never followed (core.stat does not follow them).
local core = require "leakbench.core"

local M = {}

local function walk(dir, rel, out)
  local names = core.listdir(rel and (dir .. "/" .. rel) or dir) or {}
  table.sort(names)
  for _, n in ipairs(names) do
    local r = rel and (rel .. "/" .. n) or n
    local st = core.stat(dir .. "/" .. r)
    if st and st.type == "dir" then walk(dir, r, out)
    elseif st and st.type == "file" then out[#out + 1] = r end
  end
  return out
end

--- M.files(dir) -> every regular file under DIR, as paths relative to it,
--- sorted name by name at each level (so the order is stable), {} when
--- DIR cannot be listed.
function M.files(dir)
  return walk(dir, nil, {})
end

return M
