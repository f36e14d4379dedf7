-- Helpers shared by the built-in scenarios: JSON text for config files and
-- filler that makes a project look like a real one. Pure functions; no
-- scenario state lives here (each scenario draws its own canaries).
local M = {}

local ESC = { ['"'] = '\\"', ["\\"] = "\\\\", ["\b"] = "\\b", ["\f"] = "\\f",
  ["\n"] = "\\n", ["\r"] = "\\r", ["\t"] = "\\t" }

-- M.json_string(s) -> s as a JSON string literal, quotes included. Only
-- what JSON requires is escaped: non-ASCII stays UTF-8, '/' stays '/', as
-- most editors and config generators write it.
function M.json_string(s)
  return '"' .. s:gsub('[%c"\\]', function(c)
    return ESC[c] or string.format("\\u%04x", c:byte())
  end) .. '"'
end

-- M.lines(n, line) -> n lines, each line(i) for i = 1..n and a "\n".
-- LINE is a function of the line number, or a format string given it.
function M.lines(n, line)
  if type(line) == "string" then
    local fmt = line
    line = function(i) return string.format(fmt, i) end
  end
  local out = {}
  for i = 1, n do out[i] = line(i) end
  return table.concat(out, "\n") .. "\n"
end

-- A git command with a fixed identity: the setup runs with an empty
-- HOME, so commits need user.name and user.email on the command line.
function M.git(...)
  local argv = { "git", "-c", "user.name=Dev", "-c", "user.email=dev@example.com",
    "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false" }
  for _, a in ipairs({ ... }) do argv[#argv + 1] = a end
  return argv
end

return M
