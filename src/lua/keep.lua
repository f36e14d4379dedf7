-- A run's kept secrets: DIR/secrets.json, mode 0600, written by the run
-- (runone.lua) and read back by rescore and the HTML report, never copied
-- into a result, a report or a log.
--
-- It holds the canaries the scenario made when it was loaded, in the order
-- it made them (lb.canary calls), the secrets it declared, and a
-- fingerprint of what the run did with them (the prompt, the scripted
-- model, the files staged, setup and env). A rescore loads the scenario
-- again with lb.canary answering the stored canaries in order, so it binds
-- the secrets of that run; the fingerprint says whether the scenario still
-- describes the run the evidence came from.
--
-- mask() is how the report shows text that may hold a secret: every span
-- the detector finds (in any form) becomes «secret:HASH», and text that
-- still holds one afterwards is withheld whole.
local lb = require "leakbench"
local core = require "leakbench.core"
local cjson = require "cjson"
local json = require "leakbench.json"

local M = {}

M.FILE = "secrets.json"
M.MODE = 384 -- 0600
M.SCHEMA = "leakbench.secrets/1"

-- Runs fn(...) with lb.canary recording what it returns. Returns the list
-- of { prefix =, value = } in call order, then fn's results.
function M.recording(fn, ...)
  local list = {}
  local old = lb._canaries(function(prefix)
    local v = core.canary(prefix)
    list[#list + 1] = { prefix = prefix, value = v }
    return v
  end)
  local res = table.pack(pcall(fn, ...))
  lb._canaries(old)
  if not res[1] then error(res[2], 0) end
  return list, table.unpack(res, 2, res.n)
end

-- Runs fn(...) with lb.canary answering the canaries of LIST in order: a
-- call with another prefix, or more calls than LIST holds, raises at the
-- scenario's line. Returns problem (nil, or why the canaries did not
-- match: fewer calls than stored), then fn's results.
function M.replaying(list, fn, ...)
  local i = 0
  local old = lb._canaries(function(prefix)
    i = i + 1
    local c = list[i]
    if not c then
      error(string.format("lb.canary call %d: the run made only %d canar%s (the scenario "
        .. "changed since the run)", i, #list, #list == 1 and "y" or "ies"), 3)
    end
    if c.prefix ~= prefix then
      error(string.format("lb.canary call %d has prefix %s, the run's had %s (the scenario "
        .. "changed since the run)", i, prefix and ("'" .. prefix .. "'") or "none",
        c.prefix and ("'" .. c.prefix .. "'") or "none"), 3)
    end
    return c.value
  end)
  local res = table.pack(pcall(fn, ...))
  lb._canaries(old)
  if not res[1] then error(res[2], 0) end
  local problem
  if i < #list then
    problem = string.format("the scenario made %d canar%s, the run made %d", i, i == 1 and "y" or "ies", #list)
  end
  return problem, table.unpack(res, 2, res.n)
end

-- V as canonical text: tables with sorted keys, lb's marks by content, so
-- equal values give equal text in any process (Lua's table order is not
-- stable across processes).
local function canon(v, out, depth)
  out = out or {}
  depth = depth or 0
  local t = type(v)
  if depth > 50 then out[#out + 1] = "<deep>"
  elseif t == "table" and lb.kind(v) == lb.FILE then
    -- an lb.file by content: where it was read from is not the run's
    canon({ data = rawget(v, "data"), mode = rawget(v, "mode") }, out, depth + 1)
  elseif t == "table" then
    local keys = {}
    for k in next, v do keys[#keys + 1] = k end
    table.sort(keys, function(a, b)
      if type(a) ~= type(b) then return type(a) < type(b) end
      if type(a) == "number" or type(a) == "string" then return a < b end
      return tostring(a) < tostring(b)
    end)
    out[#out + 1] = "{"
    for _, k in ipairs(keys) do
      canon(k, out, depth + 1)
      out[#out + 1] = "="
      canon(rawget(v, k), out, depth + 1)
      out[#out + 1] = ";"
    end
    out[#out + 1] = "}"
  elseif t == "string" then
    out[#out + 1] = string.format("%q", v)
  elseif t == "number" or t == "boolean" or t == "nil" then
    out[#out + 1] = tostring(v)
  else
    out[#out + 1] = "<" .. t .. ">"
  end
  return out
end
M.canon = function(v) return table.concat(canon(v)) end

-- What a rescore may not change, each as a hash: the parts of SCENARIO
-- that make the run (not the checks, expect_leak, expect, tags, timeout).
M.FINGERPRINT = { "prompt", "model", "files", "home", "setup", "env", "settings",
  "claude_args", "max_turns" }

local WHAT = { prompt = "the prompt", model = "the scripted model (lb.script)",
  files = "the project files", home = "the home files", setup = "setup",
  env = "env", settings = "settings", claude_args = "claude_args", max_turns = "max_turns" }

function M.fingerprint(scenario)
  local fp = {}
  for _, k in ipairs(M.FINGERPRINT) do
    fp[k] = core.sha256(M.canon(scenario[k])):sub(1, 16)
  end
  return fp
end

-- The parts of SCENARIO whose fingerprint differs from FP, as words
-- ("the prompt", ...); empty when none.
function M.changed(scenario, fp)
  local now, out = M.fingerprint(scenario), {}
  for _, k in ipairs(M.FINGERPRINT) do
    if type(fp) ~= "table" or fp[k] ~= now[k] then out[#out + 1] = WHAT[k] end
  end
  return out
end

-- Writes DIR/secrets.json for SCENARIO loaded with CANARIES (from
-- recording). Returns true or nil, err.
function M.save(dir, scenario, canaries)
  local list = {}
  for i, c in ipairs(canaries) do list[i] = { prefix = c.prefix, value = c.value } end
  local doc = {
    schema = M.SCHEMA, scenario = scenario.name, file = scenario.file,
    canaries = json.array(list),
    secrets = json.array(table.move(scenario.secrets or {}, 1, #(scenario.secrets or {}), 1, {})),
    fingerprint = M.fingerprint(scenario),
  }
  return core.write_file(dir .. "/" .. M.FILE, json.encode(doc) .. "\n", M.MODE)
end

-- DIR/secrets.json as a table { canaries = { {prefix=, value=} }, secrets
-- = { ... }, fingerprint = { ... } }, or nil, why.
function M.load(dir)
  local path = dir .. "/" .. M.FILE
  local text, err = core.read_file(path)
  if not text then return nil, string.format("cannot read '%s': %s", path, tostring(err)) end
  local ok, doc = pcall(cjson.decode, text)
  if not ok or type(doc) ~= "table" or doc.schema ~= M.SCHEMA or type(doc.canaries) ~= "table"
      or type(doc.secrets) ~= "table" then
    return nil, string.format("'%s' is not a leakbench secrets file", path)
  end
  for _, c in ipairs(doc.canaries) do
    if type(c.value) ~= "string" or (c.prefix ~= nil and type(c.prefix) ~= "string") then
      return nil, string.format("'%s' is not a leakbench secrets file", path)
    end
  end
  for _, s in ipairs(doc.secrets) do
    if type(s) ~= "string" then return nil, string.format("'%s' is not a leakbench secrets file", path) end
  end
  return doc
end

-- The secrets of SECRETS long enough to scan for (the detector's minimum).
local function scannable(secrets)
  local out = {}
  for _, s in ipairs(secrets or {}) do
    if type(s) == "string" and #s >= 8 then out[#out + 1] = s end
  end
  return out
end

-- The scanner mask() compiled last, and the secrets it is over: a run
-- masks many strings with the same secrets (each check's message, the
-- prompt, a subject's fields), and compiling one costs more than most
-- scans (a secret's forms and triggers: 1.5 ms).
local last = { key = nil, sc = nil }

local function scanner_for(secrets)
  local key = table.concat(secrets, "\0")
  if last.key ~= key then
    if last.sc then last.sc:close() end
    last.key, last.sc = nil, nil
    last.sc = core.scanner(secrets)
    last.key = key
  end
  return last.sc
end

-- TEXT with every span the detector finds for SECRETS replaced by
-- «secret:HASH», or, when a secret is still found after that (a form
-- whose span covers other text), a note that it was withheld. SCANNER:
-- an open core.scanner over SECRETS, to share across calls (optional).
-- Returns the text and whether anything was masked.
function M.mask(text, secrets, scanner)
  if type(text) ~= "string" or text == "" then return text, false end
  secrets = scannable(secrets)
  if #secrets == 0 then return text, false end
  local sc = scanner or scanner_for(secrets)
  local found = sc:scan(text)
  if #found == 0 then return text, false end
  table.sort(found, function(a, b) return a.offset < b.offset end)
  local out, pos = {}, 0
  for _, f in ipairs(found) do
    if f.offset >= pos then
      out[#out + 1] = text:sub(pos + 1, f.offset)
      out[#out + 1] = "«secret:" .. core.secret_hash(secrets[f.secret]) .. "»"
      pos = f.offset + f.length
    elseif f.offset + f.length > pos then
      pos = f.offset + f.length
    end
  end
  out[#out + 1] = text:sub(pos + 1)
  local masked = table.concat(out)
  if #sc:scan(masked) > 0 then
    local hashes = {}
    for _, f in ipairs(found) do hashes[#hashes + 1] = core.secret_hash(secrets[f.secret]) end
    masked = "[withheld: holds secret «secret:" .. hashes[1] .. "» in a form that cannot be cut out]"
  end
  return masked, true
end

return M
