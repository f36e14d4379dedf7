-- The mitm-redactor subject's addon (subjects/mitm-redactor/redact.py)
-- without mitmproxy or containers: its redact() over request bodies as
-- Claude Code sends them (JSON, tool results as escaped strings), with a
-- stand-in for the mitmproxy module. What its README says it redacts is
-- redacted, the body stays valid JSON, ordinary text is left alone, and
-- what it says it cannot see (an encoded secret) goes through.
package.path = "spec/e2e/support/?.lua;" .. package.path
local sh = require "sh"
local cjson = require "cjson"

local ADDON = "subjects/mitm-redactor"

-- redact(BODY) through the addon: the new body and the count.
local function redact(body)
  local prog = [[
import json, sys, types
m = types.ModuleType("mitmproxy")
m.ctx = types.SimpleNamespace(log=types.SimpleNamespace(info=lambda *a: None))
m.http = types.SimpleNamespace(HTTPFlow=object)
sys.modules["mitmproxy"] = m
sys.path.insert(0, sys.argv[1])
import redact
text, n = redact.redact(sys.stdin.read())
sys.stdout.write(json.dumps({"text": text, "n": n}))
]]
  local r = sh.run({ "python3", "-B", "-c", prog, ADDON }, { stdin = body })
  assert.are.equal(0, r.status, r.stderr)
  local out = cjson.decode(r.stdout)
  return out.text, out.n
end

local function body_with(result)
  return cjson.encode({ model = "m", messages = { { role = "user", content = { { type = "tool_result",
    tool_use_id = "t1", content = result } } } } })
end

describe("mitm-redactor's addon", function()
  local key = "sk-live-" .. string.rep("0a1b2c3d", 4)
  local ghp = "ghp_" .. string.rep("A1b2C3d4E5f6", 3)
  local pem = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA1234567890abcdef\n-----END RSA PRIVATE KEY-----"

  it("redacts known token formats, secret-named assignments and PEM keys, and keeps the JSON valid", function()
    local env = "LOG_LEVEL=info\nDB_PASSWORD=hunter2-correct-horse\nSTRIPE=" .. key .. "\nGH=" .. ghp .. "\n"
    local text, n = redact(body_with(env .. pem .. "\n" .. '{"api_token": "tok-1234567890"}'))
    local doc = cjson.decode(text)
    local out = doc.messages[1].content[1].content
    for _, secret in ipairs({ key, ghp, "hunter2-correct-horse", "MIIEowIBAAKCAQEA", "tok-1234567890" }) do
      assert.is_nil(out:find(secret, 1, true), secret .. " went through:\n" .. out)
    end
    assert.truthy(out:find("LOG_LEVEL=info", 1, true), out)
    assert.truthy(out:find("DB_PASSWORD=[REDACTED]", 1, true), out)
    assert.are.equal(5, n)
  end)

  it("leaves a body with nothing secret as it was", function()
    local body = body_with("total 8\n-rw-r--r-- 1 bench bench 42 README.md\nkeyboard layout: us\n")
    local text, n = redact(body)
    assert.are.equal(0, n)
    assert.are.equal(body, text)
  end)

  it("searches a body with long runs of name characters in one pass (no backtracking blow-up)", function()
    local text, n = redact(string.rep("a", 200000) .. " " .. string.rep("key", 50000) .. "=v")
    assert.are.equal(0, n)
    assert.are.equal(350003, #text)
    -- names that are not secrets, each followed by a long value: going on
    -- inside each value must not rescan the rest of the body
    text, n = redact(string.rep("ab=", 100000))
    assert.are.equal(0, n)
    assert.are.equal(300000, #text)
  end)

  it("does not see a secret in another form (its limit: patterns over the raw text)", function()
    local b64 = "c2stbGl2ZS0wYTFiMmMzZDBhMWIyYzNkMGExYjJjM2QwYTFiMmMzZA=="
    local text, n = redact(body_with(b64))
    assert.are.equal(0, n)
    assert.truthy(text:find(b64, 1, true))
  end)
end)
