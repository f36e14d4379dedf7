-- Helpers for the scripted model's end-to-end specs: start lb-model in the
-- background on a free loopback port and wait for its ready line, find (or
-- install once) the pinned Claude Code, and run it headless as a non-root
-- user against the model. Commands are argv lists, quoted for sh by
-- sh.quote; nothing is interpolated.
package.path = "spec/e2e/support/?.lua;" .. package.path
local sh = require "sh"
local cjson = require "cjson"

local M = {}

-- The pinned Claude Code: the product's default (plain Lua, readable here).
M.CLAUDE_VERSION = dofile("src/lua/defaults.lua").CLAUDE_VERSION

local function q(argv)
  local parts = {}
  for i, a in ipairs(argv) do parts[i] = sh.quote(a) end
  return table.concat(parts, " ")
end

local slurp = sh.read
M.slurp, M.write = sh.read, sh.write

-- A fresh temporary directory.
function M.tmpdir()
  local r = sh.run({ "mktemp", "-d", (os.getenv("TMPDIR") or "/tmp") .. "/lb-model-e2e.XXXXXX" })
  assert(r.status == 0, r.stderr)
  return (r.stdout:gsub("\n$", ""))
end

function M.rmtree(dir)
  if dir and dir:match("^/.+/lb%-model%-e2e%.") then sh.rmtree(dir) end
end


