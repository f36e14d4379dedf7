-- report.html from results documents without runs on disk: versions side
-- by side, escaping, anchors, and the refusal to write a page that would
-- hold a secret.
local html = require "leakbench.html"
local report = require "leakbench.report"
local keep = require "leakbench.keep"
local core = require "leakbench.core"

local function tmpdir()
  local p = os.tmpname()
  os.remove(p)
  assert(core.mkdir_p(p, 493))
  return p
end

local function run(sc, sj, v, verdict, k)
  return { scenario = sc, subject = sj, claude_version = v, repeat_index = k or 1, verdict = verdict,
    dir = "/nonexistent/" .. sc .. "/" .. sj .. "/" .. (k or 1) }
end

describe("html.render", function()
  it("puts several Claude Code versions side by side under each subject", function()
    local doc = report.document({ run("a", "baseline", "2.1.332", "pass"), run("a", "baseline", "2.2.0", "fail"),
      run("a", "deny", "2.1.332", "pass"), run("a", "deny", "2.2.0", "pass") }, {
      version = "t", scenarios = { { name = "a", file = "a.lua", tags = { "files" } } },
      subjects = { { name = "baseline" }, { name = "deny", file = "deny.lua" } } })
    local text = html.render(doc, "/nonexistent")
    assert.truthy(text:find('<th data-subject="baseline" colspan="2">baseline</th>', 1, true))
    assert.truthy(text:find('<th data-subject="deny" class="version">2.2.0</th>', 1, true))
    assert.truthy(text:find('id="run-a--baseline--2.2.0--1"', 1, true))
    assert.truthy(text:find('<td class="cell fail"', 1, true))
  end)

  it("has one column per subject when runs name no version", function()
    local doc = report.document({ run("a", "baseline", nil, "pass") }, { version = "t",
      scenarios = { { name = "a", file = "a.lua" } }, subjects = { { name = "baseline" } } })
    local text = html.render(doc, "/nonexistent")
    assert.truthy(text:find('<th data-subject="baseline">baseline</th>', 1, true))
    assert.truthy(text:find('id="run-a--baseline--1"', 1, true))
    assert.truthy(text:find("folder is not there", 1, true))
  end)

  it("escapes what runs say", function()
    local r = run("a", "baseline", nil, "fail")
    r.reason = "<script>alert(1)</script> & 'quotes'"
    local doc = report.document({ r }, { version = "t", scenarios = { { name = "a", file = "a.lua" } },
      subjects = { { name = "baseline" } } })
    local text = html.render(doc, "/nonexistent")
    assert.is_nil(text:find("<script>alert", 1, true))
    assert.truthy(text:find("&lt;script&gt;alert(1)&lt;/script&gt; &amp; &#39;quotes&#39;", 1, true))
  end)
end)

describe("html.write", function()
  local dir = tmpdir()
  teardown(function() core.rmtree(dir) end)

  it("masks a run's secrets in its text, and refuses a page that still holds one", function()
    local key = "sk-live-" .. string.rep("3c", 16)
    local rdir = dir .. "/a/baseline/1"
    assert(core.mkdir_p(rdir, 493))
    assert(keep.save(rdir, { name = "a", secrets = { key } }, { { prefix = "sk-live-", value = key } }))
    assert(core.write_file(rdir .. "/result.json", "{}"))
    assert(core.write_file(rdir .. "/stream.jsonl", table.concat({
      '{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"echo '
        .. key .. '"}}]}}',
      '{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t1","content":"'
        .. key:reverse() .. '"}]}}',
    }, "\n") .. "\n"))
    local r = run("a", "baseline", nil, "pass")
    r.dir = "elsewhere/a/baseline/1"   -- moved: found under the results folder
    local doc = report.document({ r }, { version = "t", scenarios = { { name = "a", file = "a.lua" } },
      subjects = { { name = "baseline" } } })
    local path = assert(html.write(dir, doc))
    local text = assert(core.read_file(path))
    local sc = core.scanner({ key })
    assert.are.same({}, sc:scan(text))
    sc:close()
    assert.truthy(text:find("echo «secret:" .. core.secret_hash(key) .. "»", 1, true))
    -- a secret that reaches the page by another way: not written
    doc.runs[1].reason = "the key was " .. key
    os.remove(path)
    local ok, err = html.write(dir, doc)
    assert.is_nil(ok)
    assert.truthy(err:find("^report.html would hold secret " .. core.secret_hash(key)), err)
    assert.is_nil(core.stat(path))
  end)
end)
