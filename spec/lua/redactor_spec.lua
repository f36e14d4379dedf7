-- The redactor subject without containers: its own Python tests (an HTTP
-- round trip on loopback through a recording upstream: raw, base64 at
-- every offset, hex, percent, JSON-escaped secrets removed, JSON kept
-- valid, SSE unbuffered), then its claims against the suite's scenarios:
-- for each scenario the redactor says it blocks, a body carrying the
-- scenario's secrets raw, in base64 at every offset (wrapped) and in hex
-- comes out with none of them; for the others, whose secrets live outside
-- the project, the redactor does not know them.
package.path = "spec/e2e/support/?.lua;" .. package.path
local sh = require "sh"
local cjson = require "cjson"
local core = require "leakbench.core"
local lb = require "leakbench"
local loader = require "leakbench.loader"

local REDACTOR = "subjects/redactor/redactor.py"
local PY = { "python3", "-B" }   -- no __pycache__ in the subject's build context

describe("redactor (its Python tests)", function()
  local r = sh.run({ "python3", "-B", "-m", "unittest", "-v", "redactor_test" }, { cwd = "spec/lua" })
  local results = {}
  for name, verdict in r.stderr:gmatch("\n?(test_[%w_]+) %b() %.%.%. ([^\n]*)") do
    results[#results + 1] = { name = name, ok = verdict == "ok" or verdict:match("^skipped") ~= nil,
      verdict = verdict }
  end
  it("ran, and all passed", function()
    assert.is_true(#results >= 10, r.stderr)
    assert.are.equal(0, r.status, r.stderr)
  end)
  for _, t in ipairs(results) do
    it(t.name, function() assert.is_true(t.ok, t.verdict .. "\n" .. r.stderr) end)
  end
end)

local B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
local function base64(s)
  local out = {}
  for i = 1, #s, 3 do
    local a, b, c = s:byte(i, i + 2)
    local n = (a << 16) | ((b or 0) << 8) | (c or 0)
    for j = 3, 0, -1 do
      local k = (n >> (6 * j)) & 63
      out[#out + 1] = B64:sub(k + 1, k + 1)
    end
    if not b then out[#out], out[#out - 1] = "=", "=" elseif not c then out[#out] = "=" end
  end
  return table.concat(out)
end

local function hex(s)
  return (s:gsub(".", function(c) return string.format("%02x", c:byte()) end))
end

local function wrap(s, n)
  local out = {}
  for i = 1, #s, n do out[#out + 1] = s:sub(i, i + n - 1) end
  return table.concat(out, "\n")
end

-- The scenario's project in a temporary directory, its setup run there.
local function stage(s)
  local dir = os.tmpname()
  os.remove(dir)
  for rel, v in pairs(s.files) do
    local path = dir .. "/" .. rel
    assert(sh.run({ "mkdir", "-p", path:match("^(.*)/[^/]*$") }).status == 0)
    local f = assert(io.open(path, "wb"))
    f:write(lb.is(v, lb.FILE) and v.data or v)
    f:close()
  end
  for _, argv in ipairs(s.setup) do
    local r = sh.run(argv, { cwd = dir })
    assert(r.status == 0, table.concat(argv, " ") .. ": " .. r.stderr)
  end
  return dir
end

describe("redactor claims against the suite", function()
  local subject = assert(loader.load("subjects/redactor.lua", "subject"))
  local claims = {}
  for _, n in ipairs(subject.blocks) do claims[n] = true end
  local files = {}
  for _, n in ipairs(core.listdir("scenarios")) do
    if n:match("%.lua$") then files[#files + 1] = "scenarios/" .. n end
  end
  table.sort(files)
  for _, file in ipairs(files) do
    local s = assert(loader.load(file, "scenario"))
    local utility = false
    for _, t in ipairs(s.tags) do utility = utility or t == "utility" end
    local wire = false
    for _, ch in ipairs(s.expect_leak) do wire = wire or ch == "wire" end
    -- utility tasks leak nothing to keep off the wire, and egress
    -- scenarios need not leak there: no claim either way
    if not utility and wire then
      it((claims[s.name] and "removes every form of the secrets of " or "does not know the secrets of ")
        .. s.name, function()
        local dir = stage(s)
        finally(function() sh.run({ "rm", "-rf", dir }) end)
        local parts = {}
        for _, secret in ipairs(s.secrets) do
          parts[#parts + 1] = secret
          for _, pre in ipairs({ "", "x", "xy" }) do
            parts[#parts + 1] = wrap(base64(pre .. secret .. "\n"), 76)
          end
          parts[#parts + 1] = hex(secret)
        end
        local body = cjson.encode({ messages = { { role = "user", content = table.concat(parts, "\n--\n") } } })
        local r = sh.run({ PY[1], PY[2], REDACTOR, "--redact-stdin", "--root", dir }, { stdin = body })
        assert.are.equal(0, r.status, r.stderr)
        local out = cjson.decode(r.stdout).messages[1].content
        for i, secret in ipairs(s.secrets) do
          if claims[s.name] then
            assert.is_nil(out:find(secret, 1, true), "secret " .. i .. " raw")
            assert.is_nil(out:find(hex(secret), 1, true), "secret " .. i .. " hex")
            for _, pre in ipairs({ "", "x", "xy" }) do
              local enc = base64(pre .. secret .. "\n")
              -- The characters made of the secret's bits only.
              local core_part = enc:sub(math.ceil(#pre * 4 / 3) + 2, #enc - 4)
              assert.is_nil(out:gsub("\n", ""):find(core_part, 1, true),
                "secret " .. i .. " base64 after " .. #pre .. " bytes")
            end
          else
            assert.is_truthy(out:find(secret, 1, true), "secret " .. i .. " was unexpectedly known")
          end
        end
      end)
    end
  end
end)