-- Starts lb-model with a script (a table, encoded to JSON, or a JSON
-- string). Returns { port=, pid=, log=path, err=path, dir= }; stop() it.
function M.start_model(script, extra)
  local bin = os.getenv("LB_MODEL") or error("LB_MODEL is not set (run through spec/run)")
  local dir = M.tmpdir()
  local path = dir .. "/script.json"
  M.write(path, type(script) == "string" and script or cjson.encode(script))
  local argv = { bin, "--script", path, "--listen", "127.0.0.1:0" }
  for _, a in ipairs(extra or {}) do argv[#argv + 1] = a end
  local log, err = dir .. "/model.log", dir .. "/model.err"
  local p = assert(io.popen(q(argv) .. " >" .. sh.quote(log) .. " 2>" .. sh.quote(err) ..
    " </dev/null & echo $!"))
  local pid = tonumber(p:read("l"))
  p:close()
  local m = { pid = pid, log = log, err = err, dir = dir, script = path }
  m.port = sh.retry(10, function()
    local s = slurp(log) or ""
    return tonumber(s:match("^lb%-model: listening on 127%.0%.0%.1:(%d+)\n"))
  end)
  function m.stop()
    sh.run({ "kill", tostring(pid) })
    sh.retry(5, function() return sh.run({ "kill", "-0", tostring(pid) }).status ~= 0 end)
  end
  function m.lines()
    local t = {}
    for l in (slurp(log) or ""):gmatch("[^\n]+") do t[#t + 1] = l end
    return t
  end
  assert(m.port, "lb-model did not become ready: " .. (slurp(err) or "") .. (slurp(log) or ""))
  return m
end

-- The pinned Claude Code binary, installed once into a cache directory
-- outside the source tree (build/claude-code/VERSION, or
-- $LB_CLAUDE_CODE_DIR) that later runs reuse. Returns its path.
function M.claude_binary()
  local dir = os.getenv("LB_CLAUDE_CODE_DIR")
  if not dir then
    local build = os.getenv("LB_BUILD") or error("LB_BUILD is not set")
    dir = build:gsub("/[^/]+/?$", "") .. "/claude-code/" .. M.CLAUDE_VERSION
  end
  local bin = dir .. "/node_modules/@anthropic-ai/claude-code/bin/claude.exe"
  local function works()
    local r = sh.run({ bin, "--version" })
    return r.status == 0 and r.stdout:find(M.CLAUDE_VERSION, 1, true)
  end
  if works() then return bin end
  sh.run({ "mkdir", "-p", dir })
  local argv = { "npm", "install", "--prefix", dir, "--no-audit", "--no-fund",
    "@anthropic-ai/claude-code@" .. M.CLAUDE_VERSION }
  local r = sh.run(argv)
  if (r.status ~= 0 or not works()) and io.open("/etc/ssl/certs/ca-certificates.crt") then
    argv[#argv + 1] = "--cafile"
    argv[#argv + 1] = "/etc/ssl/certs/ca-certificates.crt"
    r = sh.run(argv)
  end
  -- npm may skip the postinstall that links the native binary in place
  if not works() then
    local native = dir .. "/node_modules/@anthropic-ai/claude-code-linux-x64/claude"
    if io.open(native) then bin = native end
  end
  assert(works(), "cannot install Claude Code " .. M.CLAUDE_VERSION .. ": " .. r.stderr)
  return bin
end

local function is_root()
  return sh.run({ "id", "-u" }).stdout == "0\n"
end

-- Runs Claude Code headless against the model at port, as uid 65534 when
-- we are root (it refuses bypassPermissions as root), with HOME, the
-- project and the config dir in `home` (made and owned by that user).
-- opts: prompt, session_id, env (extra), timeout. Returns { status=,
-- stdout=, stderr=, events= (decoded lines), project=, config= }.
function M.run_claude(port, home, opts)
  local bin = M.claude_binary()
  local project, config = home .. "/project", home .. "/config"
  sh.run({ "mkdir", "-p", project, config })
  for name, text in pairs(opts.files or {}) do M.write(project .. "/" .. name, text) end
  local argv = {}
  if is_root() then
    sh.run({ "chown", "-R", "65534:65534", home })
    sh.run({ "chmod", "755", home })
    argv = { "setpriv", "--reuid=65534", "--regid=65534", "--clear-groups" }
  end
  local env = {
    "PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" .. home,
    "ANTHROPIC_BASE_URL=http://127.0.0.1:" .. port,
    "ANTHROPIC_API_KEY=sk-ant-bench-dummy-key",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
    "CLAUDE_CONFIG_DIR=" .. config,
  }
  for k, v in pairs(opts.env or {}) do env[#env + 1] = k .. "=" .. v end
  table.sort(env)
  for _, a in ipairs({ "timeout", "-k", "5", tostring(opts.timeout or 120), "env", "-i" }) do
    argv[#argv + 1] = a
  end
  for _, e in ipairs(env) do argv[#argv + 1] = e end
  for _, a in ipairs({ bin, "-p", opts.prompt, "--output-format", "stream-json", "--verbose",
    "--model", opts.model or "claude-sonnet-4-5", "--permission-mode", "bypassPermissions",
    "--session-id", opts.session_id }) do
    argv[#argv + 1] = a
  end
  local r = sh.run(argv, { cwd = project })
  r.events = {}
  for line in r.stdout:gmatch("[^\n]+") do
    local okj, ev = pcall(cjson.decode, line)
    if okj then r.events[#r.events + 1] = ev end
  end
  r.project, r.config = project, config
  return r
end

-- The events of a type (and subtype).
function M.events(r, type, subtype)
  local t = {}
  for _, e in ipairs(r.events) do
    if e.type == type and (subtype == nil or e.subtype == subtype) then t[#t + 1] = e end
  end
  return t
end

-- The content blocks of the assistant and user messages, in order, as
-- { role=, block= }.
function M.blocks(r)
  local t = {}
  for _, e in ipairs(r.events) do
    if (e.type == "assistant" or e.type == "user") and type(e.message) == "table" and
        type(e.message.content) == "table" then
      for _, b in ipairs(e.message.content) do t[#t + 1] = { role = e.type, block = b } end
    end
  end
  return t
end

-- A tool_result's text (string content or text blocks).
function M.result_text(b)
  if type(b.content) == "string" then return b.content end
  local s = {}
  for _, c in ipairs(type(b.content) == "table" and b.content or {}) do
    if c.type == "text" then s[#s + 1] = c.text end
  end
  return table.concat(s)
end

return M
