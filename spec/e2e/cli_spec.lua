-- The leakbench binary's command line, output and exit status pinned.
package.path = "spec/e2e/support/?.lua;" .. package.path
local sh = require "sh"

describe("leakbench", function()
  it("prints its version", function()
    local r = sh.leakbench({ "--version" })
    assert.are.equal(0, r.status)
    assert.are.equal("leakbench 0.1.0 (claude-code 2.1.332)\n", r.stdout)
  end)

  it("prints usage with --help and lists every command", function()
    local r = sh.leakbench({ "--help" })
    assert.are.equal(0, r.status)
    for _, verb in ipairs({ "run", "list", "report", "scan", "build", "doctor", "clean", "help" }) do
      assert.truthy(r.stdout:match("\n  " .. verb .. " +%S"), verb)
    end
  end)

  it("prints usage to stderr and exits 2 with no command", function()
    local r = sh.leakbench({})
    assert.are.equal(2, r.status)
    assert.are.equal("", r.stdout)
    assert.truthy(r.stderr:match("^leakbench 0%.1%.0: "))
  end)

  it("rejects an unknown command with a suggestion, exit 2", function()
    local r = sh.leakbench({ "lsit" })
    assert.are.equal(2, r.status)
    assert.are.equal("leakbench: unknown command 'lsit' (did you mean 'list'?) (try 'leakbench --help')\n",
      r.stderr)
  end)

  it("rejects an unknown global flag, exit 2", function()
    local r = sh.leakbench({ "--frobnicate" })
    assert.are.equal(2, r.status)
    assert.are.equal("leakbench: unknown option '--frobnicate' (try 'leakbench --help')\n", r.stderr)
  end)

  it("rejects an unknown flag of a command with a suggestion, exit 2", function()
    local r = sh.leakbench({ "run", "--jbos", "2" })
    assert.are.equal(2, r.status)
    assert.are.equal("leakbench: run: unknown option '--jbos' (did you mean '--jobs'?)\n", r.stderr)
  end)

  it("says which option lacks its value", function()
    local r = sh.leakbench({ "run", "--jobs" })
    assert.are.equal(2, r.status)
    assert.are.equal("leakbench: run: option '--jobs' needs a value (N)\n", r.stderr)
  end)

  it("shows help for a command", function()
    local r = sh.leakbench({ "help", "list" })
    assert.are.equal(0, r.status)
    assert.truthy(r.stdout:match("^usage: leakbench list %[PATH%.%.%.%]\n"))
    r = sh.leakbench({ "list", "--help" })
    assert.are.equal(0, r.status)
    assert.truthy(r.stdout:match("^usage: leakbench list"))
    r = sh.leakbench({ "help", "nope" })
    assert.are.equal(2, r.status)
    assert.are.equal("leakbench: help: unknown command 'nope'\n", r.stderr)
  end)
end)

describe("leakbench list", function()
  it("lists the good files and reports each broken one with file:line, exit 1", function()
    local r = sh.leakbench({ "list", "spec/fixtures/list" })
    assert.are.equal(1, r.status)
    assert.are.equal(table.concat({
      "leakbench: spec/fixtures/list/broken/number.lua:2: scenario file returned a number, expected a table",
      "leakbench: spec/fixtures/list/broken/syntax.lua:4: '}' expected (to close '{' at line 2) near 'files'",
      "leakbench: spec/fixtures/list/broken/timeout.lua:4: field 'timeout' is a string, expected a positive number",
      "leakbench: spec/fixtures/list/subjects/bad-icp.lua:2: interceptor has no 'argv'",
      "" }, "\n"), r.stderr)
    assert.are.equal(table.concat({
      "2 scenarios:",
      "  good-one  files,read  spec/fixtures/list/broken/good.lua",
      "  uses-lib  -           spec/fixtures/list/good/uses-lib.lua",
      "1 subject:",
      "  nohook    settings    spec/fixtures/list/subjects/nohook.lua",
      "" }, "\n"), r.stdout)
  end)

  it("exits 0 when every file is good", function()
    local r = sh.leakbench({ "list", "spec/fixtures/list/good" })
    assert.are.equal(0, r.status)
    assert.are.equal("", r.stderr)
  end)

  it("reports a path that does not exist", function()
    local r = sh.leakbench({ "list", "spec/fixtures/nope" })
    assert.are.equal(1, r.status)
    assert.are.equal("leakbench: spec/fixtures/nope: no such file or directory\n", r.stderr)
  end)

  it("lists the built-in scenarios without error", function()
    local r = sh.leakbench({ "list", "scenarios/", "subjects/" })
    assert.are.equal("", r.stderr)
    assert.are.equal(0, r.status)
    assert.truthy(r.stdout:match("scenarios?:\n"))
    -- every file in one column, however long a name, its tags or its kinds
    local cols, n = {}, 0
    for line in r.stdout:gmatch("[^\n]+") do
      local at = line:find(" s[cu][eb][nj][a-z]*/[%w-]+%.lua$")
      if at and not cols[at] then cols[at], n = true, n + 1 end
    end
    assert.are.equal(1, n, r.stdout)
  end)
end)

describe("leakbench run, bad options (nothing runs)", function()
  it("checks --jobs, --repeat and --timeout", function()
    local r = sh.leakbench({ "run", "--jobs", "0", "spec/fixtures/list/good" })
    assert.are.equal(2, r.status)
    assert.are.equal("leakbench: run: option '--jobs' must be an integer >= 1, got '0'\n", r.stderr)
    r = sh.leakbench({ "run", "--repeat", "two", "spec/fixtures/list/good" })
    assert.are.equal(2, r.status)
    assert.are.equal("leakbench: run: option '--repeat' must be an integer >= 1, got 'two'\n", r.stderr)
    r = sh.leakbench({ "run", "--timeout", "-5", "spec/fixtures/list/good" })
    assert.are.equal(2, r.status)
    assert.are.equal("leakbench: run: option '--timeout' must be a positive number of seconds, got '-5'\n",
      r.stderr)
  end)

  it("says when no scenario matches the filter or the tag", function()
    local r = sh.leakbench({ "run", "--filter", "nothing-like-this", "spec/fixtures/list/good" })
    assert.are.equal(2, r.status)
    assert.are.equal("leakbench: run: no scenario matched in spec/fixtures/list/good\n", r.stderr)
    r = sh.leakbench({ "run", "--tag", "no-such-tag", "spec/fixtures/list/good" })
    assert.are.equal(2, r.status)
  end)

  it("names a path that does not exist", function()
    local r = sh.leakbench({ "run", "spec/fixtures/nope" })
    assert.are.equal(2, r.status)
    assert.are.equal("leakbench: spec/fixtures/nope: no such file or directory\n", r.stderr)
  end)

  it("refuses to run nothing", function()
    local r = sh.leakbench({ "run", "--no-baseline", "spec/fixtures/list/good" })
    assert.are.equal(2, r.status)
    assert.are.equal("leakbench: run: nothing to run: --no-baseline and no --subject\n", r.stderr)
  end)
end)
