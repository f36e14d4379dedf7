-- The "leakbench scan" verb: the run's leak detector on any files, to audit
-- another tool's logs or artifacts.
--
--   leakbench scan --secret S [--secret S ...] [--secrets-file F]
--                  [--partial] [--partial-min N] [--json] FILE|DIR|- ...
--   leakbench scan --forms
--
-- main(args) takes the arguments after the verb and returns the exit
-- status: 1 when anything was found (a finding always wins), 2 on a usage
-- error or an unreadable file, 0 otherwise. One line per finding on
-- stdout, offsets in bytes from 0 (as grep -b):
--
--   FILE:OFFSET: secret 3fa1b2c4 (sk…40) form base64@1: …masked context…
--
-- With --json, one JSON object per finding and line: file, offset,
-- length, secret (the hash), masked, form, snippet (and fragment with
-- --partial). Secrets are never printed: a short hash, a mask, a masked
-- snippet.
local core = require "leakbench.core"
local cjson = require "cjson"

local M = {}

local CONTEXT = 24

M.USAGE = [[
usage: leakbench scan --secret S [--secret S ...] [--secrets-file F]
                      [--partial] [--partial-min N] [--json] FILE|DIR|- ...
       leakbench scan --forms

Finds the secrets in the files, in every form a reader could undo: raw,
JSON-escaped, base64/base32/base85/Ascii85/z85/uuencode at any alignment
(wrapped too), hex in any dump layout (od, xxd, hexdump), byte lists,
escapes, percent encoding, reversed, case-changed, a separator between
characters, HTML, quoted-printable, rot13, UTF-16, and any of those inside
gzip, zlib, bzip2, xz, zip or tar, inside base64 or hex. Directories are
scanned recursively; - is standard input.

  --forms           list the form families and exit

  --secret S        a secret to look for (8 bytes or more); repeatable.
                    Command lines are visible to other users: prefer
  --secrets-file F  one secret per line (empty lines ignored)
  --partial         also report the longest raw fragment of each secret
                    (masked redactions that keep a prefix and suffix)
  --partial-min N   the shortest fragment reported (default: half the
                    secret, at least 8 bytes)
  --json            JSON lines: one object per finding

Exit status: 1 something was found, 2 usage error or unreadable file,
0 nothing found.
]]

local function usage_error(err, msg)
  err:write("leakbench scan: ", msg, "\n")
  return 2
end

