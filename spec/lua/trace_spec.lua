-- LEAKBENCH_TRACE=FILE (trace.lua): the timeline a process writes of its
-- podman commands, readiness waits and phases, one JSON line each, and
-- nothing at all without the variable. The traced process is a leakbench
-- of its own (the variable is read once per process), driving a fake
-- podman.
local core = require "leakbench.core"
local cjson = require "cjson"
local trace = require "leakbench.trace"

local bin = assert(os.getenv("LEAKBENCH"), "LEAKBENCH is not set")
local dir

-- What the traced process does: a podman command, a readiness wait that
-- succeeds and one that times out, a phase of a run, a secret in an env.
local SCRIPT = [[
local podman = require "leakbench.podman"
local sandbox = require "leakbench.sandbox"
local dir = ...
local pm = podman.new { podman = dir .. "/podman", runtime = "", rootful = true }
assert(pm:podman { "run", "-d", "--name", "lb-traced-up", "-e", "KEY=sk-secret-in-env", "img" })
assert(podman.wait_ready(dir, "up", "listening", 5))
assert(not podman.wait_ready(dir, "up", "never said", 0.2))
local sb = setmetatable({ timings = {} }, sandbox.Sandbox)
sb:phase("stage", function() core.sleep(0.05) end)
]]

local function traced(env)
  assert(core.write_file(dir .. "/script.lua", "local core = require 'leakbench.core'\n" .. SCRIPT))
  local r = assert(core.run { argv = { bin, "lua", dir .. "/script.lua", dir }, env = env, timeout = 30 })
  assert.equal(0, r.status, r.stderr)
  local lines = {}
  for l in (core.read_file(dir .. "/trace.jsonl") or ""):gmatch("[^\n]+") do lines[#lines + 1] = l end
  return lines
end

describe("LEAKBENCH_TRACE", function()
  before_each(function()
    dir = assert(core.tmpdir("lb-trace-spec-"))
    assert(core.write_file(dir .. "/podman", "#!/bin/sh\nsleep 0.1\n", tonumber("755", 8)))
    assert(core.write_file(dir .. "/up.ctr.log", "2026-12-01T00:00:00Z stdout F lb-proxy: listening\n"))
  end)
  after_each(function() core.rmtree(dir) end)

  it("writes a line per podman command, readiness wait and phase, with its times", function()
    local t0 = core.now()
    local lines = traced { LEAKBENCH_TRACE = dir .. "/trace.jsonl" }
    local t1 = core.now()
    local recs = {}
    for _, l in ipairs(lines) do recs[#recs + 1] = cjson.decode(l) end
    local seen = {}
    for _, r in ipairs(recs) do
      seen[#seen + 1] = r.kind .. " " .. r.what
      assert.truthy(r.t0 >= t0 and r.t0 <= r.t1 and r.t1 <= t1, cjson.encode(r))
      assert.is_number(r.pid)
    end
    assert.same({ "cli podman run lb-traced-up", "ready up: listening", "ready up: never said", "phase stage" }, seen)
    -- the command took its 0.1 s, the phase its 0.05 s
    assert.truthy(recs[1].t1 - recs[1].t0 >= 0.1, cjson.encode(recs[1]))
    assert.equal(0, recs[1].status)
    assert.truthy(recs[2].ok)
    assert.equal("timeout", recs[3].why)
    assert.truthy(recs[4].t1 - recs[4].t0 >= 0.05)
    -- a container's environment is no part of it
    assert.is_nil(table.concat(lines):find("sk-secret", 1, true))
  end)

  it("writes nothing without it, or with it empty", function()
    assert.same({}, traced {})
    assert.same({}, traced { LEAKBENCH_TRACE = "" })
    assert.is_nil(core.stat(dir .. "/trace.jsonl"))
  end)

  it("names a podman command by its verb and what it acts on, never its env or command", function()
    assert.equal("podman rm a b", trace.podman { "rm", "-f", "-i", "-t", "0", "a", "b" })
    assert.equal("podman run x", trace.podman { "run", "-d", "--name", "x", "-e", "K=v", "img", "sh", "-c", "v" })
    assert.equal("podman run", trace.podman { "run", "--rm", "-e", "K=v", "img", "cmd" })
    assert.equal("podman image exists foo", trace.podman { "image", "exists", "foo" })
    assert.equal("podman build tag", trace.podman { "build", "--pull=never", "-f", "C", "-t", "tag", "ctx" })
    assert.equal("podman system service unix:///s", trace.podman { "system", "service", "--time=0", "unix:///s" })
  end)
end)
