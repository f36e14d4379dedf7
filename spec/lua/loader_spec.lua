-- Loading scenario and subject files: sandbox, fresh evaluation, checks.
local loader = require "leakbench.loader"

local tmp = os.tmpname()
os.remove(tmp)
assert(os.execute("mkdir -p " .. tmp .. "/subjects " .. tmp .. "/lib"))

local function write(name, text)
  local f = assert(io.open(tmp .. "/" .. name, "w"))
  f:write(text)
  f:close()
  return tmp .. "/" .. name
end

local function load_err(name, text)
  local t, err = loader.load(write(name, text))
  assert.is_nil(t)
  return (err:gsub("^" .. tmp:gsub("%p", "%%%0") .. "/", ""))
end

describe("loader.load", function()
  teardown(function() os.execute("rm -rf " .. tmp) end)

  it("returns a validated scenario with defaults", function()
    local t = assert(loader.load(write("dotenv.lua", [[
local lb = require "leakbench"
return { prompt = "hi", secrets = { lb.canary() } }
]])))
    assert.are.equal("dotenv", t.name)
    assert.are.equal("scenario", t.kind)
    assert.are.same({}, t.tags)
    assert.are.equal(1, #t.secrets)
  end)

  it("evaluates the file afresh each time: new canaries", function()
    local f = write("fresh.lua", [[
local lb = require "leakbench"
return { prompt = "hi", secrets = { lb.canary() } }
]])
    local a, b = loader.load(f), loader.load(f)
    assert.are_not.equal(a.secrets[1], b.secrets[1])
  end)

  it("reports a missing prompt at the return line", function()
    assert.are.equal("noprompt.lua:2: scenario has no 'prompt'",
      load_err("noprompt.lua", "local x = 1\nreturn { name = 'x' }\n"))
  end)

  it("reports wrong types at the field's line", function()
    assert.are.equal("types.lua:3: field 'timeout' is a string, expected a positive number",
      load_err("types.lua", "return {\n  prompt = 'p',\n  timeout = '10',\n}\n"))
    assert.are.equal("types2.lua:1: field 'tags[2]' is a number, expected a string",
      load_err("types2.lua", "return { prompt = 'p', tags = { 'a', 2 } }\n"))
    assert.are.equal("types3.lua:1: field 'max_turns' is a number, expected a positive integer",
      load_err("types3.lua", "return { prompt = 'p', max_turns = 1.5 }\n"))
  end)

  it("takes a secret's destinations, hosts lower-cased, and names a bad one without the secret", function()
    local t = assert(loader.load(write("dest.lua", [[
local k = "sk-live-0123456789abcdef"
return { prompt = "p", secrets = { k }, destinations = { { secret = k, host = "API.Allowed.test" } } }
]])))
    assert.are.same({ { secret = "sk-live-0123456789abcdef", host = "api.allowed.test" } }, t.destinations)
    assert.are.same({}, assert(loader.load(write("nodest.lua", "return { prompt = 'p' }\n"))).destinations)
    assert.are.equal("dest2.lua:2: field 'destinations[1].secret' is not one of the scenario's 'secrets'",
      load_err("dest2.lua", "return { prompt = 'p', secrets = { 'sk-live-0123456789' },\n"
        .. "  destinations = { { secret = 'sk-live-other-secret', host = 'a.test' } } }\n"))
    assert.are.equal("dest3.lua:2: field 'destinations[1].host' is 'a b', expected a DNS name such as "
      .. "'api.example.test'",
      load_err("dest3.lua", "return { prompt = 'p', secrets = { 'sk-live-0123456789' },\n"
        .. "  destinations = { { secret = 'sk-live-0123456789', host = 'a b' } } }\n"))
    assert.are.equal("dest4.lua:1: unknown field 'hosts' in destinations[1] (did you mean 'host'?)",
      load_err("dest4.lua", "return { prompt = 'p', destinations = { { hosts = 'a.test' } } }\n"))
    assert.are.equal("dest5.lua:1: destinations[1] has no 'secret'",
      load_err("dest5.lua", "return { prompt = 'p', destinations = { { host = 'a.test' } } }\n"))
    assert.are.equal("dest6.lua:1: field 'destinations' is a string, expected a list of { secret = ..., "
      .. "host = ... }", load_err("dest6.lua", "return { prompt = 'p', destinations = 'a.test' }\n"))
  end)

  it("takes echo hosts, and names one that is not a DNS name", function()
    local t = assert(loader.load(write("echo.lua", "return { prompt = 'p', echo_hosts = { 'api.allowed.test' } }\n")))
    assert.are.same({ "api.allowed.test" }, t.echo_hosts)
    assert.are.equal("echo2.lua:1: field 'echo_hosts[2]' is 'a/b', expected a DNS name such as 'api.example.test'",
      load_err("echo2.lua", "return { prompt = 'p', echo_hosts = { 'a.test', 'a/b' } }\n"))
  end)

  it("reports unknown fields with a suggestion", function()
    assert.are.equal("typo.lua:2: unknown field 'promt' in scenario (did you mean 'prompt'?)",
      load_err("typo.lua", "return {\n  promt = 'x',\n}\n"))
  end)

  it("reports a file that returns something else than a table", function()
    assert.are.equal("num.lua:2: scenario file returned a number, expected a table",
      load_err("num.lua", "local x = 1\nreturn x\n"))
    assert.are.equal("nothing.lua:1: scenario file returned a nil, expected a table",
      load_err("nothing.lua", "local x = 1\n"))
  end)

  it("reports runtime errors with the file's line", function()
    assert.are.equal("boom.lua:2: attempt to call a nil value (global 'nope')",
      load_err("boom.lua", "local x = 1\nnope()\nreturn {}\n"))
  end)

  it("reports a syntax error", function()
    assert.are.equal("syn.lua:1: unexpected symbol near '}'",
      load_err("syn.lua", "return { prompt = }\n"))
  end)

  it("refuses binary chunks", function()
    local bin = string.dump(function() return { prompt = "x" } end)
    local err = load_err("bin.lua", bin)
    assert.truthy(err:match("attempt to load a binary chunk"), err)
  end)

  it("denies io and os.execute to scenario files", function()
    assert.are.equal("io.lua:1: attempt to index a nil value (global 'io')",
      load_err("io.lua", "io.open('/etc/passwd')\nreturn {}\n"))
    assert.are.equal("ex.lua:1: attempt to call a nil value (field 'execute')",
      load_err("ex.lua", "os.execute('true')\nreturn {}\n"))
  end)

  it("requires modules from lib/ next to the file, text-only", function()
    write("lib/helper.lua", "return { answer = function() return 'forty-two' end }\n")
    local t = assert(loader.load(write("uses.lua",
      "local h = require 'helper'\nreturn { prompt = h.answer() }\n")))
    assert.are.equal("forty-two", t.prompt)
    assert.truthy(load_err("missing.lua", "require 'nothere'\nreturn {}\n")
      :match("^missing.lua:1: module 'nothere' not found:"))
  end)

  it("rejects short secrets and paths that escape the project", function()
    assert.are.equal("short.lua:1: field 'secrets[1]' is 3 bytes long: secrets need at least 8 "
      .. "(shorter ones match ordinary text)",
      load_err("short.lua", "return { prompt = 'p', secrets = { 'abc' } }\n"))
    assert.are.equal("esc.lua:1: field 'files': path '../x' must be relative and stay inside",
      load_err("esc.lua", "return { prompt = 'p', files = { ['../x'] = 'y' } }\n"))
    assert.are.equal("esc2.lua:1: field 'files': path 'a/../../x' must be relative and stay inside",
      load_err("esc2.lua", "return { prompt = 'p', files = { ['a/../../x'] = 'y' } }\n"))
  end)

  it("validates subjects: interceptor needs argv", function()
    assert.are.equal("subjects/icp.lua:2: interceptor has no 'argv'",
      load_err("subjects/icp.lua", "return {\n  interceptor = { image = 'x' },\n}\n"))
    local t = assert(loader.load(write("subjects/ok.lua", [[
return { interceptor = { image = "x", argv = { "redactor" } }, settings = { a = 1 } }
]])))
    assert.are.equal("subject", t.kind)
    assert.are.equal("UPSTREAM_URL", t.interceptor.upstream_env)
    assert.are.equal("listening", t.interceptor.ready)
  end)

  it("refuses a subject or scenario env that sets a variable routing the evidence, at its line", function()
    local msg = "field 'env.%s' is the harness's: it routes the evidence (transcript, requests, lookups, "
      .. "CAs), so a scenario or subject may not set it"
    assert.are.equal("subjects/cfg.lua:3: " .. msg:format("CLAUDE_CONFIG_DIR"),
      load_err("subjects/cfg.lua", "return {\n  env = { A = '1',\n    CLAUDE_CONFIG_DIR = '/tmp/cc' },\n}\n"))
    assert.are.equal("subjects/px.lua:2: " .. msg:format("HTTPS_PROXY"),
      load_err("subjects/px.lua", "return {\n  env = { HTTPS_PROXY = '', HTTP_PROXY = '' },\n}\n"))
    assert.are.equal("home.lua:1: " .. msg:format("HOME"),
      load_err("home.lua", "return { prompt = 'p', env = { HOME = '/tmp' } }\n"))
    assert.are.equal("subjects/mcp.lua:3: field 'mcp.servers.g.env.NODE_EXTRA_CA_CERTS' is the harness's: "
      .. "it routes the evidence (transcript, requests, lookups, CAs), so a scenario or subject may not set it",
      load_err("subjects/mcp.lua", "return { mcp = { servers = { g = { command = 'g',\n"
        .. "  env = {\n    NODE_EXTRA_CA_CERTS = '/x' } } } } }\n"))
    assert.truthy(loader.load(write("subjects/fine.lua", "return { env = { MY_VAR = '1' } }\n")))
  end)

  it("checks the model is a script", function()
    assert.are.equal("m.lua:1: field 'model' is a table, expected lb.script{...}",
      load_err("m.lua", "return { prompt = 'p', model = { 'turn' } }\n"))
  end)
end)

describe("loader.find", function()
  local core = require "leakbench.core"
  it("walks directories in order, skipping lib/ and hidden entries", function()
    local files = loader.find({ "spec/fixtures/list/good" }, core.listdir)
    assert.are.same({ "spec/fixtures/list/good/uses-lib.lua" }, files)
  end)
  it("reports paths that do not exist", function()
    local files, errs = loader.find({ "spec/nope" }, core.listdir)
    assert.are.same({}, files)
    assert.are.same({ "spec/nope: no such file or directory" }, errs)
  end)
end)
