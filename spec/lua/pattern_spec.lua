-- pattern.lua: Lua's pattern functions in Lua, so a budget bounds them.
-- Differential: over generated patterns and subjects, the Lua matcher
-- (forced: pattern.CHEAP = 0) gives what the string library gives, errors
-- included. Then the attack: a backtracking pattern in a scenario file,
-- or in a check, ends at its budget with the file's line.
local pattern = require "leakbench.pattern"
local loader = require "leakbench.loader"

local function pack(ok, ...)
  return { ok = ok, n = select("#", ...), ... }
end

local function same(a, b)
  if a.ok ~= b.ok then return false end
  if not a.ok then
    -- messages: the string library's carry no position; ours may
    return tostring(a[1]):gsub("^.-:%d+: ", "") == tostring(b[1]):gsub("^.-:%d+: ", "")
  end
  if a.n ~= b.n then return false end
  for i = 1, a.n do
    if a[i] ~= b[i] and not (math.type(a[i]) and a[i] == b[i]) then return false end
  end
  return true
end

local function show(t)
  local out = {}
  for i = 1, t.n or #t do out[#out + 1] = string.format("%q", tostring(t[i])) end
  return (t.ok and "ok " or "error ") .. table.concat(out, ", ")
end

local ATOMS = { "a", "b", ".", "%a", "%d", "%s", "%W", "[ab]", "[^a]", "[a-c]", "[%d_]", "%.", "%%",
  "(a)", "()", "%b()", "%f[%w]", "%1", "x", "[]]", "[^]a]", "-" }
local QUANT = { "", "", "*", "+", "-", "?" }
local SUBJECTS = { "", "a", "ab", "aab", "abc", "a.b", "(a(b)c)", "hello world 42", "aaa", "b_a-1",
  "x]y", "%a", "the cat sat", "a\0b" }

