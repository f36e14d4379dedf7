-- make install PREFIX=...: the binary, the servers, the container
-- contexts, the scenarios and subjects, the manual page, bash completion
-- and docs/api.md land under PREFIX; the installed leakbench, started from
-- another directory, finds the contexts beside it, computes the same image
-- tags as this tree (so it uses the images built here), and runs a
-- scenario.
package.path = "spec/e2e/support/?.lua;" .. package.path
local sh = require "sh"

describe("make install", function()
  local top = sh.run({ "pwd" }).stdout:match("[^\n]+")
  local prefix, elsewhere, r

  setup(function()
    prefix = sh.tmpdir() .. "/usr"
    elsewhere = sh.tmpdir()
    local build = (os.getenv("LB_BUILD") or (top .. "/build/default")):gsub("^" .. top:gsub("%p", "%%%0") .. "/", "")
    r = sh.run({ "make", "--no-print-directory", "install", "PREFIX=" .. prefix, "BUILD=" .. build })
  end)

  teardown(function()
    sh.rmtree(prefix and prefix:match("^(.*)/usr$"))
    sh.rmtree(elsewhere)
  end)

  it("installs every part", function()
    assert.are.equal(0, r.status, r.stdout .. r.stderr)
    for _, f in ipairs({ "bin/leakbench", "libexec/leakbench/lb-proxy", "libexec/leakbench/lb-model",
      "libexec/leakbench/lb-net", "libexec/leakbench/lb-trap", "share/leakbench/Makefile",
      "share/leakbench/containers/claude.Containerfile", "share/leakbench/containers/proxy.Containerfile",
      "share/leakbench/src/proxy/proxy.c", "share/leakbench/scenarios/dotenv-read.lua",
      "share/leakbench/subjects/deny-rules.lua", "share/man/man1/leakbench.1",
      "share/bash-completion/completions/leakbench", "share/doc/leakbench/api.md" }) do
      assert.are.equal(0, sh.run({ "test", "-s", prefix .. "/" .. f }).status, f)
    end
    assert.are.equal(0, sh.run({ "test", "-x", prefix .. "/bin/leakbench" }).status)
  end)

  it("prints its version and the pinned Claude Code version, from any directory", function()
    local v = sh.run({ prefix .. "/bin/leakbench", "--version" }, { cwd = elsewhere })
    assert.are.equal(0, v.status)
    assert.are.equal("leakbench 0.1.0 (claude-code 2.1.332)\n", v.stdout)
  end)

  it("finds the installed contexts and computes this tree's image tags", function()
    local script = elsewhere .. "/tags.lua"
    sh.write(script, 'local i = require "leakbench.images"\nlocal t = assert(i.tags({}))\n'
      .. 'print(i.root())\nprint(t.claude)\nprint(t.proxy)\n')
    local inst = sh.run({ prefix .. "/bin/leakbench", "lua", script }, { cwd = elsewhere })
    assert.are.equal(0, inst.status, inst.stderr)
    local here = sh.leakbench({ "lua", script })
    assert.are.equal(0, here.status, here.stderr)
    local root, tags = inst.stdout:match("^([^\n]+)\n(.*)$")
    assert.are.equal(prefix .. "/share/leakbench", root)
    assert.are.equal(here.stdout:match("^[^\n]+\n(.*)$"), tags)
  end)

  it("runs an installed scenario from another directory", function()
    local out = elsewhere .. "/out"
    local run = sh.run({ prefix .. "/bin/leakbench", "run", prefix .. "/share/leakbench/scenarios/dotenv-read.lua",
      "--out", out, "--jobs", "1" }, { cwd = elsewhere })
    assert.are.equal(0, run.status, run.stderr)
    assert.truthy(run.stdout:find("dotenv-read  leak W T A", 1, true), run.stdout)
  end)

  it("installs a manual page man reads and a completion bash loads", function()
    local m = sh.run({ "man", "-l", prefix .. "/share/man/man1/leakbench.1" },
      { env = { MANPAGER = "cat", MANWIDTH = "80" } })
    assert.are.equal(0, m.status, m.stderr)
    assert.truthy(m.stdout:find("leakbench - does a coding agent leak your secrets?", 1, true), m.stdout)
    local c = sh.run({ "bash", "-c", '. "$1" && COMP_WORDS=(leakbench di) COMP_CWORD=1 && _leakbench && '
      .. 'echo "${COMPREPLY[*]}"', "bash", prefix .. "/share/bash-completion/completions/leakbench" })
    assert.are.equal(0, c.status, c.stderr)
    assert.are.equal("diff\n", c.stdout)
  end)
end)
