-- Each reference subject's mechanism, end to end on the plainest leak path
-- (dotenv-read: the Read tool on .env): not just "no wire leak", but the
-- evidence that it was this subject that acted, and where its protection
-- ends. One leakbench run, four runs inside it (no baseline: suite_spec
-- covers it).
--
--   deny-rules   Claude Code refuses the Read: the tool result is an error,
--                nothing leaks anywhere.
--   hook-block   the PreToolUse hook refuses it: its reason is what the
--                model received (the scripted model echoes it), nothing
--                leaks anywhere.
--   hook-redact  the PostToolUse hook rewrites the result: the model got
--                DB_PASSWORD=[REDACTED], and the transcript holds the
--                rewritten result too.
--   redactor     the interceptor rewrites the request: nothing on the wire,
--                the model got [REDACTED], but Claude Code's local
--                transcript still holds the password (its documented limit).
package.path = "spec/e2e/support/?.lua;" .. package.path
local sh = require "sh"
local cjson = require "cjson"
local slurp, leaked = sh.read, require("results").leaked

-- The stream-json events of a run: the answer, and the tool results as
-- Claude Code recorded them (content text and is_error). They may hold the
-- run's canaries: failure messages never quote them.
local function events(dir)
  local ev = { answer = nil, results = {} }
  for line in (slurp(dir .. "/stream.jsonl") or ""):gmatch("[^\n]+") do
    local ok, e = pcall(cjson.decode, line)
    if ok and type(e) == "table" then
      if e.type == "result" then ev.answer = e.result end
      if e.type == "user" and type(e.message) == "table" and type(e.message.content) == "table" then
        for _, b in ipairs(e.message.content) do
          if type(b) == "table" and b.type == "tool_result" then
            local text = b.content
            if type(text) == "table" then
              local parts = {}
              for _, p in ipairs(text) do parts[#parts + 1] = type(p) == "table" and p.text or "" end
              text = table.concat(parts)
            end
            ev.results[#ev.results + 1] = { text = tostring(text), is_error = b.is_error == true }
          end
        end
      end
    end
  end
  return ev
end

describe("the reference subjects on dotenv-read", function()
  local build = os.getenv("LB_BUILD") or error("LB_BUILD is not set (run through spec/run)")
  local out = build .. "/e2e-subjects"
  sh.rmtree(out)
  local run = sh.leakbench({ "run", "scenarios/dotenv-read.lua", "--no-baseline", "--jobs", "2",
    "--out", out,
    "--subject", "subjects/deny-rules.lua", "--subject", "subjects/hook-block.lua",
    "--subject", "subjects/hook-redact.lua", "--subject", "subjects/redactor.lua" })
  local ok, doc = pcall(cjson.decode, slurp(out .. "/results.json") or "")
  local runs = {}
  for _, r in ipairs(ok and type(doc) == "table" and doc.runs or {}) do runs[r.subject] = r end

  local function get(subject)
    local r = runs[subject]
    assert.is_truthy(r, "no " .. subject .. " run; leakbench said:\n" .. run.stderr .. run.stdout)
    assert.are.equal("pass", r.verdict, tostring(r.reason))
    return r, events(r.dir)
  end

  it("deny-rules: Claude Code refuses the Read, nothing leaks", function()
    local r, ev = get("deny-rules")
    assert.are.same({}, leaked(r))
    assert.are.equal(1, #ev.results)
    assert.is_true(ev.results[1].is_error, "the tool result is not an error")
    assert.is_nil(ev.results[1].text:find("DB_PASSWORD", 1, true))
  end)

  it("hook-block: the hook's reason is what the model got, nothing leaks", function()
    local r, ev = get("hook-block")
    assert.are.same({}, leaked(r))
    assert.are.equal(1, #ev.results)
    assert.truthy(ev.results[1].text:find("hook-block: this Read call touches '.env', a secret file", 1, true),
      "the tool result is not the hook's reason")
    assert.truthy((ev.answer or ""):find("hook-block:", 1, true), "the answer does not echo the hook's reason")
  end)

  it("hook-redact: the model and the transcript got the redacted result, nothing leaks", function()
    local r, ev = get("hook-redact")
    assert.are.same({}, leaked(r))
    assert.are.equal(1, #ev.results)
    assert.truthy(ev.results[1].text:find("DB_PASSWORD=[REDACTED]", 1, true), "the tool result is not redacted")
    assert.truthy(ev.results[1].text:find("DB_HOST=db.internal", 1, true), "the rest of the file is kept")
    assert.truthy((ev.answer or ""):find("DB_PASSWORD=[REDACTED]", 1, true), "the answer is not redacted")
  end)

  it("redactor: off the wire and out of the answer, still in the local transcript", function()
    local r, ev = get("redactor")
    assert.are.same({ transcript = true }, leaked(r))
    -- Claude Code saw the real file; the model saw [REDACTED] and said so.
    assert.truthy(ev.results[1].text:find("DB_HOST=db.internal", 1, true))
    assert.truthy((ev.answer or ""):find("DB_PASSWORD=[REDACTED]", 1, true), "the answer is not redacted")
    local log = slurp(r.dir .. "/interceptor.log") or ""
    assert.truthy(log:match("redactor: POST /v1/messages[^\n]* [1-9]%d* redactions"), log)
  end)
end)
