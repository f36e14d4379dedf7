-- Loading scenario and subject files.
--
-- A file is loaded text-only into an environment of its own (no io, no
-- os.execute, no load of binary chunks; require limited to the leakbench
-- modules and the lib/ folders next to the file), evaluated afresh on every
-- call, and the table it returns is checked field by field. Every error is
-- returned, never raised, as "FILE:LINE: message", so one broken file never
-- stops the others.
local lb = require "leakbench"
local core = require "leakbench.core"
local budget = require "leakbench.budget"
local printable = require "leakbench.printable"
local suggest_mod = require "leakbench.suggest"
local cjson = require "cjson"
local pattern = require "leakbench.pattern"
local claude = require "leakbench.claude"

local M = {}

-- The globals a scenario sees. Deliberately small: describing a scenario
-- needs no I/O, and lb.file reads the files it stages. getmetatable and
-- setmetatable are the sandbox's own (see new_env).
local SAFE = {
  "assert", "error", "ipairs", "next", "pairs", "pcall", "rawequal", "rawget",
  "rawlen", "rawset", "select", "tonumber", "tostring", "type", "xpcall",
  "_VERSION",
}
-- Libraries a file gets its own shallow copy of: patching string.match in
-- one file changes that file's copy only.
local SAFE_LIBS = { "string", "table", "math", "utf8", "coroutine" }

local function copy(t)
  local c = {}
  for k, v in pairs(t) do c[k] = v end
  return c
end

-- The pattern functions users' files get (pattern.lua): bounded by the
-- budget's hook, where the string library's run in one C call.
local PATTERN_FUNCS = { "find", "match", "gmatch", "gsub" }
local function bounded_string()
  local s = copy(string)
  for _, k in ipairs(PATTERN_FUNCS) do s[k] = pattern[k] end
  s.dump = nil
  return s
end
-- What s:find(...) reaches while a budget is armed: every string's
-- methods go through the one string metatable, shared with the harness.
local BOUNDED_STRING = bounded_string()
local STRING_MT = debug.getmetatable("")

