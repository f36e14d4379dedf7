-- Issue 13, findings 1-3: hostile scenario and subject files. Each fixture
-- in spec/fixtures/hostile/ gives its exact error, with file:line, both
-- through the loader as "leakbench run" uses it (runner's plan and
-- exec-run call loader.load) and through "leakbench list PATH".
local loader = require "leakbench.loader"
local cjson = require "cjson"

local DIR = "spec/fixtures/hostile"

local function load_err(name, kind)
  local t, err = loader.load(DIR .. "/" .. name, kind or "scenario")
  assert.is_nil(t, "loaded: " .. name)
  return err
end

-- "leakbench list PATH": stderr and the exit status.
local function list(name)
  local bin = assert(os.getenv("LEAKBENCH"), "LEAKBENCH is not set")
  local p = assert(io.popen(string.format("%s list %s/%s 2>&1 >/dev/null", bin, DIR, name)))
  local out = p:read("a")
  local _, _, status = p:close()
  return out, status
end

-- Every hostile fixture and the error it must give, through both paths.
local ERRORS = {
  { "patch-string.lua", DIR .. "/patch-string.lua:11: field 'files': path "
    .. "'../../../../tmp/x/PWNED' must be relative and stay inside" },
  { "patch-libs.lua", DIR .. "/patch-libs.lua:14: field 'files': path '../escape' "
    .. "must be relative and stay inside" },
  { "patch-lb.lua", DIR .. "/patch-lb.lua:2: attempt to set 'lb.is': the leakbench module is read-only" },
}

describe("hostile files: exact errors", function()
  for _, case in ipairs(ERRORS) do
    it(case[1] .. " through the loader", function()
      assert.are.equal(case[2], load_err(case[1]))
    end)
    it(case[1] .. " through leakbench list", function()
      local out, status = list(case[1])
      assert.are.equal("leakbench: " .. case[2] .. "\n", out)
      assert.are.equal(1, status)
    end)
  end
end)

describe("hostile files: one file cannot change another, nor the harness", function()
  it("patching string, table, math, cjson and the string metatable stays in the file", function()
    local match, find, sort, concat, encode, min = string.match, string.find, table.sort,
      table.concat, cjson.encode, math.min
    load_err("patch-libs.lua")
    load_err("patch-string.lua")
    assert.are.equal(match, string.match)
    assert.are.equal(find, string.find)
    assert.are.equal(sort, table.sort)
    assert.are.equal(concat, table.concat)
    assert.are.equal(encode, cjson.encode)
    assert.are.equal(min, math.min)
    assert.are.equal("b", ("abc"):match("b"))
    local t = assert(loader.load(DIR .. "/good.lua", "scenario"))
    assert.are.equal("hello a", t.prompt)
    assert.are.same({ "tag" }, t.tags)
    assert.are.equal('{"k":"xy"}', t.files["data.json"])
    -- the harness's own checks still hold after the patches
    local _, err = loader.load(DIR .. "/patch-string.lua", "scenario")
    assert.truthy(err:find("must be relative and stay inside", 1, true))
  end)

  it("nothing was written outside", function()
    assert.is_nil(io.open("/tmp/x/PWNED", "rb"))
  end)
end)