describe("pattern.lua", function()
  local saved
  setup(function() saved = pattern.CHEAP pattern.CHEAP = 0 end)
  teardown(function() pattern.CHEAP = saved end)

  it("matches as the string library does (generated patterns and subjects)", function()
    math.randomseed(42)
    local checked = 0
    for _ = 1, 3000 do
      local parts = {}
      if math.random(6) == 1 then parts[1] = "^" end
      for _ = 1, math.random(1, 4) do
        parts[#parts + 1] = ATOMS[math.random(#ATOMS)] .. QUANT[math.random(#QUANT)]
      end
      if math.random(6) == 1 then parts[#parts + 1] = "$" end
      local p = table.concat(parts)
      local s = SUBJECTS[math.random(#SUBJECTS)]
      local init = ({ nil, 1, 2, -1, 0, 10 })[math.random(6)]
      for _, f in ipairs({ "find", "match" }) do
        local want = pack(pcall(string[f], s, p, init))
        local got = pack(pcall(pattern[f], s, p, init))
        assert(same(want, got), string.format("%s(%q, %q, %s): %s, not %s", f, s, p, tostring(init),
          show(got), show(want)))
      end
      local function all(fn)
        local ok, it = pcall(fn, s, p)
        if not ok then return { ok = false, n = 1, it } end
        local out = { ok = true, n = 0 }
        local ok2, err = pcall(function()
          for _ = 1, 50 do
            local r = table.pack(it())
            if r[1] == nil then break end
            for i = 1, r.n do out.n = out.n + 1 out[out.n] = r[i] end
          end
        end)
        if not ok2 then return { ok = false, n = 1, err } end
        return out
      end
      local want, got = all(string.gmatch), all(pattern.gmatch)
      assert(same(want, got), string.format("gmatch(%q, %q): %s, not %s", s, p, show(got), show(want)))
      local repls = { "<%0>", "%1", "%%", "x", { a = "A", b = false },
        function(c) return c == "a" and "!" end }
      for _, repl in ipairs(repls) do
        want = pack(pcall(string.gsub, s, p, repl))
        got = pack(pcall(pattern.gsub, s, p, repl))
        assert(same(want, got), string.format("gsub(%q, %q, %s): %s, not %s", s, p, tostring(repl),
          show(got), show(want)))
      end
      checked = checked + 1
    end
    assert.are.equal(3000, checked)
  end)

  it("gives the string library's errors", function()
    for _, p in ipairs({ "%", "[a", "(a", "a)", "%b", "%f", "%1", "(()%2)" }) do
      local want = pack(pcall(string.find, "abc", p))
      local got = pack(pcall(pattern.find, "abc", p))
      assert(same(want, got), p .. ": " .. show(got) .. ", not " .. show(want))
    end
    assert.has_error(function() pattern.gsub("a", "a", "%2") end, "invalid capture index %2")
    assert.has_error(function() pattern.gsub("a", "a", true) end)
  end)
end)

describe("pattern functions in users' files", function()
  local tmp = os.tmpname()
  os.remove(tmp)
  assert(os.execute("mkdir -p " .. tmp))
  local saved_load, saved_check
  before_each(function() saved_load, saved_check = loader.LOAD_BUDGET, loader.CHECK_BUDGET end)
  after_each(function() loader.LOAD_BUDGET, loader.CHECK_BUDGET = saved_load, saved_check end)
  teardown(function() os.execute("rm -rf " .. tmp) end)

  local function write(name, text)
    local f = assert(io.open(tmp .. "/" .. name, "w"))
    f:write(text)
    f:close()
    return tmp .. "/" .. name
  end

  it("a backtracking pattern while loading ends at the time budget, with the file's line", function()
    loader.LOAD_BUDGET = { instructions = math.maxinteger, seconds = 1, memory = 0 }
    local file = write("bomb.lua", 'local s = ("a"):rep(20000)\nlocal x = s:find(".-.-.-b")\n'
      .. 'return { prompt = "p" }\n')
    local t0 = os.time()
    local t, err = loader.load(file, "scenario")
    assert.is_nil(t)
    assert.are.equal(file .. ":2: loading took more than 1 s (time budget)", err)
    assert.is_true(os.time() - t0 <= 5)
    file = write("bomb2.lua", 'local s = string.rep("a", 20000)\nreturn { prompt = "p", x = string.match(s, '
      .. '"(.-)(.-)(.-)b") }\n')
    t, err = loader.load(file, "scenario")
    assert.is_nil(t)
    assert.are.equal(file .. ":2: loading took more than 1 s (time budget)", err)
  end)

  it("a long plain needle over a long subject ends at the budget too", function()
    loader.LOAD_BUDGET = { instructions = math.maxinteger, seconds = 1, memory = 0 }
    local file = write("plain.lua", 'local s = ("a"):rep(1 << 21)\nlocal n = ("a"):rep(1 << 20) .. "b"\n'
      .. 'local x = s:find(n, 1, true)\nreturn { prompt = "p" }\n')
    local t, err = loader.load(file, "scenario")
    assert.is_nil(t)
    assert.are.equal(file .. ":3: loading took more than 1 s (time budget)", err)
  end)

  it("leaves a large but linear match to the string library", function()
    local s = ("x"):rep(1 << 20) .. "-"
    local t0 = os.clock()
    assert.is_nil(pattern.match(s, "^[%w_]+$"))
    assert.are.equal(1 << 20, #pattern.match(s, "^[%w_]+"))
    assert.is_true(os.clock() - t0 < 1)
  end)

  it("a backtracking gsub or gmatch in a check ends at the check's budget", function()
    loader.CHECK_BUDGET = { instructions = math.maxinteger, seconds = 1, memory = 0 }
    local file = write("check-bomb.lua", 'return { prompt = "p", check = function(run)\n'
      .. '  local n = 0\n  for _ in ("a"):rep(5000):gmatch("a-a-a-b") do n = n + 1 end\n'
      .. '  return (("a"):rep(5000):gsub(".-.-.-b", ""))\nend }\n')
    local s = assert(loader.load(file, "scenario"))
    local verdict, reason = loader.check(s, {})
    assert.are.equal("error", verdict)
    assert.are.equal(file .. ":3: check took more than 1 s (time budget)", reason)
    -- the harness's own string methods are the string library's again
    assert.are.equal(string.find, ("").find)
  end)
end)
