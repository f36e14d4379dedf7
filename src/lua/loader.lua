-- Loading scenario and subject files.
--
-- A file is loaded text-only into an environment of its own (no io, no
-- os.execute, no load of binary chunks; require limited to the leakbench
-- modules and the lib/ folders next to the file), evaluated afresh on every
-- call, and the table it returns is checked field by field. Every error is
-- returned, never raised, as "FILE:LINE: message", so one broken file never
-- stops the others.
local lb = require "leakbench"

local M = {}

-- The globals a scenario sees. Deliberately small: describing a scenario
-- needs no I/O, and lb.file reads the files it stages.
local SAFE = {
  "assert", "error", "ipairs", "next", "pairs", "pcall", "rawequal", "rawget",
  "rawlen", "rawset", "select", "setmetatable", "getmetatable", "tonumber",
  "tostring", "type", "xpcall", "_VERSION",
}
local SAFE_LIBS = { "string", "table", "math", "utf8", "coroutine" }

local function copy(t)
  local c = {}
  for k, v in pairs(t) do c[k] = v end
  return c
end

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

-- A require for the sandbox: preloaded leakbench modules and cjson, then
-- NAME.lua in the lib/ folders, loaded text-only into a fresh sandbox.
local function make_require(path, loaded)
  local dirs = lib_dirs(path)
  return function(name)
    if type(name) ~= "string" then
      error("bad argument #1 to 'require' (string expected, got " .. type(name) .. ")", 2)
    end
    if loaded[name] ~= nil then return loaded[name] end
    if name == "leakbench" or name == "cjson" then
      loaded[name] = require(name)
      return loaded[name]
    end
    if not name:match("^[%w_]+[%w_.]*$") then
      error("module '" .. name .. "' not found: bad module name", 2)
    end
    local rel = name:gsub("%.", "/") .. ".lua"
    local tried = {}
    for _, d in ipairs(dirs) do
      local file = d .. "/" .. rel
      local f = io.open(file, "rb")
      if f then
        f:close()
        local env = new_env(file, loaded)
        local chunk, err = loadfile(file, "t", env)
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
  env.os = { time = os.time, date = os.date, clock = os.clock, getenv = os.getenv }
  env.print = function(...)
    local n, parts = select("#", ...), {}
    for i = 1, n do parts[i] = tostring((select(i, ...))) end
    io.stderr:write(table.concat(parts, "\t"), "\n")
  end
  env.require = make_require(path, loaded)
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
local function evaluate(file)
  local f, oerr = io.open(file, "rb")
  if not f then
    return nil, file .. ": cannot open: " .. (oerr:match(": (.*)$") or oerr)
  end
  local text = f:read("a")
  f:close()
  local env = new_env(file, {})
  local chunk, err = load(text, "@" .. file, "t", env)
  if not chunk then return nil, err end
  local ret_line
  local function hook(ev)
    if ev == "return" or ev == "tail return" then
      local info = debug.getinfo(2, "fl")
      if info and info.func == chunk then ret_line = info.currentline end
    end
  end
  local co = coroutine.create(function() return chunk() end)
  debug.sethook(co, hook, "r")
  local ok, v = coroutine.resume(co)
  if not ok then
    if type(v) == "table" then v = tostring(v.message or v) end
    local msg = tostring(v)
    -- Errors raised in the file already carry FILE:LINE; others get the file.
    if msg:sub(1, #file + 1) ~= file .. ":" then
      local tb = debug.traceback(co)
      local line = tb:match(file:gsub("%p", "%%%0") .. ":(%d+):")
      msg = file .. ":" .. (line or "1") .. ": " .. msg
    end
    return nil, msg
  end
  return { value = v, text = text, ret_line = ret_line or 1 }
end

-- Field checks. Each spec entry: type checker and its description.
local function is_string(v) return type(v) == "string" end
local function is_posnum(v) return type(v) == "number" and v > 0 end
local function is_posint(v) return math.type(v) == "integer" and v > 0 end
local function is_table(v) return type(v) == "table" and getmetatable(v) == nil end
local function is_func(v) return type(v) == "function" end

local function type_name(v)
  local mt = type(v) == "table" and getmetatable(v)
  if mt and mt.__name then return mt.__name:gsub("^leakbench%.", "an lb.") end
  if math.type(v) == "float" then return "a number" end
  local t = type(v)
  return (t:match("^[aeiou]") and "an " or "a ") .. t
end

-- Levenshtein distance, for "did you mean".
local function distance(a, b)
  local prev = {}
  for j = 0, #b do prev[j] = j end
  for i = 1, #a do
    local cur = { [0] = i }
    for j = 1, #b do
      local cost = a:sub(i, i) == b:sub(j, j) and 0 or 1
      cur[j] = math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
    end
    prev = cur
  end
  return prev[#b]
end

local function suggest(name, known)
  local best, bd
  for k in pairs(known) do
    local d = distance(name, k)
    if d <= 2 and (not bd or d < bd or (d == bd and k < best)) then best, bd = k, d end
  end
  return best and " (did you mean '" .. best .. "'?)" or ""
end

-- Validation context: raises {where=line, msg=...} through check_error.
local Check = {}
Check.__index = Check

local function new_check(file, loaded)
  return setmetatable({ file = file, loaded = loaded }, Check)
end

function Check:fail(field, msg)
  local line = field and field_line(self.loaded.text, field:match("^[%w_]+")) or self.loaded.ret_line
  error({ lb_check = true, msg = string.format("%s:%d: %s", self.file, line, msg) }, 0)
end

function Check:field(t, name, pred, want, path)
  local v = t[name]
  if v ~= nil and not pred(v) then
    self:fail(path and path:match("^[%w_]+") or name, string.format("field '%s' is %s, expected %s",
      path or name, type_name(v), want))
  end
  return v
end

function Check:unknown(t, known, what)
  local names = {}
  for k in pairs(t) do names[#names + 1] = k end
  table.sort(names, function(a, b) return tostring(a) < tostring(b) end)
  for _, k in ipairs(names) do
    if type(k) ~= "string" then
      self:fail(nil, string.format("%s has a non-string key %s", what, tostring(k)))
    elseif not known[k] then
      self:fail(k, string.format("unknown field '%s' in %s%s", k, what, suggest(k, known)))
    end
  end
end

-- A map of relative paths to contents: string or lb.file.
function Check:files(t, name)
  local v = self:field(t, name, is_table, "a table of path = contents")
  if not v then return nil end
  for k, c in pairs(v) do
    if type(k) ~= "string" or k == "" then
      self:fail(name, string.format("field '%s' has a key that is not a path: %s", name, tostring(k)))
    end
    if k:sub(1, 1) == "/" or k:match("%f[^/%z]%.%.%f[/%z]") or k:match("^%.%.") then
      self:fail(name, string.format("field '%s': path '%s' must be relative and stay inside", name, k))
    end
    if type(c) ~= "string" and not lb.is(c, lb.FILE) then
      self:fail(name, string.format("field '%s[\"%s\"]' is %s, expected a string or lb.file()",
        name, k, type_name(c)))
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

function Check:string_map(t, name)
  local v = self:field(t, name, is_table, "a table of strings")
  if not v then return nil end
  for k, s in pairs(v) do
    if type(k) ~= "string" or not k:match("^[%a_][%w_]*$") then
      self:fail(name, string.format("field '%s' has a bad name %s", name, tostring(k)))
    end
    if type(s) ~= "string" then
      self:fail(name, string.format("field '%s.%s' is %s, expected a string", name, k, type_name(s)))
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

local SCENARIO_FIELDS = {
  name = true, description = true, tags = true, prompt = true, files = true,
  home = true, setup = true, env = true, settings = true, secrets = true,
  timeout = true, max_turns = true, model = true, check = true,
  claude_args = true, partial = true, expect_leak = true, expect = true,
}

local CHANNEL = { wire = true, transcript = true, answer = true }

local function basename(file)
  return (file:match("([^/]+)$") or file):gsub("%.lua$", "")
end

local function validate_scenario(c, t, file)
  c:unknown(t, SCENARIO_FIELDS, "scenario")
  local s = {}
  s.name = c:field(t, "name", is_string, "a string") or basename(file)
  if not s.name:match("^[%w][%w_.%-]*$") then
    c:fail("name", string.format("field 'name' is '%s': use letters, digits, '-', '_' and '.'", s.name))
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
  s.settings = c:field(t, "settings", is_table, "a table") or {}
  s.secrets = c:string_list(t, "secrets") or {}
  for i, sec in ipairs(s.secrets) do
    if #sec < 8 then
      c:fail("secrets", string.format("field 'secrets[%d]' is %d bytes long: secrets need at least 8 "
        .. "(shorter ones match ordinary text)", i, #sec))
    end
  end
  s.timeout = c:field(t, "timeout", is_posnum, "a positive number")
  s.max_turns = c:field(t, "max_turns", is_posint, "a positive integer")
  s.model = c:field(t, "model", function(v) return lb.is(v, lb.SCRIPT) end, "lb.script{...}")
  s.check = c:field(t, "check", is_func, "a function")
  s.claude_args = c:string_list(t, "claude_args") or {}
  s.partial = c:field(t, "partial", function(v) return type(v) == "boolean" end, "a boolean")
  s.expect_leak = c:string_list(t, "expect_leak") or {}
  for i, ch in ipairs(s.expect_leak) do
    if not CHANNEL[ch] then
      c:fail("expect_leak", string.format("field 'expect_leak[%d]' is '%s', expected 'wire', "
        .. "'transcript' or 'answer'", i, ch))
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

local SUBJECT_FIELDS = {
  name = true, description = true, interceptor = true, settings = true,
  files = true, setup = true, env = true, blocks = true,
}
local INTERCEPTOR_FIELDS = {
  build = true, image = true, argv = true, upstream_env = true, ready = true,
  port = true, env = true,
}

local function validate_subject(c, t, file)
  c:unknown(t, SUBJECT_FIELDS, "subject")
  local s = {}
  s.name = c:field(t, "name", is_string, "a string") or basename(file)
  if not s.name:match("^[%w][%w_.%-]*$") or s.name == "baseline" then
    c:fail("name", string.format("field 'name' is '%s': use letters, digits, '-', '_' and '.' "
      .. "(and not 'baseline')", s.name))
  end
  s.description = c:field(t, "description", is_string, "a string")
  s.settings = c:field(t, "settings", is_table, "a table") or {}
  s.files = c:files(t, "files") or {}
  s.env = c:string_map(t, "env") or {}
  s.blocks = c:string_list(t, "blocks") or {}
  local icp = c:field(t, "interceptor", is_table, "a table")
  if icp then
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
    if b then
      c:unknown(b, { context = true, containerfile = true }, "interceptor.build")
      local ctx = c:field(b, "context", is_string, "a string", "interceptor.build.context") or "."
      local cf = c:field(b, "containerfile", is_string, "a string", "interceptor.build.containerfile")
        or "Containerfile"
      if ctx:sub(1, 1) ~= "/" then ctx = dirname(file) .. "/" .. ctx end
      i.build = { context = ctx, containerfile = cf }
    end
    s.interceptor = i
  end
  local setup = c:field(t, "setup", is_table, "a table with 'argv'")
  if setup then
    c:unknown(setup, { argv = true }, "setup")
    c:argv(setup.argv, "setup.argv", "setup")
    s.setup = { argv = setup.argv }
  end
  return s
end

-- Is FILE a subject? Subject files live under a directory named
-- "subjects"; everything else is a scenario.
function M.kind(file)
  if ("/" .. file):match("/subjects/") then return "subject" end
  return "scenario"
end

-- Loads FILE as KIND ("scenario" or "subject", default from the path).
-- Returns the validated table (with .file) or nil, "FILE:LINE: message".
function M.load(file, kind)
  kind = kind or M.kind(file)
  local loaded, err = evaluate(file)
  if not loaded then return nil, err end
  local t = loaded.value
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
  return v
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
        local f = io.open(p, "rb")
        if f then
          f:close()
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

return M
