-- The scenario author's module: canaries, scripts, faults, files, expect.
local lb = require "leakbench"
local cjson = require "cjson"

describe("lb.canary", function()
  it("is the prefix then 32 hex digits, unique per call", function()
    local seen = {}
    for _ = 1, 1000 do
      local c = lb.canary("sk-live-")
      assert.truthy(c:match("^sk%-live%-%x+$"), c)
      assert.are.equal(#"sk-live-" + 32, #c)
      assert.is_nil(seen[c])
      seen[c] = true
    end
  end)

  it("has a recognisable default prefix", function()
    assert.truthy(lb.canary():match("^LEAKBENCH%-CANARY%-%x+$"))
  end)

  it("rejects a prefix that is not a string, blaming the caller", function()
    local ok, err = pcall(lb.canary, 12)
    assert.is_false(ok)
    assert.truthy(err:find('lb.canary: wrong parameter "prefix": expected string, got number', 1, true), err)
  end)
end)

describe("lb.script", function()
  it("normalizes turns of one block or many, with faults", function()
    local s = lb.script {
      { lb.say("Let me look."), lb.use("Read", { file_path = "/work/.env" }) },
      { lb.use("Bash", { command = "ls" }), faults = { lb.fault.overloaded() } },
      lb.say("done {{last_result}}"),
      final = "bye",
    }
    assert.are.equal(3, #s.turns)
    assert.are.equal(2, #s.turns[1].blocks)
    assert.are.equal(529, s.turns[2].faults[1].status)
    local doc = cjson.decode(lb.script_json(s))
    assert.are.equal(1, doc.version)
    assert.are.equal("bye", doc.final)
    assert.are.equal("Read", doc.turns[1].blocks[2].name)
    assert.are.equal("/work/.env", doc.turns[1].blocks[2].input.file_path)
    assert.are.equal("http", doc.turns[2].faults[1].kind)
    assert.are.equal("done {{last_result}}", doc.turns[3].blocks[1].text)
  end)

  it("encodes an empty tool input as an object, not an array", function()
    local json = lb.script_json(lb.script { lb.use("TodoRead") })
    assert.truthy(json:find('"input":{}', 1, true), json)
  end)

  it("rejects a turn that is not a block", function()
    local ok, err = pcall(lb.script, { "just a string" })
    assert.is_false(ok)
    assert.truthy(err:find('lb.script: wrong parameter "script[1]": expected a block or a list of blocks, '
      .. "got string", 1, true), err)
  end)

  it("rejects unknown fields in a turn and in the script", function()
    local ok, err = pcall(lb.script, { { lb.say("x"), fualts = {} } })
    assert.is_false(ok)
    assert.truthy(err:find('lb.script: wrong parameter "script[1].fualts": not a field of a turn', 1, true), err)
    ok, err = pcall(lb.script, { lb.say("x"), finale = "y" })
    assert.is_false(ok)
    assert.truthy(err:find('lb.script: wrong parameter "script.finale": not a field of lb.script', 1, true), err)
  end)

  it("rejects a text-only turn before other turns: they could never be played", function()
    local ok, err = pcall(lb.script, { lb.say("done"), { lb.use("Bash", { command = "ls" }) } })
    assert.is_false(ok)
    assert.truthy(err:find('lb.script: wrong parameter "script[1]": it has no lb.use, so it ends the conversation '
      .. "and script[2] can never be played", 1, true), err)
  end)

  it("takes a subagent script, as lb.script or as a plain table of turns", function()
    local sub = lb.script {
      { lb.say("Reading."), lb.use("Read", { file_path = "/work/.env" }) },
      lb.say("{{last_result}}"),
      final = "sub done",
    }
    local s = lb.script {
      lb.use("Agent", { description = "Read .env", prompt = "Read /work/.env", subagent_type = "general-purpose" }),
      lb.say("It reported: {{last_result}}"),
      subagent = sub,
    }
    assert.are.equal(sub, s.subagent)
    local doc = cjson.decode(lb.script_json(s))
    assert.are.equal("Agent", doc.turns[1].blocks[1].name)
    assert.are.same({ "final", "turns" }, (function()
      local k = {}
      for key in pairs(doc.subagent) do k[#k + 1] = key end
      table.sort(k)
      return k
    end)())
    assert.are.equal("sub done", doc.subagent.final)
    assert.are.equal(2, #doc.subagent.turns)
    assert.are.equal("Reading.", doc.subagent.turns[1].blocks[1].text)
    assert.are.equal("/work/.env", doc.subagent.turns[1].blocks[2].input.file_path)
    assert.are.equal("{{last_result}}", doc.subagent.turns[2].blocks[1].text)

    -- the plain table is normalized to the same document
    local plain = lb.script {
      lb.use("Agent", { description = "Read .env", prompt = "Read /work/.env", subagent_type = "general-purpose" }),
      lb.say("It reported: {{last_result}}"),
      subagent = {
        { lb.say("Reading."), lb.use("Read", { file_path = "/work/.env" }) },
        lb.say("{{last_result}}"),
        final = "sub done",
      },
    }
    assert.is_true(lb.is(plain.subagent, lb.SCRIPT))
    assert.are.equal(lb.script_json(s), lb.script_json(plain))
  end)

  it("writes no subagent without one, and an empty one as an empty list of turns", function()
    assert.is_nil(cjson.decode(lb.script_json(lb.script { lb.say("hi") })).subagent)
    local json = lb.script_json(lb.script { lb.use("Agent", { prompt = "x" }), subagent = {} })
    assert.truthy(json:find('"subagent":{"turns":[]}', 1, true), json)
  end)

  it("rejects a subagent with its own subagent or max_requests, or of the wrong kind", function()
    local line
    local ok, err = pcall(function()
      line = debug.getinfo(1, "l").currentline + 1
      local s = lb.script { lb.use("Agent"), subagent = { lb.use("Agent"), subagent = { lb.say("x") } } }
      return s
    end)
    assert.is_false(ok)
    assert.are.equal("spec/lua/leakbench_spec.lua:" .. line .. ": lb.script: wrong parameter "
      .. '"script.subagent.subagent": a subagent script cannot have a subagent', err)
    local inner = lb.script { lb.use("Agent"), subagent = { lb.say("x") } }
    ok, err = pcall(function()
      line = debug.getinfo(1, "l").currentline + 1
      local s = lb.script { lb.use("Agent"), subagent = inner }
      return s
    end)
    assert.is_false(ok)
    assert.are.equal("spec/lua/leakbench_spec.lua:" .. line .. ": lb.script: wrong parameter "
      .. '"script.subagent.subagent": a subagent script cannot have a subagent', err)
    ok, err = pcall(function()
      line = debug.getinfo(1, "l").currentline + 1
      local s = lb.script { lb.use("Agent"), subagent = { lb.say("x"), max_requests = 5 } }
      return s
    end)
    assert.is_false(ok)
    assert.are.equal("spec/lua/leakbench_spec.lua:" .. line .. ": lb.script: wrong parameter "
      .. '"script.subagent.max_requests": it belongs to the main script', err)
    ok, err = pcall(lb.script, { lb.use("Agent"), subagent = lb.script { lb.say("x"), max_requests = 5 } })
    assert.is_false(ok)
    assert.truthy(err:find('"script.subagent.max_requests": it belongs to the main script', 1, true), err)
    for _, bad in ipairs({ "turns", 3, lb.say("x") }) do
      ok, err = pcall(lb.script, { lb.use("Agent"), subagent = bad })
      assert.is_false(ok)
      assert.truthy(err:find('lb.script: wrong parameter "script.subagent": expected lb.script or a table of '
        .. "turns, got", 1, true), err)
    end
  end)

  it("refuses a subagent that calls Agent or Task (it would replay itself)", function()
    local line
    local ok, err = pcall(function()
      line = debug.getinfo(1, "l").currentline + 1
      local s = lb.script { lb.use("Agent"), subagent = { lb.use("Read"), lb.use("Agent"), lb.say("x") } }
      return s
    end)
    assert.is_false(ok)
    assert.are.equal("spec/lua/leakbench_spec.lua:" .. line .. ": lb.script: wrong parameter "
      .. '"script.subagent[2]": a subagent cannot call Agent: it would spawn subagents that play this script again',
      err)
    ok, err = pcall(lb.script, { lb.use("Agent"), subagent = lb.script { lb.use("Task"), lb.say("x") } })
    assert.is_false(ok)
    assert.truthy(err:find('"script.subagent[1]": a subagent cannot call Task', 1, true), err)
    assert.truthy(pcall(lb.script, { lb.use("Agent"), subagent = { lb.use("Read"), lb.say("x") } }))
  end)

  it("checks a plain subagent's turns like the main script's, naming them", function()
    local line
    local ok, err = pcall(function()
      line = debug.getinfo(1, "l").currentline + 1
      local s = lb.script { lb.use("Agent"), subagent = { lb.say("x"), { "not a block" } } }
      return s
    end)
    assert.is_false(ok)
    assert.are.equal("spec/lua/leakbench_spec.lua:" .. line .. ": lb.script: wrong parameter "
      .. '"script.subagent[2][1]": expected lb.say, lb.think or lb.use, got string', err)
    ok, err = pcall(function()
      line = debug.getinfo(1, "l").currentline + 1
      local s = lb.script { lb.use("Agent"), subagent = { lb.say("done"), lb.use("Read") } }
      return s
    end)
    assert.is_false(ok)
    assert.are.equal("spec/lua/leakbench_spec.lua:" .. line .. ": lb.script: wrong parameter "
      .. '"script.subagent[1]": it has no lb.use, so it ends the conversation and script.subagent[2] can never '
      .. "be played", err)
    ok, err = pcall(function()
      line = debug.getinfo(1, "l").currentline + 1
      local s = lb.script { lb.use("Agent"), subagent = { lb.say("x"), final = 1 } }
      return s
    end)
    assert.is_false(ok)
    assert.are.equal("spec/lua/leakbench_spec.lua:" .. line .. ": lb.script: wrong parameter "
      .. '"script.subagent.final": expected string, got number', err)
    ok, err = pcall(function()
      line = debug.getinfo(1, "l").currentline + 1
      local s = lb.script { lb.use("Agent"), subagent = { lb.say("x"), extra = 1 } }
      return s
    end)
    assert.is_false(ok)
    assert.are.equal("spec/lua/leakbench_spec.lua:" .. line .. ": lb.script: wrong parameter "
      .. '"script.subagent.extra": not a field of lb.script', err)
  end)

  it("blames the caller's line for the main script's turns too", function()
    local line
    local ok, err = pcall(function()
      line = debug.getinfo(1, "l").currentline + 1
      local s = lb.script { lb.say("x"), { faults = 3 } }
      return s
    end)
    assert.is_false(ok)
    assert.are.equal("spec/lua/leakbench_spec.lua:" .. line .. ": lb.script: wrong parameter "
      .. '"script[2].faults": expected a list of lb.fault, got number', err)
  end)

  it("checks fault arguments", function()
    assert.has_error(function() lb.fault.http(200) end,
      'lb.fault.http: wrong parameter "status": expected an HTTP error status 400-599, got 200')
    assert.has_error(function() lb.fault.delay(-1) end,
      'lb.fault.delay: wrong parameter "ms": expected a non-negative integer of milliseconds, got -1')
  end)
end)

describe("lb.use and lb.say", function()
  it("reject wrong types with the caller's line", function()
    local ok, err = pcall(function() local b = lb.use(42); return b end)
    assert.is_false(ok)
    assert.truthy(err:match('leakbench_spec%.lua:%d+: lb%.use: wrong parameter "name"'), err)
    ok, err = pcall(function() return lb.say({}) end)
    assert.is_false(ok)
    assert.truthy(err:find('lb.say: wrong parameter "text": expected string, got table', 1, true), err)
  end)
end)

describe("lb.file", function()
  it("reads a file relative to the calling file, with its mode", function()
    local f = lb.file("../fixtures/list/good/lib/common.lua")
    assert.truthy(f.data:match("env_file"))
    assert.truthy(f.path:match("spec/lua/%.%./fixtures/list/good/lib/common%.lua$"), f.path)
    assert.are.equal("number", type(f.mode))
  end)

  it("names the file it cannot read", function()
    local ok, err = pcall(lb.file, "/nonexistent/x")
    assert.is_false(ok)
    assert.truthy(err:match("cannot read file '/nonexistent/x': No such file or directory"), err)
  end)
end)

describe("lb.expect", function()
  it("returns the condition when it holds", function()
    assert.are.equal(7, lb.expect(7, "seven"))
  end)

  it("fails with the caller's file:line and the message", function()
    local line
    local ok, err = pcall(function()
      line = debug.getinfo(1, "l").currentline + 1
      lb.expect(false, "the agent read .env")
    end)
    assert.is_false(ok)
    assert.is_true(err.check_failed)
    assert.are.equal("the agent read .env", err.message)
    assert.are.equal("spec/lua/leakbench_spec.lua:" .. line, err.where)
    assert.are.equal("spec/lua/leakbench_spec.lua:" .. line .. ": the agent read .env", tostring(err))
  end)
end)
