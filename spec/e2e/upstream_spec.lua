-- The upstream's supervisor, end to end: lb-net runs the scripted model
-- and the recording proxy, in the suite's upstream container (a pair per
-- run) or in the run's own (LEAKBENCH_POOL=0), and a model that dies
-- while Claude Code runs ends the container, so that the run is an error
-- that names lb-model (it was a quiet run with a proxy answering 502s).
-- The model is killed from the host, found by the upstream container's
-- PID namespace, as a crash or the OOM killer would end it.
package.path = "spec/e2e/support/?.lua;" .. package.path
local sh = require "sh"
local cjson = require "cjson"
local pq = require "podman"
local tmpdir, read, must = sh.tmpdir, sh.read, sh.must

local function results(out)
  return cjson.decode(must(read(out .. "/results.json"), "no results.json in " .. out))
end

-- Kills with SIGKILL, from the host, every process called COMM that
-- descends from the container NAME's first process (in its PID namespace
-- or in one beneath it: a run's pair in the suite's upstream has its own).
-- The number killed.
local function kill_in(name, comm)
  local r = sh.run({ "podman", "inspect", "--format", "{{.State.Pid}}", name })
  local pid = must(r.stdout:match("%d+"), "no pid for " .. name .. ": " .. r.stderr)
  local k = sh.run({ "sh", "-c", [[
tree=" $1 "
grew=1
while [ $grew = 1 ]; do
  grew=0
  for p in /proc/[0-9]*; do
    q=${p#/proc/}
    case $tree in *" $q "*) continue ;; esac
    pp=$(cut -d' ' -f4 $p/stat 2>/dev/null) || continue
    case $tree in *" $pp "*) tree="$tree$q "; grew=1 ;; esac
  done
done
n=0
for q in $tree; do
  [ "$(cat /proc/$q/comm 2>/dev/null)" = "$2" ] || continue
  kill -9 $q && n=$((n + 1))
done
echo $n]], "sh", pid, comm })
  return tonumber(k.stdout:match("%d+")) or 0
end

-- Runs nap.lua (ENV before it), and once the claude container runs
-- (Claude Code waits in its Bash call, the model is idle) kills the model
-- in the container SHORT ("pool": the suite's upstream; "up": the run's
-- own). The run's result once the suite has ended.
local function model_killed(out, short, env)
  sh.rmtree(out .. "/res")
  local pid = pq.start_run("spec/fixtures/e2e/nap.lua", out, env)
  local name = pq.await_sibling(out, short, 60)
  assert.truthy(name, "never saw the container " .. short)
  assert.are.equal(1, kill_in(name, "lb-model"))
  assert.truthy(sh.retry(120, function() return not os.execute("kill -0 " .. pid .. " 2>/dev/null") end))
  local run = results(out .. "/res").runs[1]
  assert.are.equal("error", run.verdict, run.reason)
  assert.truthy(run.reason:find("lb-net: 'lb-model' was killed by signal 9", 1, true), run.reason)
  return run
end

describe("a scripted model that dies during the run", function()
  local out = tmpdir()
  teardown(function() sh.rmtree(out) end)

  it("makes the run an error naming lb-model: in the suite's upstream container", function()
    local run = model_killed(out, "pool")
    assert.truthy(run.reason:match("^the recording proxy and the scripted model of the suite's upstream container "
      .. "'[%w-]+' ended during the run %(exited 1%); their log:\n"), run.reason)
    -- nothing of the suite is left: the pool's container went with the suite
    assert.same({}, pq.containers("leakbench.suite=" .. pq.suite_of(out .. "/res")))
  end)

  it("makes the run an error naming lb-model: in the run's own (LEAKBENCH_POOL=0)", function()
    local run = model_killed(out, "up", "LEAKBENCH_POOL=0")
    assert.truthy(run.reason:match("^container 'lb%-[%w-]+%-up' died during the run; its log:\n"), run.reason)
  end)
end)
