-- "leakbench init DIR": the scenario and subject it writes load with
-- `list`, and `run` runs them for real: the baseline leaks where the
-- scenario says, the subject protects it and its claim holds.
package.path = "spec/e2e/support/?.lua;" .. package.path
local sh = require "sh"
local cjson = require "cjson"

describe("leakbench init", function()
  local dir, out

  setup(function()
    dir = sh.tmpdir()
    out = sh.tmpdir() .. "/out"
  end)

  teardown(function()
    sh.rmtree(dir)
    sh.rmtree(out and out:match("^(.*)/out$"))
  end)

  it("writes a commented scenario and subject, pointing at docs/api.md, and says what to run", function()
    local r = sh.leakbench({ "init", dir })
    assert.are.equal(0, r.status, r.stderr)
    assert.truthy(r.stdout:find("leakbench run " .. dir .. "/scenarios --subject " .. dir
      .. "/subjects/my-subject.lua", 1, true), r.stdout)
    for _, f in ipairs({ "/scenarios/my-scenario.lua", "/subjects/my-subject.lua" }) do
      local text = sh.must(sh.read(dir .. f), "no " .. f)
      assert.truthy(text:find("docs/api.md", 1, true), f)
      assert.truthy(text:match("^%-%- "), f .. " opens with a comment")
    end
  end)

  it("refuses to overwrite, naming the file, and leaves it as it was", function()
    local path = dir .. "/scenarios/my-scenario.lua"
    sh.write(path, "-- mine\nreturn { prompt = 'x' }\n")
    local r = sh.leakbench({ "init", dir })
    assert.are.equal(1, r.status)
    assert.are.equal("leakbench: init: will not overwrite '" .. path .. "': it exists\n", r.stderr)
    assert.are.equal("-- mine\nreturn { prompt = 'x' }\n", sh.read(path))
    sh.rmtree(dir .. "/scenarios")
    sh.rmtree(dir .. "/subjects")
    assert.are.equal(0, sh.leakbench({ "init", dir }).status)
  end)

  it("is accepted by list", function()
    local r = sh.leakbench({ "list", dir })
    assert.are.equal(0, r.status, r.stderr)
    assert.truthy(r.stdout:find("my-scenario", 1, true), r.stdout)
    assert.truthy(r.stdout:find("my-subject", 1, true), r.stdout)
  end)

  it("runs: the baseline leaks W T A, the subject passes and its claim holds", function()
    local r = sh.leakbench({ "run", dir .. "/scenarios", "--subject", dir .. "/subjects/my-subject.lua",
      "--out", out, "--jobs", "2" })
    assert.are.equal(0, r.status, r.stderr)
    local doc = cjson.decode(sh.must(sh.read(out .. "/results.json"), "no results.json"))
    local cells = {}
    for _, run in ipairs(doc.runs) do cells[run.subject] = run end
    assert.are.equal("pass", cells.baseline.verdict, tostring(cells.baseline.reason))
    for _, ch in ipairs({ "wire", "transcript", "answer" }) do
      assert.is_true(cells.baseline.leaks[1].channels[ch].leaked, ch)
    end
    assert.are.equal("pass", cells["my-subject"].verdict, tostring(cells["my-subject"].reason))
    assert.are.equal("held", cells["my-subject"].claim)
    assert.truthy(r.stdout:find("my-scenario  leak W T A  pass", 1, true), r.stdout)
    assert.truthy(r.stdout:find("claims: my-subject 1/1 held", 1, true), r.stdout)
  end)
end)
