-- What `list` and `run` check before anything runs, the same way: names
-- unique (case aside) with both files and lines, a file's kind by its
-- content, a blocks entry naming no scenario (a warning from list, an
-- untested claim in run), and validation messages that quote a short,
-- escaped prefix of the user's value however long or hostile it is.
local loader = require "leakbench.loader"
local runner = require "leakbench.runner"
local suggest = require "leakbench.suggest"

local tmp = os.tmpname()
os.remove(tmp)

local function write(name, text)
  assert(os.execute("mkdir -p " .. tmp .. "/" .. (name:match("^(.*)/") or ".")))
  local f = assert(io.open(tmp .. "/" .. name, "w"))
  f:write(text)
  f:close()
  return tmp .. "/" .. name
end

-- "leakbench ARGS...": stdout, stderr, status.
local function leakbench(args)
  local bin = assert(os.getenv("LEAKBENCH"), "LEAKBENCH is not set")
  local err = os.tmpname()
  local p = assert(io.popen(string.format("%s %s 2>%s", bin, args, err)))
  local out = p:read("a")
  local _, _, status = p:close()
  local f = assert(io.open(err))
  local e = f:read("a")
  f:close()
  os.remove(err)
  return out, e, status
end

teardown(function() os.execute("rm -rf " .. tmp) end)

describe("names are unique", function()
  it("refuses two scenario files with one name, or names that differ only in case: list and run exit 2", function()
    local a = write("dup/a.lua", 'return {\n  name = "same",\n  prompt = "p" }\n')
    local b = write("dup/b.lua", 'return { prompt = "p",\n\n  name = "Same" }\n')
    local want = a .. ":2: scenario name 'same' is also given by " .. b .. ":3 ('Same'): names must be "
      .. "unique, case aside (run folders are named by them)"
    local _, _, errs = runner.plan({}, { tmp .. "/dup" })
    assert.are.same({ want }, errs)
    local _, err, status = leakbench("list " .. tmp .. "/dup")
    assert.are.equal(2, status)
    assert.truthy(err:find(want, 1, true), err)
    _, err, status = leakbench("run " .. tmp .. "/dup --out " .. tmp .. "/never")
    assert.are.equal(2, status)
    assert.truthy(err:find(want, 1, true), err)
    assert.is_nil(io.open(tmp .. "/never/results.json"))
  end)

  it("takes a file's name from the file when it gives none, line 1", function()
    local a = write("dup2/x.lua", 'return { prompt = "p" }\n')
    local b = write("dup2/y.lua", 'return { name = "x", prompt = "p" }\n')
    local _, _, errs = runner.plan({}, { tmp .. "/dup2" })
    assert.are.same({ a .. ":1: scenario name 'x' is also given by " .. b .. ":1 ('x'): names must be "
      .. "unique, case aside (run folders are named by them)" }, errs)
  end)

  it("refuses two subjects with one name", function()
    write("one/s.lua", 'return { prompt = "p" }\n')
    local a = write("subj/a.lua", 'return { name = "guard", blocks = {} }\n')
    local b = write("subj/b.lua", 'return { name = "GUARD", blocks = {} }\n')
    local _, _, errs = runner.plan({ subject = { a, b } }, { tmp .. "/one" })
    assert.are.same({ a .. ":1: subject name 'guard' is also given by " .. b .. ":1 ('GUARD'): names must "
      .. "be unique, case aside (run folders are named by them)" }, errs)
  end)
end)

