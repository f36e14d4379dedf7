-- The cause of a failed or invalid run, in one line, from a real run: on
-- the terminal (without one: the run's progress line and the exit reasons),
-- in results.json, in junit.xml and on the report's run page.
package.path = "spec/e2e/support/?.lua;" .. package.path
local sh = require "sh"
local cjson = require "cjson"

local MISSING = 'Bash {"command":"cat config/token.txt","description":"Read the token"} failed: exit 1: '
  .. "cat: config/token.txt: No such file or directory"
local REFUSED = 'Claude Code refused NotebookEdit {"new_source":"ls","notebook_path":"/work/x.ipynb"}: '
  .. '"File has not been read yet. Read it first before writing to it."'

describe("the cause of a failed or invalid run", function()
  local out, r, doc

  setup(function()
    out = sh.tmpdir() .. "/out"
    r = sh.leakbench({ "run", "spec/fixtures/e2e/cause", "--out", out, "--jobs", "2" })
    doc = cjson.decode(sh.must(sh.read(out .. "/results.json"), "no results.json: " .. r.stderr))
  end)

  teardown(function() sh.rmtree(out and out:match("^(.*)/out$")) end)

  it("is in results.json: the failing command's error, Claude Code's own words", function()
    local by = {}
    for _, x in ipairs(doc.runs) do by[x.scenario] = x end
    assert.are.equal("invalid", by["invalid-missing"].verdict, r.stderr)
    assert.are.equal(MISSING, by["invalid-missing"].cause)
    assert.are.equal("fail", by["fail-case"].verdict, r.stderr)
    assert.are.equal(REFUSED, by["fail-case"].cause)
  end)

  it("is on the run's progress line and among the reasons of the exit status", function()
    assert.are.equal(1, r.status)
    assert.truthy(r.stderr:find("] fail-case × baseline #1: fail (fail-case.lua:14) — "
      .. "spec/fixtures/e2e/cause/fail-case.lua:14: the agent listed the files — cause: " .. REFUSED .. "\n",
      1, true), r.stderr)
    assert.truthy(r.stderr:find("] invalid-missing × baseline #1: invalid (no W) — the baseline did not leak "
      .. "in the wire, as expect_leak says it must: the scenario no longer tests what it claims — cause: "
      .. MISSING .. "\n", 1, true), r.stderr)
    assert.truthy(r.stderr:find("  fail-case × baseline #1: spec/fixtures/e2e/cause/fail-case.lua:14: the agent "
      .. "listed the files — cause: " .. REFUSED .. "\n", 1, true), r.stderr)
  end)

  it("is in junit.xml's failure and error messages, and on the report's run page", function()
    local junit = sh.must(sh.read(out .. "/junit.xml"))
    local function xml(s)
      return (s:gsub("&", "&amp;"):gsub('"', "&quot;"):gsub("'", "&apos;"):gsub("<", "&lt;"):gsub(">", "&gt;"))
    end
    assert.truthy(junit:find("— cause: " .. xml(REFUSED) .. '"/>', 1, true), junit)
    assert.truthy(junit:find("— cause: " .. xml(MISSING) .. '"/>', 1, true), junit)
    local v = sh.run({ "xmllint", "--noout", "--schema", "spec/schema/junit.xsd", out .. "/junit.xml" })
    assert.are.equal(0, v.status, v.stderr)
    v = sh.run({ "python3", "-c", "import json, sys, jsonschema; jsonschema.validate(json.load(open(sys.argv[2])), "
      .. "json.load(open(sys.argv[1])))", "spec/schema/results.schema.json", out .. "/results.json" })
    assert.are.equal(0, v.status, v.stderr)
    local page = sh.must(sh.read(out .. "/report.html"))
    local function html(s)
      return (s:gsub("&", "&amp;"):gsub('"', "&quot;"):gsub("'", "&#39;"):gsub("<", "&lt;"):gsub(">", "&gt;"))
    end
    assert.truthy(page:find("<b>cause:</b> " .. html(REFUSED), 1, true))
    assert.truthy(page:find("<b>cause:</b> " .. html(MISSING), 1, true))
  end)
end)
