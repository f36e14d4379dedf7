-- Podman queries for end-to-end specs: what a run left behind.
local sh = require "sh"
local M = {}

-- Names of containers (all states) carrying LABEL ("key=value").
function M.containers(label)
  local r = sh.run({ "podman", "ps", "-a", "--filter", "label=" .. label, "--format", "{{.Names}}" })
  local out = {}
  for n in r.stdout:gmatch("[^\n]+") do out[#out + 1] = n end
  return out
end

function M.networks(label)
  local r = sh.run({ "podman", "network", "ls", "--filter", "label=" .. label, "--format", "{{.Name}}" })
  local out = {}
  for n in r.stdout:gmatch("[^\n]+") do out[#out + 1] = n end
  return out
end

-- The suite id of the run writing into OUT (its suite.json, written
-- before any container starts), or nil while there is none.
function M.suite_of(out)
  local text = sh.read(out .. "/suite.json")
  return text and text:match('"suite_id":"([%w-]+)"')
end

-- Names of the running containers of the suite writing into OUT, one
-- string with a name per line ("" while there are none). A spec looks at
-- its own run's containers only: another suite may run on the machine at
-- the same time (a user's, another spec's).
function M.running(out)
  local id = M.suite_of(out)
  if not id then return "" end
  return sh.run({ "podman", "ps", "--filter", "label=leakbench.suite=" .. id, "--format", "{{.Names}}" }).stdout
end

return M
