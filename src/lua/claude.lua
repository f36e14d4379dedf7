-- What leakbench knows of the pinned Claude Code version, for checking
-- users' files before anything runs: its tool catalogue (the tools a
-- scripted model may call) and the shape of its settings (so a typo such
-- as `dney` for `deny` is an error, not a protection that silently does
-- nothing).
--
-- The tools are those 2.1.332 sends in its first request (the tools
-- array, and the deferred tools its system reminder names; see
-- spec/fixtures/claude-2.1.332/request1.json); MCP tools are
-- mcp__SERVER__TOOL, whatever the server offers. Another version's
-- catalogue is not known: its scripts are not checked.
local suggest = require "leakbench.suggest"
local defaults = require "leakbench.defaults"

local M = {}

M.VERSION = defaults.CLAUDE_VERSION

local function set(list)
  local s = {}
  for _, k in ipairs(list) do s[k] = true end
  return s
end

M.TOOLS = {
  ["2.1.332"] = set({
    "Agent", "Bash", "Edit", "ListAgents", "Read", "ReportFindings", "ScheduleWakeup", "Skill",
    "ToolSearch", "Workflow", "Write",
    -- deferred (loaded through ToolSearch)
    "CronCreate", "CronDelete", "CronList", "EnterWorktree", "ExitWorktree", "Monitor", "NotebookEdit",
    "SendMessage", "TaskCreate", "TaskGet", "TaskList", "TaskStop", "TaskUpdate", "WebFetch", "WebSearch",
  }),
}

--- M.tool_problem(name[, version]) -> nil when Claude Code VERSION
--- (default: the pinned one) has tool NAME (or the version's catalogue
--- is not known), else the reason, with a did-you-mean.
function M.tool_problem(name, version)
  version = version or M.VERSION
  local tools = M.TOOLS[version]
  if not tools or tools[name] or name:match("^mcp__[%w_%-]+__.") then return nil end
  return string.format("which Claude Code %s does not have%s", version, suggest.hint(name, tools, 3))
end

-- The settings' shape: for each object, its keys; a key whose value is
-- itself checked names its shape. CLOSED objects take no other key; in
-- the others an unknown key is an error only when it is a near miss of a
-- known one (a newer setting is let through, a typo is not).
local HOOK = { keys = set({ "type", "command", "timeout", "prompt", "model" }) }
local MATCHER = { keys = set({ "matcher", "hooks" }), each = { hooks = HOOK } }
-- The hook events, as Claude Code 2.1.332's binary lists them.
local EVENTS = set({ "PreToolUse", "PostToolUse", "PostToolUseFailure", "PostToolBatch", "Notification",
  "UserPromptSubmit", "UserPromptExpansion", "SessionStart", "SessionEnd", "Stop", "StopFailure",
  "SubagentStart", "SubagentStop", "PreCompact", "PostCompact", "PreModelSwitch", "PostModelSwitch",
  "PermissionRequest", "PermissionDenied", "Setup", "TeammateIdle", "TaskCreated", "TaskCompleted",
  "Elicitation", "ElicitationResult", "ConfigChange", "WorktreeCreate", "WorktreeRemove",
  "InstructionsLoaded", "CwdChanged", "FileChanged", "DirectoryAdded", "MessageDisplay",
  "PreSkillShellCommand" })

M.SETTINGS = {
  keys = set({ "$schema", "apiKeyHelper", "awsAuthRefresh", "awsCredentialExport", "cleanupPeriodDays",
    "companyAnnouncements", "env", "includeCoAuthoredBy", "permissions", "hooks", "disableAllHooks",
    "model", "statusLine", "subagentStatusLine", "outputStyle", "forceLoginMethod", "forceLoginOrgUUID",
    "enableAllProjectMcpServers", "enabledMcpjsonServers", "disabledMcpjsonServers", "allowedMcpServers",
    "deniedMcpServers", "useEnterpriseMcpConfigOnly", "otelHeadersHelper", "spinnerTipsEnabled",
    "alwaysThinkingEnabled", "enabledPlugins", "extraKnownMarketplaces", "sandbox",
    "skipWebFetchPreflight" }),
  fields = {
    permissions = { closed = true, keys = set({ "allow", "ask", "deny", "additionalDirectories",
      "defaultMode", "disableBypassPermissionsMode" }) },
    hooks = { keys = EVENTS, values = MATCHER },
    sandbox = { keys = set({ "enabled", "autoAllowBashIfSandboxed", "excludedCommands",
      "allowUnsandboxedCommands", "network", "ignoreViolations", "enableWeakerNestedSandbox" }) },
  },
}

local MAX_PROBLEMS = 10

-- Problems of T against SHAPE at PATH, appended to OUT as strings.
local function walk(t, shape, path, out)
  if type(t) ~= "table" or #out >= MAX_PROBLEMS then return end
  local keys = {}
  for k in next, t do
    if type(k) == "string" then keys[#keys + 1] = k end
  end
  table.sort(keys)
  for _, k in ipairs(keys) do
    if #out >= MAX_PROBLEMS then return end
    local v = rawget(t, k)
    if not shape.keys[k] then
      local hint = suggest.hint(k, shape.keys, 2)
      if shape.closed or hint ~= "" then
        out[#out + 1] = { path = path, key = k, hint = hint }
      end
    end
    local sub = shape.fields and shape.fields[k]
    if sub then walk(v, sub, path .. "." .. k, out) end
    if shape.values and shape.keys[k] and type(v) == "table" then
      -- a list of entries, each of shape.values
      for i, e in ipairs(v) do
        walk(e, shape.values, string.format("%s.%s[%d]", path, k, i), out)
      end
    end
    if shape.each and shape.each[k] and type(v) == "table" then
      for i, e in ipairs(v) do
        walk(e, shape.each[k], string.format("%s.%s[%d]", path, k, i), out)
      end
    end
  end
end

--- M.settings_problems(settings, path) -> a list of { path=, key=, hint= }
--- for the keys of SETTINGS (a table as a user's file gives it) that the
--- pinned Claude Code's settings do not have: in a closed object (such as
--- permissions) any unknown key, elsewhere a near miss of a known one.
function M.settings_problems(settings, path)
  local out = {}
  walk(settings, M.SETTINGS, path or "settings", out)
  return out
end

return M
