-- Running the built binaries from end-to-end specs: argv in, stdout, stderr
-- and exit status out. Arguments are quoted for sh; nothing is interpolated.
local M = {}

function M.quote(s)
  return "'" .. tostring(s):gsub("'", "'\\''") .. "'"
end

-- run(argv[, opts]) -> { stdout=, stderr=, status= }. opts.cwd, opts.env
-- (table of extra variables), opts.stdin (string).
function M.run(argv, opts)
  opts = opts or {}
  local out, err, inp = os.tmpname(), os.tmpname(), os.tmpname()
  local f = assert(io.open(inp, "wb"))
  f:write(opts.stdin or "")
  f:close()
  local parts = {}
  if opts.cwd then parts[#parts + 1] = "cd " .. M.quote(opts.cwd) .. " &&" end
  if opts.env then
    parts[#parts + 1] = "env"
    for k, v in pairs(opts.env) do parts[#parts + 1] = M.quote(k .. "=" .. v) end
  end
  for _, a in ipairs(argv) do parts[#parts + 1] = M.quote(a) end
  local cmd = table.concat(parts, " ") .. " <" .. inp .. " >" .. out .. " 2>" .. err
  local _, _, code = os.execute(cmd)
  local function slurp(p)
    local h = assert(io.open(p, "rb"))
    local s = h:read("a")
    h:close()
    os.remove(p)
    return s
  end
  os.remove(inp)
  return { stdout = slurp(out), stderr = slurp(err), status = code }
end

-- A fresh directory under $TMPDIR; the caller removes it.
function M.tmpdir()
  local p = os.tmpname()
  os.remove(p)
  assert(os.execute("mkdir -p " .. M.quote(p)))
  return p
end

-- The contents of PATH, or nil when it cannot be read.
function M.read(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local s = f:read("a")
  f:close()
  return s
end

-- Writes TEXT to PATH (raises when it cannot).
function M.write(path, text)
  local f = assert(io.open(path, "wb"))
  f:write(text)
  f:close()
end

-- Removes PATH and everything under it; nil and false are ignored. PATH is
-- quoted: a teardown never hands the shell a word to split or glob.
function M.rmtree(path)
  if path then os.execute("rm -rf -- " .. M.quote(path)) end
end

-- retry(seconds, fn) -> fn()'s first true value, polling every 50 ms; after
-- SECONDS, the value of one last call (nil or false when it never held).
-- The specs' one way to wait (STYLE rule 21): never a bare sleep.
function M.retry(seconds, fn)
  local deadline = os.time() + seconds
  repeat
    local v = fn()
    if v then return v end
    os.execute("sleep 0.05")
  until os.time() > deadline
  return fn()
end

-- V, or an error with MSG (busted's assert does not hand values on).
function M.must(v, msg)
  if v == nil then error(msg or "missing value", 2) end
  return v
end

function M.leakbench(args, opts)
  local bin = os.getenv("LEAKBENCH") or error("LEAKBENCH is not set (run through spec/run)")
  local argv = { bin }
  for _, a in ipairs(args) do argv[#argv + 1] = a end
  return M.run(argv, opts)
end

return M
