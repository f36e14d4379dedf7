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

return M