-- Parses args. Returns an options table, or nil and a message.
local function parse(args)
  local o = { secrets = {}, files = {}, partial = false, json = false }
  local i, flags = 1, true
  local function value(name)
    i = i + 1
    if args[i] == nil then return nil, name .. " needs a value" end
    return args[i]
  end
  while i <= #args do
    local a = args[i]
    local name, inline = nil, nil
    if flags and a:sub(1, 2) == "--" and a:find("=", 3, true) then
      name, inline = a:match("^(%-%-[^=]+)=(.*)$")
    end
    name = name or a
    local v, e
    if not flags or name == "-" or name:sub(1, 1) ~= "-" then
      o.files[#o.files + 1] = a
    elseif name == "--" then
      flags = false
    elseif name == "--secret" then
      v = inline
      if v == nil then v, e = value("--secret") end
      if not v then return nil, e end
      o.secrets[#o.secrets + 1] = { value = v, from = "--secret" }
    elseif name == "--secrets-file" then
      v = inline
      if v == nil then v, e = value("--secrets-file") end
      if not v then return nil, e end
      local f, ferr = io.open(v, "rb")
      if not f then
        return nil, "--secrets-file: cannot read '" .. v .. "': " ..
          tostring(ferr):gsub("^[^:]*: ", "")
      end
      local text = f:read("a")
      f:close()
      local n = 0
      for line in text:gmatch("([^\n]*)\n?") do
        n = n + 1
        line = line:gsub("\r$", "")
        if line ~= "" then
          o.secrets[#o.secrets + 1] = { value = line,
            from = ("--secrets-file %s line %d"):format(v, n) }
        end
      end
    elseif name == "--partial" and inline == nil then
      o.partial = true
    elseif name == "--partial-min" then
      v = inline
      if v == nil then v, e = value("--partial-min") end
      if not v then return nil, e end
      local n = math.tointeger(tonumber(v))
      if not n or n < 4 then
        return nil, "--partial-min: '" .. v .. "' is not an integer of 4 or more"
      end
      o.partial, o.partial_min = true, n
    elseif name == "--json" and inline == nil then
      o.json = true
    elseif name == "--forms" and inline == nil then
      o.forms = true
    elseif name == "--help" or name == "-h" then
      o.help = true
    else
      return nil, "unknown option '" .. name .. "' (try 'leakbench scan --help')"
    end
    i = i + 1
  end
  if o.help or o.forms then return o end
  if #o.secrets == 0 then
    return nil, "no secret given: use --secret S or --secrets-file F"
  end
  if #o.files == 0 then return nil, "no file given" end
  for _, s in ipairs(o.secrets) do
    if #s.value < 8 then
      return nil, ("%s: secret %s is %d bytes long, shorter than the " ..
        "minimum of 8"):format(s.from, core.secret_mask(s.value), #s.value)
    end
  end
  return o
end

-- Expands directories (recursively, sorted) into their files. Returns a
-- list of { path =, stdin = }.
local function expand(files)
  local out = {}
  for _, f in ipairs(files) do
    local list = f ~= "-" and core.files_under(f)
    if f == "-" then
      out[#out + 1] = { path = "-", stdin = true }
    elseif list then
      for _, rel in ipairs(list) do
        out[#out + 1] = { path = f:gsub("/+$", "") .. "/" .. rel }
      end
    else
      out[#out + 1] = { path = f }
    end
  end
  return out
end

-- The message of io.open, in the house style.
local function read_error(path, msg)
  msg = tostring(msg)
  if msg:sub(1, #path + 2) == path .. ": " then msg = msg:sub(#path + 3) end
  return ("cannot read '%s': %s"):format(path, msg)
end

local function read_all(path)
  local f, err = io.open(path, "rb")
  if not f then return nil, read_error(path, err) end
  local text, rerr = f:read("a")
  f:close()
  if not text then return nil, read_error(path, rerr) end
  return text
end

-- One scanner over the distinct secrets of O: { sc, secrets, min_for,
-- hash, mask }, or nil and the scanner's error.
local function make_scanner(o)
  local secrets, index = {}, {}
  for _, s in ipairs(o.secrets) do
    if not index[s.value] then
      secrets[#secrets + 1] = s.value
      index[s.value] = #secrets
    end
  end
  local min_for = {}
  local pmin = math.huge
  for i, s in ipairs(secrets) do
    min_for[i] = o.partial_min or math.max(8, #s // 2)
    pmin = math.min(pmin, min_for[i])
  end
  local ok, sc = pcall(core.scanner, secrets,
    o.partial and { partial = true, partial_min = pmin } or nil)
  if not ok then return nil, tostring(sc) end
  local hash, mask = {}, {}
  for i = 1, #secrets do
    hash[i], mask[i] = sc:hash(i), sc:mask(i)
  end
  return { sc = sc, secrets = secrets, min_for = min_for, hash = hash, mask = mask }
end

-- The findings of one FILE: the list, its text (with --partial or from
-- standard input), or nil and the read error.
local function scan_one(S, o, file)
  local list, text, rerr
  if file.stdin then
    text = io.stdin:read("a") or ""
    list = S.sc:scan(text, CONTEXT)
  elseif o.partial then
    text, rerr = read_all(file.path)
    if text then list = S.sc:scan(text, CONTEXT) end
  else
    list, rerr = S.sc:scan_file(file.path, CONTEXT)
  end
  return list, text, rerr
end

-- Says or keeps (--json: in RESULTS) the findings of LIST in the file
-- NAME, then, with --partial, the fragments of a secret that is not there
-- whole. The number of findings.
local function report_one(S, o, out, name, list, text, results)
  local found = 0
  for _, f in ipairs(list) do
    found = found + 1
    local r = { file = name, offset = f.offset, length = f.length,
      secret = S.hash[f.secret], masked = S.mask[f.secret], form = f.form,
      snippet = f.snippet }
    if o.json then
      results[#results + 1] = r
    else
      out:write(("%s:%d: secret %s (%s) form %s: %s\n"):format(name,
        f.offset, r.secret, r.masked, f.form, f.snippet))
    end
  end
  if not o.partial then return found end
  local whole = {}
  for _, f in ipairs(list) do
    if f.form == "raw" then whole[f.secret] = true end
  end
  for i, p in ipairs(S.sc:partial(text)) do
    if p and not whole[i] and p.length >= S.min_for[i] then
      found = found + 1
      local r = { file = name, offset = p.offset, length = p.length,
        secret = S.hash[i], masked = S.mask[i], form = "fragment",
        fragment = { length = p.length, secret_offset = p.secret_offset,
          secret_length = #S.secrets[i] } }
      if o.json then
        results[#results + 1] = r
      else
        out:write(("%s:%d: secret %s (%s) fragment of %d/%d bytes " ..
          "(from byte %d of the secret)\n"):format(name, p.offset,
          r.secret, r.masked, p.length, #S.secrets[i], p.secret_offset))
      end
    end
  end
  return found
end

--- M.main(args, [out], [err]) -> exit status of "leakbench scan": 1 when
--- a secret was found, 2 on misuse or a file that could not be read, 0.
function M.main(args, out, err)
  out = out or io.stdout
  err = err or io.stderr
  local o, msg = parse(args or {})
  if not o then return usage_error(err, msg) end
  if o.help then
    out:write(M.USAGE)
    return 0
  end
  if o.forms then
    for _, f in ipairs(core.scan_forms()) do out:write(f, "\n") end
    return 0
  end
  local S, serr = make_scanner(o)
  if not S then return usage_error(err, serr) end
  local found, errors, results = 0, 0, {}
  for _, file in ipairs(expand(o.files)) do
    local list, text, rerr = scan_one(S, o, file)
    if not list then
      errors = errors + 1
      err:write("leakbench scan: ", rerr, "\n")
    else
      local name = file.stdin and "(standard input)" or file.path
      found = found + report_one(S, o, out, name, list, text, results)
    end
  end
  S.sc:close()
  if o.json then
    for _, r in ipairs(results) do out:write(cjson.encode(r), "\n") end
  end
  if found > 0 then return 1 end
  if errors > 0 then return 2 end
  return 0
end

return M
