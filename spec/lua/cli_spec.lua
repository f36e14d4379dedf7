-- One source for help: every flag a verb's parser accepts is in
-- "leakbench help VERB", and every flag that help lists is accepted.
-- The verbs parse with cli.parse (or cli.args, for build, doctor and
-- clean, which run their own main) from cli.lua's verb table; scan still
-- has a parser of its own, read here from its source.
local cli = require "leakbench.cli"
local core = require "leakbench.core"

-- Runs fn(...) with io.output and io.stdout sent to a file; returns the
-- text written.
local function stdout_of(fn, ...)
  local path = os.tmpname()
  local f = assert(io.open(path, "w"))
  local real_out, real_stdout = io.output(), io.stdout
  io.output(f)
  _G.io.stdout = f
  local ok, err = pcall(fn, ...)
  io.output(real_out)
  _G.io.stdout = real_stdout
  f:close()
  local text = core.read_file(path)
  os.remove(path)
  assert(ok, err)
  return text
end

local function help_of(name)
  return stdout_of(cli.main, { "help", name })
end

-- The flags a help text lists in its options section, "--help" aside.
local function listed(text)
  local flags = {}
  for line in text:gmatch("[^\n]+") do
    local names = line:match("^  (%-.-)  ")     -- "--jobs, -j N"
    for flag in (names or ""):gmatch("%-%-?[%w][%w%-]*") do
      if flag ~= "--help" then flags[flag] = true end
    end
  end
  return flags
end

local function verbs()
  local names = {}
  for name, v in pairs(cli.VERBS) do
    if not v.hidden then names[#names + 1] = name end
  end
  table.sort(names)
  return names
end

describe("leakbench help VERB", function()
  it("lists every flag the verb's table declares", function()
    for _, name in ipairs(verbs()) do
      local text = help_of(name)
      for _, o in ipairs(cli.VERBS[name].options) do
        assert.truthy(text:find("\n  " .. o[1], 1, true), name .. " " .. o[1])
        if o[2] then assert.truthy(text:find(", " .. o[2], 1, true), name .. " " .. o[2]) end
      end
    end
  end)

  it("lists only flags the verb's parser accepts", function()
    for _, name in ipairs(verbs()) do
      local v = cli.VERBS[name]
      if v.module ~= "leakbench.scan" then
        for flag in pairs(listed(help_of(name))) do
          local opts, err = cli.parse(v, { flag, "x" })
          assert.is_table(opts, name .. " " .. flag .. ": " .. tostring(err))
        end
      end
    end
  end)

  it("is what build, doctor and clean print for --help", function()
    for _, m in ipairs({ { "build", "leakbench.images" }, { "doctor", "leakbench.doctor" },
                         { "clean", "leakbench.clean" } }) do
      local text = stdout_of(require(m[2]).main, { "--help" })
      assert.are.equal(help_of(m[1]), text)
    end
  end)

  it("shows clean's --images and build's --mirror and --claude-version", function()
    assert.truthy(help_of("clean"):find("\n  --images ", 1, true))
    assert.truthy(help_of("build"):find("\n  --mirror URL ", 1, true))
    assert.truthy(help_of("build"):find("\n  --claude-version V ", 1, true))
    assert.truthy(help_of("doctor"):find("\n  --claude-version V ", 1, true))
  end)

  it("matches scan's own parser, both ways", function()
    local source = assert(core.read_file("src/lua/scan.lua"))
    local accepted = {}
    for flag in source:gmatch('name == "(%-%-[%w%-]+)"') do
      if flag ~= "--help" then accepted[flag] = true end
    end
    assert.is_not_nil(next(accepted))
    local shown = listed(help_of("scan"))
    assert.are.same(accepted, shown)
  end)
end)