-- A read-only view of the leakbench module for one file: reads see lb's
-- values (its tables as read-only views too), writes raise at the file's
-- line, names that start with "_" (the loader's own) are hidden, and
-- OVERRIDES (the file's own lb.file) are shown instead of lb's.
local function readonly_lb(overrides)
  local views = {}
  local function view(t, name)
    if views[t] then return views[t] end
    local p = {}
    views[t] = p
    local function get(k)
      if type(k) == "string" and k:sub(1, 1) == "_" then return nil end
      local v = t == lb and overrides[k] or t[k]
      if type(v) == "table" and not lb.kind(v) then return view(v, name .. "." .. tostring(k)) end
      return v
    end
    return setmetatable(p, {
      __index = function(_, k) return get(k) end,
      __newindex = function(_, k)
        error(string.format("attempt to set '%s.%s': the leakbench module is read-only",
          name, tostring(k)), 2)
      end,
      __pairs = function()
        local function step(_, k)
          repeat k = next(t, k) until k == nil or get(k) ~= nil
          if k ~= nil then return k, get(k) end
        end
        return step, p, nil
      end,
      __len = function() return #t end,
      __metatable = false,
    })
  end
  return view(lb, "lb")
end

-- A copy of V built from plain tables, read with next only, so no
-- metamethod of the file's (__index, __pairs, __len, __tostring, ...) ever
-- runs in the harness and what was checked is what is used. Metatables are
-- dropped, except lb's marks, which the copies get again; shared and
-- cyclic tables stay shared; other values are kept as they are.
local function plain(v, seen)
  if type(v) ~= "table" then return v end
  if seen[v] then return seen[v] end
  local c = {}
  seen[v] = c
  for k, x in next, v do c[plain(k, seen)] = plain(x, seen) end
  local kind = lb.kind(v)
  if kind then lb._mark(c, kind) end
  return c
end

-- The text of an error value, without calling any of its metamethods.
local function error_text(v)
  if type(v) == "string" then return v end
  if type(v) == "table" and type(rawget(v, "message")) == "string" then
    return rawget(v, "message")
  end
  if math.type(v) then return tostring(v) end
  return "(error object is a " .. type(v) .. " value)"
end
M.error_text = error_text

local function dirname(path)
  return path:match("^(.*)/[^/]*$") or "."
end

-- lib/ folders searched by require: the file's own directory's lib/, then
-- each parent's, as far as the path given goes. Absolute or as given, never
-- relative to the process's cwd in a surprising way.
local function lib_dirs(path)
  local dirs, dir = {}, dirname(path)
  while true do
    dirs[#dirs + 1] = dir .. "/lib"
    local parent = dir:match("^(.*)/[^/]+$")
    if not parent or parent == dir or parent == "" then break end
    dir = parent
  end
  return dirs
end

local new_env

-- The largest scenario, subject or lib file read.
local SOURCE_MAX = 16 << 20

-- The text of FILE (a scenario, subject or lib file), or nil, "FILE:
-- message". A link to it is resolved first; a FIFO, device or directory is
-- refused without being opened for long, and so is a file over SOURCE_MAX.
local function read_source(file)
  local real, err = core.realpath(file)
  local text, info
  if real then
    text, info = core.read_beneath(dirname(real), real:match("[^/]*$"), SOURCE_MAX)
    err = info
  end
  if not text then
    return nil, file .. ": cannot open: " .. (err:match(": ([^:]*)$") or err)
  end
  if info.truncated then
    return nil, string.format("%s: cannot open: larger than %d MiB", file, SOURCE_MAX >> 20)
  end
  return text
end

-- A require for the sandbox: preloaded leakbench modules and cjson, then
-- NAME.lua in the lib/ folders, loaded text-only into a fresh sandbox.
local function make_require(path, loaded, lbview)
  local dirs = lib_dirs(path)
  return function(name)
    if type(name) ~= "string" then
      error("bad argument #1 to 'require' (string expected, got " .. type(name) .. ")", 2)
    end
    if loaded[name] ~= nil then return loaded[name] end
    if name == "leakbench" then return lbview end
    if name == "cjson" then
      -- an instance of its own: its functions and settings are this file's
      loaded[name] = cjson.new()
      return loaded[name]
    end
    if not name:match("^[%w_]+[%w_.]*$") then
      error("module '" .. name .. "' not found: bad module name", 2)
    end
    local rel = name:gsub("%.", "/") .. ".lua"
    local tried = {}
    for _, d in ipairs(dirs) do
      local file = d .. "/" .. rel
      if core.realpath(file) then
        local text, rerr = read_source(file)
        if not text then error(rerr, 0) end
        local env = new_env(file, loaded)
        local chunk, err = load(text, "@" .. file, "t", env)
        if not chunk then error(err, 0) end
        local v = chunk(name)
        if v == nil then v = true end
        loaded[name] = v
        return v
      end
      tried[#tried + 1] = "\n\tno file '" .. file .. "'"
    end
    error("module '" .. name .. "' not found:" .. table.concat(tried), 2)
  end
end

function new_env(path, loaded)
  local env = {}
  for _, k in ipairs(SAFE) do env[k] = _G[k] end
  for _, k in ipairs(SAFE_LIBS) do env[k] = copy(_G[k]) end
  env.string = bounded_string()
  -- What getmetatable("") shows the file: a table of its own, so patching
  -- it changes nothing (the real one is protected in lhost.c as well).
  local string_mt = { __index = env.string }
  env.getmetatable = function(v)
    if type(v) == "string" then return string_mt end
    return getmetatable(v)
  end
  -- No __gc: a finalizer would run later, in the harness, outside any
  -- budget. (Lua marks an object for finalization only if its metatable
  -- has the field when it is set, so checking here is enough.)
  env.setmetatable = function(t, mt)
    if type(mt) == "table" and rawget(mt, "__gc") ~= nil then
      error("bad argument #2 to 'setmetatable' (a __gc metamethod is not allowed)", 2)
    end
    return setmetatable(t, mt)
  end
  -- time only: no getenv (lb.var is the explicit way in), no files
  env.os = { time = os.time, date = os.date, clock = os.clock }
  env.print = function(...)
    local n, parts = select("#", ...), {}
    for i = 1, n do parts[i] = tostring((select(i, ...))) end
    io.stderr:write(table.concat(parts, "\t"), "\n")
  end
  local dir = dirname(path)
  env.require = make_require(path, loaded, readonly_lb({
    file = function(p)
      local f = lb._file_below(dir, p, 3)
      return f
    end,
  }))
  env._G = env
  return env
end

-- The first line of the file where FIELD is assigned in a table
-- constructor ("field =", not "field =="), or nil.
local function field_line(text, field)
  local n = 0
  for line in (text .. "\n"):gmatch("([^\n]*)\n") do
    n = n + 1
    local s = line:gsub("%-%-.*$", "")
    if s:match("^%s*" .. field .. "%s*=[^=]") or s:match("[{,;]%s*" .. field .. "%s*=[^=]")
        or s:match("^%s*%[%s*[\"']" .. field .. "[\"']%s*%]%s*=[^=]") then
      return n
    end
  end
end

-- Evaluates FILE and returns its value and the line of the return that
-- produced it, or nil, "FILE:LINE: message".
-- Budgets: what loading a file (running it, and the requires and lb.file
-- reads it does) and running its check may cost. Spent, the file's error
-- is "FILE:LINE: loading took more than 10 s (time budget)". Pattern
-- matching is bounded too: a file's find, match, gmatch and gsub (and
-- every string's methods while a budget is armed) are pattern.lua's,
-- which the hook interrupts. Other long C calls are bounded only
-- between instructions (string.rep by the memory budget).
M.LOAD_BUDGET = { instructions = 100000000, seconds = 10, memory = 256 << 20 }
M.CHECK_BUDGET = { instructions = 1000000000, seconds = 60, memory = 1024 << 20 }

local BUDGET_TEXT = {
  instructions = function(what, b)
    return string.format("%s ran more than %d instructions (instruction budget)", what, b.instructions)
  end,
  time = function(what, b)
    return string.format("%s took more than %g s (time budget)", what, b.seconds)
  end,
  memory = function(what, b)
    return string.format("%s used more than %d MiB of memory (memory budget)", what, b.memory >> 20)
  end,
  interrupted = function(what)
    return string.format("%s was stopped: leakbench was interrupted (SIGINT or SIGTERM)", what)
  end,
}

-- The innermost line of FILE on CO's stack, or nil.
local function line_in(co, file)
  return debug.traceback(co):match("\n%s*" .. file:gsub("%p", "%%%0") .. ":(%d+):")
end

-- Runs fn(...) in a coroutine of its own under budget B (a table like
-- M.LOAD_BUDGET); WHAT ("loading", "check") and FILE name it in messages.
-- With chunk, the line of chunk's last return is watched. Returns true,
-- the first value, the return line; or false, the error value as raised
-- (a message when a budget was spent), whether a budget was spent, and the
-- error as "FILE:LINE: message". A budget error reads "FILE:LINE: what
-- took more than ...".
function M.budgeted(what, file, b, fn, chunk, ...)
  local co = coroutine.create(fn)
  budget.arm(co, b.instructions, b.seconds, b.memory, chunk)
  local string_index = STRING_MT.__index
  STRING_MT.__index = BOUNDED_STRING
  local ok, v = coroutine.resume(co, ...)
  STRING_MT.__index = string_index
  local over, ret_line = budget.disarm(co)
  if over then
    -- Drop the value before collecting: the register would keep it alive.
    v = nil -- luacheck: ignore 311
    collectgarbage()
    return false, string.format("%s:%s: %s", file, line_in(co, file) or "1",
      BUDGET_TEXT[over](what, b)), true
  end
  if ok and coroutine.status(co) ~= "dead" then
    return false, string.format("%s:%s: attempt to yield from outside a coroutine", file,
      line_in(co, file) or "1")
  end
  if not ok then
    local msg = error_text(v)
    -- Errors raised in the file already carry FILE:LINE; others get the file.
    if msg:sub(1, #file + 1) ~= file .. ":" then
      msg = file .. ":" .. (line_in(co, file) or "1") .. ": " .. msg
    end
    return false, v, false, msg
  end
  return true, v, ret_line
end

-- Evaluates FILE and returns its value and the line of the return that
-- produced it, or nil, "FILE:LINE: message".
local function evaluate(file)
  local text, rerr = read_source(file)
  if not text then return nil, rerr end
  local env = new_env(file, {})
  local chunk, err = load(text, "@" .. file, "t", env)
  if not chunk then return nil, err end
  local ok, v, ret_line, msg = M.budgeted("loading", file, M.LOAD_BUDGET,
    function() return plain(chunk(), {}) end, chunk)
  if not ok then return nil, msg or v end
  return { value = v, text = text, ret_line = ret_line or 1 }
end

-- The most expectations of one check that are kept (each lb.expect call,
-- passed or failed, for the run's page); the rest are only counted.
M.MAX_CHECKS = 200
M.MAX_CHECK_MESSAGE = 1000

-- Runs SCENARIO's check function on RUN under M.CHECK_BUDGET. Returns
-- verdict ("pass", "fail", "error"), reason, failed (a list of { message=,
-- where= }), and checks: every lb.expect it made, in order, as { ok=,
-- message=, where= } (at most M.MAX_CHECKS; checks.more counts the rest).
-- A spent budget is an "error" whose reason names the file.
function M.check(scenario, run)
  local checks = {}
  if not scenario.check then return "pass", nil, {}, checks end
  local old = lb._expectations(function(ok, message, where)
    if #checks < M.MAX_CHECKS then
      -- a message is the file's: at most MAX_CHECK_MESSAGE bytes of it are kept
      checks[#checks + 1] = { ok = ok, where = where,
        message = type(message) == "string" and message:sub(1, M.MAX_CHECK_MESSAGE) or "expectation" }
    else
      checks.more = (checks.more or 0) + 1
    end
  end)
  local ok, err, spent = M.budgeted("check", scenario.file or "?", M.CHECK_BUDGET,
    scenario.check, nil, run)
  lb._expectations(old)
  if ok then return "pass", nil, {}, checks end
  if spent then return "error", err, {}, checks end
  if type(err) == "table" and rawget(err, "check_failed") then
    local where, message = rawget(err, "where"), rawget(err, "message")
    where = type(where) == "string" and where or "?"
    message = type(message) == "string" and message or "expectation failed"
    return "fail", where .. ": " .. message, { { message = message, where = where } }, checks
  end
  return "error", "check raised: " .. error_text(err), {}, checks
end

-- Field checks. Each spec entry: type checker and its description.
local function is_string(v) return type(v) == "string" end
local function is_posnum(v) return type(v) == "number" and v > 0 end
local function is_posint(v) return math.type(v) == "integer" and v > 0 end
local function is_table(v) return type(v) == "table" and lb.kind(v) == nil end
local function is_func(v) return type(v) == "function" end

local function type_name(v)
  local kind = lb.kind(v)
  if kind then return (kind:gsub("^leakbench%.", "an lb.")) end
  if math.type(v) == "float" then return "a number" end
  local t = type(v)
  return (t:match("^[aeiou]") and "an " or "a ") .. t
end

local function suggest(name, known)
  return suggest_mod.hint(name, known, 2)
end

-- Validation context: raises {where=line, msg=...} through check_error.
local Check = {}
Check.__index = Check

local function new_check(file, loaded)
  return setmetatable({ file = file, loaded = loaded }, Check)
end

-- A user's value in a message: a short, escaped prefix (a 1 MB key is
-- quoted by its first 40 bytes, an escape sequence is shown, not sent).
local QUOTE_MAX = 40
local function q(v)
  return printable.line(v, QUOTE_MAX)
end
M.quote = q

function Check:fail(field, msg)
  local f = type(field) == "string" and field:match("^[%w_]+") or nil
  local line = f and #f <= 64 and field_line(self.loaded.text, f) or self.loaded.ret_line
  error({ lb_check = true, msg = string.format("%s:%d: %s", self.file, line, msg) }, 0)
end

function Check:field(t, name, pred, want, path)
  local v = t[name]
  if v ~= nil and not pred(v) then
    self:fail(path and path:match("^[%w_]+") or name, string.format("field '%s' is %s, expected %s",
      printable.line(path or name, 120), type_name(v), want))
  end
  return v
end

function Check:unknown(t, known, what)
  local names = {}
  for k in pairs(t) do names[#names + 1] = k end
  table.sort(names, function(a, b) return tostring(a) < tostring(b) end)
  for _, k in ipairs(names) do
    if type(k) ~= "string" then
      self:fail(nil, string.format("%s has a non-string key %s", what, q(tostring(k))))
    elseif not known[k] then
      self:fail(k, string.format("unknown field '%s' in %s%s", q(k), what, suggest(k, known)))
    end
  end
end

-- A map of relative paths to contents: string or lb.file.
function Check:files(t, name)
  local v = self:field(t, name, is_table, "a table of path = contents")
  if not v then return nil end
  for k, c in pairs(v) do
    if type(k) ~= "string" or k == "" then
      self:fail(name, string.format("field '%s' has a key that is not a path: %s", name, q(tostring(k))))
    end
    if k:sub(1, 1) == "/" or k:match("%f[^/%z]%.%.%f[/%z]") or k:match("^%.%.") then
      self:fail(name, string.format("field '%s': path '%s' must be relative and stay inside", name, q(k)))
    end
    if type(c) ~= "string" and not lb.is(c, lb.FILE) then
      self:fail(name, string.format("field '%s[\"%s\"]' is %s, expected a string or lb.file()",
        name, q(k), type_name(c)))
    end
  end
  return v
end

function Check:string_list(t, name)
  local v = self:field(t, name, is_table, "a list of strings")
  if not v then return nil end
  for k, s in pairs(v) do
    if math.type(k) ~= "integer" then self:fail(name, string.format("field '%s' must be a list", name)) end
    if type(s) ~= "string" then
      self:fail(name, string.format("field '%s[%d]' is %s, expected a string", name, k, type_name(s)))
    end
  end
  return v
end

-- Variables of Claude Code's environment that the harness sets to route
-- the evidence (where the transcript goes, where requests and lookups
-- go, which CAs are trusted, which provider is asked): a scenario or a
-- subject may add variables, never change these.
M.HARNESS_ENV = {}
for _, k in ipairs({ "CLAUDE_CONFIG_DIR", "HOME", "XDG_CONFIG_HOME", "ANTHROPIC_BASE_URL",
    "ANTHROPIC_BEDROCK_BASE_URL", "ANTHROPIC_VERTEX_BASE_URL", "CLAUDE_CODE_USE_BEDROCK",
    "CLAUDE_CODE_USE_VERTEX", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY",
    "http_proxy", "https_proxy", "all_proxy", "no_proxy", "SSL_CERT_FILE", "SSL_CERT_DIR",
    "CURL_CA_BUNDLE", "REQUESTS_CA_BUNDLE", "GIT_SSL_CAINFO", "GIT_SSL_CAPATH",
    "NODE_EXTRA_CA_CERTS", "NODE_TLS_REJECT_UNAUTHORIZED", "GIT_SSL_NO_VERIFY" }) do
  M.HARNESS_ENV[k] = true
end

-- Refuses a variable of env map V (field PATH) that the harness owns.
function Check:harness_env(v, path)
  local names = {}
  for k in pairs(v or {}) do
    if M.HARNESS_ENV[k] then names[#names + 1] = k end
  end
  table.sort(names)
  if names[1] then
    local line = field_line(self.loaded.text, names[1])
    self:fail(line and names[1] or path, string.format("field '%s.%s' is the harness's: it routes the "
      .. "evidence (transcript, requests, lookups, CAs), so a scenario or subject may not set it",
      path, names[1]))
  end
end

function Check:string_map(t, name)
  local v = self:field(t, name, is_table, "a table of strings")
  if not v then return nil end
  for k, s in pairs(v) do
    if type(k) ~= "string" or not k:match("^[%a_][%w_]*$") then
      self:fail(name, string.format("field '%s' has a bad name %s", name, q(tostring(k))))
    end
    if type(s) ~= "string" then
      self:fail(name, string.format("field '%s.%s' is %s, expected a string", name, q(k), type_name(s)))
    end
  end
  return v
end

function Check:argv(v, path, field)
  if type(v) ~= "table" or #v == 0 then
    self:fail(field, string.format("field '%s' is %s, expected a non-empty list of strings", path, type_name(v)))
  end
  for i, s in pairs(v) do
    if math.type(i) ~= "integer" or type(s) ~= "string" then
      self:fail(field, string.format("field '%s[%s]' is %s, expected a string", path, tostring(i), type_name(s)))
    end
  end
end

-- The tools a scripted model calls (lb.use) must be tools the pinned
-- Claude Code has (claude.lua's catalogue): `bash` for `Bash` is refused
-- here, not found out after a run that tested nothing.
function Check:tools(script, field)
  local function turns(sc, what)
    for i, turn in ipairs(type(sc) == "table" and sc.turns or {}) do
      for _, b in ipairs(type(turn) == "table" and turn.blocks or {}) do
        if type(b) == "table" and b.type == "tool_use" and type(b.name) == "string" then
          local why = claude.tool_problem(b.name)
          if why then
            self:fail(field, string.format("field '%s': %s turn %d calls tool '%s', %s", field, what, i,
              q(b.name), why))
          end
        end
      end
    end
  end
  turns(script, "the script's")
  if type(script) == "table" and script.subagent then turns(script.subagent, "the subagent's") end
end

-- Claude Code's settings: a key the pinned version does not know, where
-- it must be one it knows (a typo), is refused with a did-you-mean.
function Check:settings(settings)
  local p = claude.settings_problems(settings, "settings")[1]
  if p then
    self:fail("settings", string.format("field '%s' has unknown key '%s' (not a setting of Claude Code %s)%s",
      p.path, q(p.key), claude.VERSION, p.hint))
  end
end

-- mcp = { servers = { NAME = { command =, args =, env = } } }: MCP servers
-- Claude Code starts inside the claude container (over stdio). Returns
-- { servers = { NAME = { command, args, env } } }, every field filled in.
local MCP_SERVER_FIELDS = { command = true, args = true, env = true }

function Check:mcp(t)
  local m = self:field(t, "mcp", is_table, "a table with 'servers'")
  local out = { servers = {} }
  if not m then return out end
  self:unknown(m, { servers = true }, "mcp")
  local servers = self:field(m, "servers", is_table, "a table of name = { command, args, env }",
    "mcp.servers") or {}
  for name, def in pairs(servers) do
    if type(name) ~= "string" or not name:match("^[%w][%w_%-]*$") then
      self:fail("mcp", string.format("field 'mcp.servers' has a bad server name %s: use letters, "
        .. "digits, '-' and '_'", q(tostring(name))))
    end
    local path = "mcp.servers." .. name
    if not is_table(def) then
      self:fail("mcp", string.format("field '%s' is %s, expected a table with 'command'", q(path),
        type_name(def)))
    end
    self:unknown(def, MCP_SERVER_FIELDS, path)
    if def.command == nil then self:fail("mcp", path .. " has no 'command'") end
    self:field(def, "command", function(v) return type(v) == "string" and v ~= "" end,
      "a non-empty string", path .. ".command")
    local args = self:field(def, "args", is_table, "a list of strings", path .. ".args") or {}
    for i, a in pairs(args) do
      if math.type(i) ~= "integer" or type(a) ~= "string" then
        self:fail("mcp", string.format("field '%s.args[%s]' is %s, expected a string", q(path),
          tostring(i), type_name(a)))
      end
    end
    local env = self:field(def, "env", is_table, "a table of strings", path .. ".env") or {}
    for k, v in pairs(env) do
      if type(k) ~= "string" or not k:match("^[%a_][%w_]*$") then
        self:fail("mcp", string.format("field '%s.env' has a bad name %s", q(path), q(tostring(k))))
      end
      if type(v) ~= "string" then
        self:fail("mcp", string.format("field '%s.env.%s' is %s, expected a string", q(path), q(k),
          type_name(v)))
      end
    end
    self:harness_env(env, path .. ".env")
    out.servers[name] = { command = def.command, args = args, env = env }
  end
  return out
end

local SCENARIO_FIELDS = {
  name = true, description = true, tags = true, prompt = true, files = true,
  home = true, setup = true, env = true, settings = true, secrets = true,
  timeout = true, max_turns = true, model = true, check = true,
  claude_args = true, partial = true, expect_leak = true, expect = true,
  limits = true, mcp = true, permission_mode = true, destinations = true,
  echo_hosts = true,
}

-- destinations = { { secret = S, host = H }, ... }: the host each secret
-- is meant to reach (a credential broker injects it there). S must be one
-- of the scenario's secrets; H a DNS name, compared case-blind. Returns
-- the list, hosts lower-cased, possibly empty. Messages never hold S.
function Check:destinations(t, secrets)
  local want = "a list of { secret = ..., host = ... }"
  local v = self:field(t, "destinations", is_table, want)
  if not v then return {} end
  local known = {}
  for _, sec in ipairs(secrets) do known[sec] = true end
  local out = {}
  for i, d in pairs(v) do
    if math.type(i) ~= "integer" or i < 1 or i > #v then
      self:fail("destinations", "field 'destinations' must be " .. want)
    end
    local path = "destinations[" .. i .. "]"
    if not is_table(d) then
      self:fail("destinations", string.format("field '%s' is %s, expected a table with 'secret' and "
        .. "'host'", path, type_name(d)))
    end
    self:unknown(d, { secret = true, host = true }, path)
    for _, k in ipairs({ "secret", "host" }) do
      if d[k] == nil then self:fail("destinations", string.format("%s has no '%s'", path, k)) end
      self:field(d, k, is_string, "a string", path .. "." .. k)
    end
    if not known[d.secret] then
      self:fail("destinations", string.format("field '%s.secret' is not one of the scenario's "
        .. "'secrets'", path))
    end
    if not d.host:match("^[%w][%w.-]*$") or #d.host > 253 then
      self:fail("destinations", string.format("field '%s.host' is '%s', expected a DNS name such as "
        .. "'api.example.test'", path, q(d.host)))
    end
    out[i] = { secret = d.secret, host = d.host:lower() }
  end
  return out
end

-- Claude Code's permission modes a run may start in (--permission-mode).
-- bypassPermissions is the default: a headless run has nobody to answer a
-- prompt, and under it every tool call the model makes is carried out, so
-- the baseline shows every leak a script reaches. A protection that works
-- through prompts (a PermissionRequest hook, an `ask` rule) only acts
-- under a mode that prompts: its subject says so with permission_mode.
M.PERMISSION_MODES = { "default", "acceptEdits", "plan", "bypassPermissions" }
M.DEFAULT_PERMISSION_MODE = "bypassPermissions"
local MODE_SET = {}
for _, m in ipairs(M.PERMISSION_MODES) do MODE_SET[m] = true end

-- model_replies = { { match = "...", reply = "..." }, ... }: what the
-- scripted model answers to the subject's own model calls (a hook that
-- asks a model whether a call is safe): the first entry whose match
-- (plain text) is in a request's system prompt or first user message
-- gives the whole answer. Returns the list, possibly empty.
function Check:model_replies(t)
  local v = self:field(t, "model_replies", is_table, "a list of { match = ..., reply = ... }")
  if not v then return {} end
  local out = {}
  for i, r in pairs(v) do
    if math.type(i) ~= "integer" or i < 1 or i > #v then
      self:fail("model_replies", "field 'model_replies' must be a list of { match = ..., reply = ... }")
    end
    local path = "model_replies[" .. i .. "]"
    if not is_table(r) then
      self:fail("model_replies", string.format("field '%s' is %s, expected a table with 'match' and "
        .. "'reply'", path, type_name(r)))
    end
    self:unknown(r, { match = true, reply = true }, path)
    for _, k in ipairs({ "match", "reply" }) do
      if r[k] == nil then self:fail("model_replies", string.format("%s has no '%s'", path, k)) end
      self:field(r, k, is_string, "a string", path .. "." .. k)
    end
    if r.match == "" then
      self:fail("model_replies", string.format("field '%s.match' is empty: it would match every "
        .. "request", path))
    end
    out[i] = { match = r.match, reply = r.reply }
  end
  return out
end

function Check:permission_mode(t)
  local v = self:field(t, "permission_mode", is_string, "a string")
  if v ~= nil and not MODE_SET[v] then
    self:fail("permission_mode", string.format("field 'permission_mode' is '%s', expected one of %s%s",
      v, "'" .. table.concat(M.PERMISSION_MODES, "', '") .. "'", suggest(v, MODE_SET)))
  end
  return v
end

-- limits = { memory = "4g", pids = 1024, tmp = "1g", home = "512m",
-- cpus = 2, project = "1g", config = "1g", record_bytes = "192M" }: the
-- claude container's resources (project and config: what the agent may
-- write into /work and Claude Code's config dir) and
-- what the recording proxy may record, for a scenario that needs more (or
-- tests less) than the defaults of sandbox.LIMITS and sandbox.RECORD_BYTES.
local LIMIT_FIELDS = { memory = "size", pids = "count", tmp = "size", home = "size",
  cpus = "cpus", project = "size", config = "size", record_bytes = "size" }
local function is_size(v) return type(v) == "string" and v:match("^%d+[kKmMgG]?$") ~= nil end

local CHANNEL = { wire = true, transcript = true, answer = true, stderr = true, logs = true,
  egress = true }

local function basename(file)
  return (file:match("([^/]+)$") or file):gsub("%.lua$", "")
end

local function validate_scenario(c, t, file)
  c:unknown(t, SCENARIO_FIELDS, "scenario")
  local s = {}
  s.name = c:field(t, "name", is_string, "a string") or basename(file)
  if not s.name:match("^[%w][%w_.%-]*$") then
    c:fail("name", string.format("field 'name' is '%s': use letters, digits, '-', '_' and '.'", q(s.name)))
  end
  s.description = c:field(t, "description", is_string, "a string")
  s.tags = c:string_list(t, "tags") or {}
  if t.prompt == nil then c:fail(nil, "scenario has no 'prompt'") end
  s.prompt = c:field(t, "prompt", is_string, "a string")
  s.files = c:files(t, "files") or {}
  s.home = c:files(t, "home") or {}
  s.setup = c:field(t, "setup", is_table, "a list of argv lists") or {}
  for i, argv in pairs(s.setup) do
    if math.type(i) ~= "integer" then c:fail("setup", "field 'setup' must be a list of argv lists") end
    c:argv(argv, "setup[" .. i .. "]", "setup")
  end
  s.env = c:string_map(t, "env") or {}
  c:harness_env(s.env, "env")
  s.settings = c:field(t, "settings", is_table, "a table") or {}
  c:settings(s.settings)
  s.secrets = c:string_list(t, "secrets") or {}
  for i, sec in ipairs(s.secrets) do
    if #sec < 8 then
      c:fail("secrets", string.format("field 'secrets[%d]' is %d bytes long: secrets need at least 8 "
        .. "(shorter ones match ordinary text)", i, #sec))
    end
  end
  s.destinations = c:destinations(t, s.secrets)
  s.echo_hosts = c:string_list(t, "echo_hosts") or {}
  for i, h in ipairs(s.echo_hosts) do
    if not h:match("^[%w][%w.-]*$") or #h > 253 then
      c:fail("echo_hosts", string.format("field 'echo_hosts[%d]' is '%s', expected a DNS name such as "
        .. "'api.example.test'", i, q(h)))
    end
  end
  s.timeout = c:field(t, "timeout", is_posnum, "a positive number")
  s.max_turns = c:field(t, "max_turns", is_posint, "a positive integer")
  local limits = c:field(t, "limits", is_table, "a table")
  if limits then
    c:unknown(limits, LIMIT_FIELDS, "limits")
    s.limits = {}
    for k, kind in pairs(LIMIT_FIELDS) do
      if kind == "size" then
        s.limits[k] = c:field(limits, k, is_size, "a size such as \"512m\"", "limits." .. k)
      elseif kind == "cpus" then
        s.limits[k] = c:field(limits, k, is_posnum, "a positive number", "limits." .. k)
      else
        s.limits[k] = c:field(limits, k, is_posint, "a positive integer", "limits." .. k)
      end
    end
  end
  s.model = c:field(t, "model", function(v) return lb.is(v, lb.SCRIPT) end, "lb.script{...}")
  if s.model then c:tools(s.model, "model") end
  s.check = c:field(t, "check", is_func, "a function")
  s.claude_args = c:string_list(t, "claude_args") or {}
  s.mcp = c:mcp(t)
  s.permission_mode = c:permission_mode(t)
  s.partial = c:field(t, "partial", function(v) return type(v) == "boolean" end, "a boolean")
  s.expect_leak = c:string_list(t, "expect_leak") or {}
  for i, ch in ipairs(s.expect_leak) do
    if not CHANNEL[ch] then
      c:fail("expect_leak", string.format("field 'expect_leak[%d]' is '%s', expected 'wire', "
        .. "'transcript', 'answer', 'stderr', 'logs' or 'egress'", i, q(ch)))
    end
  end
  -- What Claude Code is expected to do when that is not a clean run.
  s.expect = c:field(t, "expect", is_table, "a table") or {}
  c:unknown(s.expect, { exit = true, is_error = true, result = true, model = true }, "expect")
  c:field(s.expect, "exit", function(v) return math.type(v) == "integer" end, "an integer", "expect.exit")
  for _, k in ipairs({ "is_error", "result", "model" }) do
    c:field(s.expect, k, function(v) return type(v) == "boolean" end, "a boolean", "expect." .. k)
  end
  return s
end

-- Does PATH (a build context, a Containerfile) lie inside the directory
-- of the subject FILE, links resolved? Raises at FIELD's line if not. A
-- path that does not exist (yet) is checked as written: no '..' may lead
-- out; that it exists is the build's business.
function Check:inside(file, path, field, line_field)
  local dir = dirname(file)
  local root = core.realpath(dir) or dir
  local real = core.realpath(path)
  local prefix = root == "/" and "/" or root .. "/"
  local ok
  if real then
    ok = real == root or real:sub(1, #prefix) == prefix
  else
    local rel = path:sub(1, #dir + 1) == dir .. "/" and path:sub(#dir + 2) or nil
    ok = rel ~= nil and not rel:match("%f[^/%z]%.%.%f[/%z]")
  end
  if not ok then
    self:fail(line_field, string.format("field '%s' is '%s'%s: it must lie inside the subject's "
      .. "directory '%s'", field, printable.line(path), real and real ~= path
      and " (resolved: '" .. printable.line(real) .. "')" or "", printable.line(dir)))
  end
end

local SUBJECT_FIELDS = {
  name = true, description = true, interceptor = true, settings = true,
  files = true, setup = true, env = true, blocks = true, control = true,
  agent = true, plugins = true, mcp = true, claude_args = true,
  permission_mode = true, model_replies = true,
}
-- interceptor.build = { context =, containerfile = }: the image is built
-- from a directory that must lie inside the subject file's own directory
-- (links resolved; '/root' or '../..' is refused with the file, line and
-- field), and so must the Containerfile. The build itself runs with
-- network access: it may reach package registries (pip, npm, apt), which
-- is how a subject installs its tools.
local INTERCEPTOR_FIELDS = {
  build = true, image = true, argv = true, upstream_env = true, ready = true,
  port = true, env = true,
}

-- A build table B ({ context =, containerfile = }) at WHERE ("agent.build",
-- "interceptor.build"): its context (relative to the subject FILE's
-- directory) and Containerfile, both inside the subject's directory.
local function build_of(c, b, file, where)
  c:unknown(b, { context = true, containerfile = true }, where)
  local ctx = c:field(b, "context", is_string, "a string", where .. ".context") or "."
  local cf = c:field(b, "containerfile", is_string, "a string", where .. ".containerfile")
    or "Containerfile"
  if ctx:sub(1, 1) ~= "/" then ctx = dirname(file) .. "/" .. ctx end
  c:inside(file, ctx, where .. ".context", "build")
  c:inside(file, ctx .. "/" .. cf, where .. ".containerfile", "build")
  return { context = ctx, containerfile = cf }
end

-- agent = { build =, user_config = }: software added to the claude
-- container, built FROM the claude image (--build-arg CLAUDE_IMAGE). The
-- context, like an interceptor's, lies inside the subject's directory.
local function agent_of(c, agent, file)
  c:unknown(agent, { build = true, user_config = true }, "agent")
  if agent.build == nil then c:fail("agent", "agent has no 'build'") end
  local b = c:field(agent, "build", is_table, "a table", "agent.build")
  local a = { build = build_of(c, b, file, "agent.build") }
  -- user_config = true: the layer ran the package's own installer, which
  -- wrote user-scope config under ~/.claude (/home/bench/.claude): each
  -- run's config dir starts from it, and Claude Code reads it
  -- (--setting-sources user,project).
  a.user_config = c:field(agent, "user_config", function(v) return type(v) == "boolean" end,
    "a boolean", "agent.user_config") or false
  return a
end

-- The interceptor table ICP of a subject, checked (INTERCEPTOR_FIELDS).
local function interceptor_of(c, icp, file)
  c:unknown(icp, INTERCEPTOR_FIELDS, "interceptor")
  if icp.argv == nil then c:fail("interceptor", "interceptor has no 'argv'") end
  c:argv(icp.argv, "interceptor.argv", "argv")
  local i = { argv = icp.argv }
  i.upstream_env = c:field(icp, "upstream_env", is_string, "a string", "interceptor.upstream_env")
    or "UPSTREAM_URL"
  i.ready = c:field(icp, "ready", is_string, "a string", "interceptor.ready") or "listening"
  i.port = c:field(icp, "port", is_posint, "a positive integer", "interceptor.port") or 8080
  i.env = icp.env and c:string_map(icp, "env") or {}
  if (icp.build == nil) == (icp.image == nil) then
    c:fail("interceptor", "interceptor needs exactly one of 'build' and 'image'")
  end
  i.image = c:field(icp, "image", is_string, "a string", "interceptor.image")
  local b = c:field(icp, "build", is_table, "a table", "interceptor.build")
  if b then i.build = build_of(c, b, file, "interceptor.build") end
  return i
end

local function validate_subject(c, t, file)
  c:unknown(t, SUBJECT_FIELDS, "subject")
  local s = {}
  s.name = c:field(t, "name", is_string, "a string") or basename(file)
  if not s.name:match("^[%w][%w_.%-]*$") or s.name == "baseline" then
    c:fail("name", string.format("field 'name' is '%s': use letters, digits, '-', '_' and '.' "
      .. "(and not 'baseline')", q(s.name)))
  end
  s.description = c:field(t, "description", is_string, "a string")
  s.settings = c:field(t, "settings", is_table, "a table") or {}
  c:settings(s.settings)
  s.files = c:files(t, "files") or {}
  s.env = c:string_map(t, "env") or {}
  c:harness_env(s.env, "env")
  s.blocks = c:string_list(t, "blocks") or {}
  -- A control (block-everything) exists to fail the tasks: its failed
  -- checks are what it shows, and a task it lets through is the failure.
  s.control = c:field(t, "control", function(v) return type(v) == "boolean" end, "a boolean") or false
  s.claude_args = c:string_list(t, "claude_args") or {}
  s.mcp = c:mcp(t)
  s.permission_mode = c:permission_mode(t)
  s.model_replies = c:model_replies(t)
  -- Plugin directories, as Claude Code sees them: in the claude container
  -- (its image or the agent layer), or staged subject files under
  -- /opt/subject. Each becomes a --plugin-dir.
  s.plugins = c:string_list(t, "plugins") or {}
  for i, p in ipairs(s.plugins) do
    if p:sub(1, 1) ~= "/" or p:match("%f[^/%z]%.%.%f[/%z]") then
      c:fail("plugins", string.format("field 'plugins[%d]' is '%s': expected an absolute path in "
        .. "the claude container (e.g. /opt/subject/%s)", i, q(p), q((p:gsub("^/*", "")))))
    end
  end
  local agent = c:field(t, "agent", is_table, "a table with 'build'")
  if agent then s.agent = agent_of(c, agent, file) end
  local icp = c:field(t, "interceptor", is_table, "a table")
  if icp then s.interceptor = interceptor_of(c, icp, file) end
  local setup = c:field(t, "setup", is_table, "a table with 'argv'")
  if setup then
    c:unknown(setup, { argv = true }, "setup")
    c:argv(setup.argv, "setup.argv", "setup")
    s.setup = { argv = setup.argv }
  end
  s.warnings = c:mode_warnings(s)
  return s
end

-- Does a hooks table (settings.hooks, or a plugin's hooks.json "hooks")
-- hold a PermissionRequest hook?
local function has_permission_hook(hooks)
  return type(hooks) == "table" and type(hooks.PermissionRequest) == "table"
    and next(hooks.PermissionRequest) ~= nil
end

-- What in subject S cannot act under its permission mode: under
-- bypassPermissions (its permission_mode, or the default) Claude Code
-- never prompts, so a PermissionRequest hook (in its settings or in a
-- plugin staged from its files) and an `ask` rule never run. Returns a
-- list of "FILE:LINE: subject 'NAME': ..." messages, empty when none.
function Check:mode_warnings(s)
  local mode = s.permission_mode or M.DEFAULT_PERMISSION_MODE
  if mode ~= "bypassPermissions" then return {} end
  local found, field = {}, nil
  if has_permission_hook(s.settings.hooks) then
    found[#found + 1], field = "its PermissionRequest hook", "settings"
  end
  local ask = type(s.settings.permissions) == "table" and s.settings.permissions.ask
  if type(ask) == "table" and next(ask) ~= nil then
    found[#found + 1], field = "its 'ask' permission rules", field or "settings"
  end
  for _, dir in ipairs(s.plugins) do
    local rel = dir:match("^/opt/subject/(.+)$")
    local f = rel and s.files[(rel:gsub("/+$", "")) .. "/hooks/hooks.json"]
    local text = lb.is(f, lb.FILE) and f.data or f
    if type(text) == "string" then
      local ok, doc = pcall(cjson.decode, text)
      if ok and type(doc) == "table" and has_permission_hook(doc.hooks) then
        found[#found + 1], field = "the PermissionRequest hook of plugin '" .. dir .. "'", field or "plugins"
      end
    end
  end
  if #found == 0 then return {} end
  local line = field_line(self.loaded.text, "permission_mode") or field_line(self.loaded.text, field)
    or self.loaded.ret_line
  return { M.mode_warning(s, self.file .. ":" .. line, found) }
end

-- The warning for subject S, whose FOUND (a list of "its PermissionRequest
-- hook", ...) cannot act under its permission mode; WHERE ("FILE:LINE")
-- starts it.
function M.mode_warning(s, where, found)
  return string.format("%s: subject '%s' runs under permission mode '%s'%s, where Claude Code never "
    .. "asks for permission: %s cannot act (set permission_mode = \"default\")", where, s.name,
    s.permission_mode or M.DEFAULT_PERMISSION_MODE, s.permission_mode and "" or " (the default)",
    table.concat(found, " and "))
end

-- The same check over the user settings an agent layer's installer wrote
-- (agent.user_config; TEXT: its settings.json): a list of warnings.
function M.user_config_warnings(s, text)
  if (s.permission_mode or M.DEFAULT_PERMISSION_MODE) ~= "bypassPermissions" then return {} end
  local ok, doc = pcall(cjson.decode, text or "")
  if not ok or type(doc) ~= "table" then return {} end
  local found = {}
  if has_permission_hook(doc.hooks) then found[#found + 1] = "the PermissionRequest hook its installer wrote" end
  local ask = type(doc.permissions) == "table" and doc.permissions.ask
  if type(ask) == "table" and next(ask) ~= nil then found[#found + 1] = "the 'ask' rules its installer wrote" end
  if #found == 0 then return {} end
  return { M.mode_warning(s, s.file, found) }
end

-- Fields only a subject has: a file that declares one of them and no
-- prompt is a subject, wherever it lives.
local SUBJECT_ONLY = { interceptor = true, agent = true, plugins = true, blocks = true,
  control = true, model_replies = true }

-- The kind of FILE by its folder alone ("subject" under a folder named
-- "subjects", else "scenario"): the guess for a file that cannot be read.
function M.kind(file)
  if ("/" .. file):match("/subjects/") then return "subject" end
  return "scenario"
end

-- The kind of the table T a file returned, by its content: a scenario
-- has a prompt; a subject declares what only subjects do (interceptor,
-- agent, plugins, blocks, control). Neither: FILE's folder decides.
function M.kind_of(t, file)
  if type(t) ~= "table" then return M.kind(file) end
  if rawget(t, "prompt") ~= nil then return "scenario" end
  for k in next, t do
    if SUBJECT_ONLY[k] then return "subject" end
  end
  return M.kind(file)
end

-- Loads FILE as KIND ("scenario" or "subject"; nil: from its content,
-- M.kind_of). Returns the validated table (with .file, .kind and
-- .name_line) or nil, "FILE:LINE: message".
function M.load(file, kind)
  local loaded, err = evaluate(file)
  if not loaded then return nil, err end
  local t = loaded.value
  kind = kind or M.kind_of(t, file)
  local c = new_check(file, loaded)
  if type(t) ~= "table" then
    return nil, string.format("%s:%d: %s file returned %s, expected a table", file,
      loaded.ret_line, kind, type_name(t))
  end
  local ok, v = pcall(kind == "subject" and validate_subject or validate_scenario, c, t, file)
  if not ok then
    if type(v) == "table" and v.lb_check then return nil, v.msg end
    return nil, file .. ": " .. tostring(v)
  end
  v.file, v.kind = file, kind
  -- where the name comes from: its field, else the file (line 1)
  v.name_line = t.name ~= nil and (field_line(loaded.text, "name") or loaded.ret_line) or 1
  v.blocks_line = kind == "subject" and (field_line(loaded.text, "blocks") or loaded.ret_line) or nil
  return v
end

-- Names are unique in a plan: run folders and matrix cells are named by
-- them, on file systems that may fold case. ITEMS: { name=, file=, line= }
-- (one KIND, "scenario" or "subject"). Returns a list of messages, one per
-- name given by more than one file, naming every file with its line.
function M.duplicates(items, kind)
  local by, order = {}, {}
  for _, it in ipairs(items) do
    local key = tostring(it.name):lower()
    if not by[key] then by[key] = {} order[#order + 1] = key end
    table.insert(by[key], it)
  end
  local out = {}
  for _, key in ipairs(order) do
    local list = by[key]
    if #list > 1 then
      local where = {}
      for i = 2, #list do
        where[#where + 1] = string.format("%s:%d ('%s')", list[i].file, list[i].line or 1, list[i].name)
      end
      out[#out + 1] = string.format("%s:%d: %s name '%s' is also given by %s: names must be unique, "
        .. "case aside (run folders are named by them)", list[1].file, list[1].line or 1, kind,
        list[1].name, table.concat(where, ", "))
    end
  end
  return out
end

-- Every .lua file under PATHS (files or directories, recursively, sorted;
-- lib/ folders and hidden entries skipped). Returns the list, and a list
-- of error messages for paths that do not exist.
function M.find(paths, listdir)
  local out, errs = {}, {}
  local function walk(p, top)
    local entries = listdir(p)
    if entries == nil then
      if top then
        if core.realpath(p) then
          out[#out + 1] = p
        else
          errs[#errs + 1] = p .. ": no such file or directory"
        end
      elseif p:match("%.lua$") then
        out[#out + 1] = p
      end
      return
    end
    table.sort(entries)
    for _, e in ipairs(entries) do
      if e:sub(1, 1) ~= "." and e ~= "lib" then
        local child = (p:sub(-1) == "/" and p or p .. "/") .. e
        if listdir(child) ~= nil then walk(child, false)
        elseif e:match("%.lua$") then out[#out + 1] = child end
      end
    end
  end
  for _, p in ipairs(paths) do walk(p, true) end
  return out, errs
end

-- The fields a scenario and a subject may have (docs/api.md describes
-- each; spec/lua/api_doc_spec.lua holds it to that).
M.SCENARIO_FIELDS, M.SUBJECT_FIELDS = SCENARIO_FIELDS, SUBJECT_FIELDS

return M
