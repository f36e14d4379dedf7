-- What a run's result.json keeps so that its verdict can be explained
-- (runone.lua and rescore.lua call these; report.html's run page,
-- runpage.lua, shows them): the cause of a failed or invalid run in one
-- line (cause.lua), every expectation its check made, and what the subject
-- put in the run's path. Everything that came from a user's file or the
-- evidence is masked with the scenario's secrets (keep.mask).
local json = require "leakbench.json"
local keep = require "leakbench.keep"
local cause = require "leakbench.cause"

local M = {}

--- M.cause(events, secrets) -> the one-line cause of a run from its
--- stream-json EVENTS (cause.of), or nil when no tool call failed.
function M.cause(events, secrets)
  return cause.of(events, secrets)
end

--- M.checks(checks, secrets) -> the expectations of a check (as
--- loader.check returns them) for result.json, each message masked with
--- SECRETS; and how many more were made, or nil.
function M.checks(checks, secrets)
  local out = {}
  for i, c in ipairs(checks or {}) do
    out[i] = { ok = c.ok, message = (keep.mask(c.message, secrets)), where = c.where }
  end
  return json.array(out), checks and checks.more or nil
end

--- M.subject_setup(subject, secrets) -> what SUBJECT (a loaded subject)
--- put in the run's path, for result.json and the run's page: its
--- description, claims, plugins, MCP servers, interceptor, agent layer,
--- setup, extra arguments, the names (not values) of its environment and
--- its staged files. Strings are masked with the scenario's SECRETS. Its
--- settings (hooks, permissions) are in the run folder's settings.json,
--- merged as applied.
function M.subject_setup(s, secrets)
  local function m(v) return type(v) == "string" and (keep.mask(v, secrets)) or v end
  local function list(t)
    local o = {}
    for i, v in ipairs(t or {}) do o[i] = m(v) end
    return json.array(o)
  end
  local function names(t)
    local o = {}
    for k in pairs(t or {}) do o[#o + 1] = m(k) end
    table.sort(o)
    return json.array(o)
  end
  local mcp = {}
  for name, d in pairs((s.mcp or {}).servers or {}) do
    mcp[#mcp + 1] = { name = name, command = m(d.command), args = list(d.args) }
  end
  table.sort(mcp, function(a, b) return a.name < b.name end)
  local out = { description = m(s.description), blocks = list(s.blocks), plugins = list(s.plugins),
    claude_args = list(s.claude_args), env = names(s.env), files = names(s.files), mcp = json.array(mcp),
    setup = s.setup and list(s.setup.argv) or nil, control = s.control or nil }
  local icp = s.interceptor
  if icp then
    out.interceptor = { image = m(icp.image), build = icp.build and m(icp.build.context), argv = list(icp.argv),
      port = icp.port, upstream_env = icp.upstream_env }
  end
  if s.agent then out.agent = { build = m(s.agent.build.context) } end
  return out
end

return M