describe("a file's kind comes from its content", function()
  it("lists a subject outside subjects/ as a subject, and run does not take it for a scenario", function()
    write("mixed/scen.lua", 'return { name = "scen", prompt = "p" }\n')
    write("mixed/guard.lua", 'return { name = "guard", interceptor = { image = "x", argv = { "x" } } }\n')
    local out, err, status = leakbench("list " .. tmp .. "/mixed")
    assert.are.equal(0, status, err)
    assert.truthy(out:find("1 scenario:\n  scen ", 1, true), out)
    assert.truthy(out:find("1 subject:\n  guard ", 1, true), out)
    local scenarios, _, errs = runner.plan({}, { tmp .. "/mixed" })
    assert.are.same({}, errs)
    assert.are.equal(1, #scenarios)
    assert.are.equal("scen", scenarios[1].name)
  end)
end)

describe("claims are about the plan", function()
  it("list warns about a blocks entry that names no scenario the subject could know of", function()
    write("claims/scenarios/dotenv-read.lua", 'return { name = "dotenv-read", prompt = "p" }\n')
    local subj = write("claims/subjects/typo.lua", 'return {\n  name = "typo",\n'
      .. '  blocks = { "dotenv-read", "dotenv-raed" },\n}\n')
    local _, err, status = leakbench("list " .. subj)
    assert.are.equal(0, status, err)
    assert.are.equal("leakbench: " .. subj .. ":3: warning: field 'blocks[2]' names scenario 'dotenv-raed', "
      .. "which is no scenario here: a claim on it is untested (did you mean 'dotenv-read'?)\n", err)
  end)
end)

describe("validation messages quote a short, escaped prefix", function()
  it("a 1 MB unknown key: quoted by its first bytes, with no did-you-mean over it, at once", function()
    local key = string.rep("k", 1 << 20)
    local file = write("big.lua", 'return { prompt = "p", ["' .. key .. '"] = 1 }\n')
    local t0 = os.clock()
    local t, err = loader.load(file, "scenario")
    assert.is_nil(t)
    assert.is_true(os.clock() - t0 < 5, "took " .. (os.clock() - t0) .. " s")
    assert.is_true(#err < 300, #err)
    assert.are.equal(file .. ":1: unknown field '" .. string.rep("k", 40) .. "...' in scenario", err)
    assert.is_nil(suggest.closest(key, { "prompt" }, 2))
  end)

  it("the lb API's misuse errors quote a short prefix too", function()
    local file = write("var.lua", 'local lb = require "leakbench"\nlocal v = lb.var(("x"):rep(1 << 20) .. "-")\n'
      .. 'return { prompt = "p" }\n')
    local _, err = loader.load(file, "scenario")
    assert.is_true(#err < 400, #err)
    assert.truthy(err:find(file .. ":2: lb.var: wrong parameter \"name\": expected a name of letters, digits "
      .. "and '_', got '" .. ("x"):rep(79) .. "...", 1, true), err)
  end)

  it("escape sequences in a value are shown, never sent", function()
    local file = write("esc.lua", 'return { prompt = "p", name = "a\\27[2Jb\\27]0;x\\7" }\n')
    local _, err = loader.load(file, "scenario")
    assert.are.equal(file .. ":1: field 'name' is 'a\\x1B[2Jb\\x1B]0;x\\x07': use letters, digits, '-', '_' "
      .. "and '.'", err)
    file = write("esc2.lua", 'return { prompt = "p", ["\\27[31mred"] = 1 }\n')
    _, err = loader.load(file, "scenario")
    assert.are.equal(file .. ":1: unknown field '\\x1B[31mred' in scenario", err)
  end)
end)

describe("list checks what run checks: tools and settings", function()
  it("refuses a script that calls a tool the pinned Claude Code does not have, with a did-you-mean", function()
    local file = write("tools/bash.lua", 'local lb = require "leakbench"\nreturn { prompt = "p",\n'
      .. '  model = lb.script { { lb.use("Read", {}) }, { lb.use("bash", { command = "ls" }) } } }\n')
    local want = file .. ":3: field 'model': the script's turn 2 calls tool 'bash', which Claude Code "
      .. "2.1.332 does not have (did you mean 'Bash'?)"
    assert.are.same({ nil, want }, { loader.load(file, "scenario") })
    local _, err, status = leakbench("list " .. file)
    assert.are.equal(1, status)
    assert.are.equal("leakbench: " .. want .. "\n", err)
    -- MCP tools are whatever the server offers
    file = write("tools/mcp.lua", 'local lb = require "leakbench"\nreturn { prompt = "p",\n'
      .. '  model = lb.script { { lb.use("mcp__notes__read_note", {}) } } }\n')
    assert.is_table(loader.load(file, "scenario"))
  end)

  it("refuses a typo in a subject's Claude Code settings (dney for deny), and lets a newer setting through", function()
    local file = write("settings/subjects/typo.lua", 'return { name = "typo",\n  settings = {\n'
      .. '    permissions = { dney = { "Read(./.env)" } } } }\n')
    local want = file .. ":2: field 'settings.permissions' has unknown key 'dney' (not a setting of "
      .. "Claude Code 2.1.332) (did you mean 'deny'?)"
    assert.are.same({ nil, want }, { loader.load(file, "subject") })
    local _, err, status = leakbench("list " .. file)
    assert.are.equal(1, status)
    assert.are.equal("leakbench: " .. want .. "\n", err)
    file = write("settings/subjects/hooks.lua", 'return { name = "h", settings = { hooks = { PreToolUse = {\n'
      .. '  { matcher = "*", hoks = {} } } } } }\n')
    assert.are.equal(file .. ":1: field 'settings.hooks.PreToolUse[1]' has unknown key 'hoks' (not a "
      .. "setting of Claude Code 2.1.332) (did you mean 'hooks'?)", select(2, loader.load(file, "subject")))
    -- every hook event of the pinned version is checked alike (its list
    -- is the one in Claude Code 2.1.332's binary), a near miss of one too
    file = write("settings/subjects/failure.lua", 'return { name = "f", settings = { hooks = { StopFailure = {\n'
      .. '  { hoks = {} } }, PostCompact = { { hooks = {} } }, SubagentStart = { { hooks = {} } } } } }\n')
    assert.are.equal(file .. ":1: field 'settings.hooks.StopFailure[1]' has unknown key 'hoks' (not a "
      .. "setting of Claude Code 2.1.332) (did you mean 'hooks'?)", select(2, loader.load(file, "subject")))
    file = write("settings/subjects/failure2.lua", 'return { name = "f", settings = { hooks = {\n'
      .. '  StopFailur = {} } } }\n')
    assert.are.equal(file .. ":1: field 'settings.hooks' has unknown key 'StopFailur' (not a "
      .. "setting of Claude Code 2.1.332) (did you mean 'StopFailure'?)", select(2, loader.load(file, "subject")))
    file = write("settings/subjects/newer.lua", 'return { name = "n", settings = { someFutureSetting = true,\n'
      .. '  permissions = { deny = {} } } }\n')
    assert.is_table(loader.load(file, "subject"))
  end)
end)
