-- One complete run under rootless podman (the seed's default): the user
-- lbrootless that .ci/rootless-setup makes runs leakbench from a copy of
-- the source tree, with the images the tests built as root loaded into its
-- own store. Claude Code runs as uid 1000 inside through
-- --userns=keep-id:uid=1000,gid=1000, so what it writes is the user's on
-- the host. Skipped (and said so) on a machine without that user.
package.path = "spec/e2e/support/?.lua;" .. package.path
local sh = require "sh"
local cjson = require "cjson"
local pq = require "podman"
local read, must, quote = sh.read, sh.must, sh.quote

local USER = "lbrootless"

local function as_user(cmd)
  return sh.run({ "runuser", "-u", USER, "--", "sh", "-c", "cd ~ && " .. cmd })
end

local function why_not()
  if sh.run({ "id", "-u" }).stdout ~= "0\n" then return "not root: cannot act as " .. USER end
  if sh.run({ "id", USER }).status ~= 0 then
    return "no user " .. USER .. " (run .ci/rootless-setup as root)"
  end
  if sh.run({ "grep", "-q", "^" .. USER .. ":", "/etc/subuid" }).status ~= 0 then
    return "no subordinate uids for " .. USER
  end
  -- The machine itself must allow a user namespace (some kernels or
  -- sandboxes forbid them); that is podman's business, not leakbench's.
  local u = as_user("podman unshare true")
  if u.status ~= 0 then
    return "rootless podman cannot make a user namespace here: "
      .. ((u.stderr:match("Error: ([^\n]+)")) or u.stderr:match("[^\n]+") or "")
  end
  return nil
end

describe("leakbench run under rootless podman", function()
  local skip = why_not()
  if skip then
    pending(skip)
    return
  end
  local top = sh.run({ "pwd" }).stdout:gsub("\n$", "")
  local dir, r, doc, run, proxy_tag

  setup(function()
    dir = must(sh.run({ "mktemp", "-d", "/tmp/lb-rootless.XXXXXX" }).stdout:match("%S+"))
    -- A copy of what the image tags hash and the run needs, owned by the user.
    for _, rel in ipairs({ "Makefile", "containers", "src", "spec/fixtures/e2e",
                           "spec/e2e/support/service_creates.lua" }) do
      sh.run({ "mkdir", "-p", dir .. "/tree/" .. rel:match("^(.-)/?[^/]*$") })
      local c = sh.run({ "cp", "-r", top .. "/" .. rel, dir .. "/tree/" .. rel })
      assert(c.status == 0, c.stderr)
    end
    assert(sh.run({ "cp", os.getenv("LEAKBENCH"), dir .. "/tree/leakbench" }).status == 0)
    assert(sh.run({ "chown", "-R", USER .. ":", dir }).status == 0)
    assert(sh.run({ "chmod", "755", dir }).status == 0)
    -- The images, from root's store into the user's (unless there already).
    local tags = {}
    for line in sh.leakbench({ "build" }).stdout:gmatch("[^\n]+") do
      local what, tag = line:match("^(%a+)%s+(%S+)$")
      if what then tags[#tags + 1] = tag end
      if what == "proxy" then proxy_tag = tag end
    end
    assert(#tags == 3, "leakbench build did not name 3 images")
    pq.rootless_images(USER, tags)
    r = as_user("cd " .. quote(dir .. "/tree") .. " && ./leakbench run spec/fixtures/e2e/three-turns.lua --out "
      .. quote(dir .. "/out"))
    doc = cjson.decode(must(read(dir .. "/out/results.json"), "no results.json: " .. r.stderr))
    run = doc.runs[1]
  end)

  teardown(function()
    if dir then sh.rmtree(dir) end
  end)

  it("passes, with the evidence complete", function()
    assert.are.equal("pass", run.verdict, tostring(run.reason) .. "\n" .. r.stderr)
    assert.are.equal(0, r.status, r.stderr)
    local wire = must(read(run.dir .. "/records/wire.jsonl"), "no wire records")
    assert.truthy(wire:find("What is the database password", 1, true))
    assert.truthy(read(run.dir .. "/stream.jsonl"):find('"type":"result"', 1, true))
  end)

  it("ran Claude Code as uid 1000 mapped to the user: every artifact is the user's", function()
    local transcript = sh.run({ "find", run.dir .. "/claude-config/projects", "-name", "*.jsonl" }).stdout
    assert.truthy(transcript:find("%.jsonl"), "no transcript")
    local foreign = sh.run({ "find", dir .. "/out", "!", "-user", USER })
    assert.are.equal("", foreign.stdout)
  end)

  it("is sealed the same way: probed from inside, loopback, the bridge, the trap, its simulated internet", function()
    local host = sh.run({ "hostname", "-I" }).stdout:gsub("%s+$", "")
    local text = must(read(top .. "/spec/fixtures/e2e/isolation/probe.lua.in"), "no probe template")
    text = text:gsub("@(%u[%u_]*)@", { HOST_ADDRS = host, HOST_PORT = "9", PEER_PORT = "7" })
    local f = assert(io.open(dir .. "/probe.lua", "wb"))
    f:write(text)
    f:close()
    sh.run({ "chown", USER .. ":", dir .. "/probe.lua" })
    local p = as_user("cd " .. quote(dir .. "/tree") .. " && ./leakbench run " .. quote(dir .. "/probe.lua")
      .. " --out " .. quote(dir .. "/probe-out"))
    local pdoc = cjson.decode(must(read(dir .. "/probe-out/results.json"), "no results.json: " .. p.stderr))
    local prun = pdoc.runs[1]
    assert.are.equal("pass", prun.verdict, tostring(prun.reason))
    local answer = ""
    for line in (read(prun.dir .. "/stream.jsonl") or ""):gmatch("[^\n]+") do
      local ok, ev = pcall(cjson.decode, line)
      if ok and ev.type == "result" then answer = ev.result end
    end
    assert.matches("IFACES lo \n", answer, 1, true)
    assert.matches("ROUTES4 0\n", answer, 1, true)
    assert.matches("NAMESERVERS 127.0.0.1 \n", answer, 1, true)
    assert.matches("LISTEN-TCP 127.0.0.1:1 127.0.0.1:3128 127.0.0.1:53 127.0.0.1:8080 \n", answer, 1, true)
    assert.matches("LISTEN-UDP 127.0.0.1:1 127.0.0.1:53 \n", answer, 1, true)
    for a in host:gmatch("%S+") do assert.matches("REACH host-" .. a .. " no", answer, 1, true) end
    -- The simulated internet, set up in the sidecar's user namespace: the
    -- same local route on lo and nothing else, which the agent cannot remove.
    assert.matches("RESOLVE 198%.1[89]%.%d+%.%d+\n", answer)
    assert.matches("ROUTES-ALL broadcast 127.255.255.255 dev lo table local proto kernel scope link src 127.0.0.1 ;"
      .. "local 127.0.0.0/8 dev lo table local proto kernel scope host src 127.0.0.1 ;"
      .. "local 127.0.0.1 dev lo table local proto kernel scope host src 127.0.0.1 ;"
      .. "local 198.18.0.0/15 dev lo table local scope host ;\n", answer, 1, true)
    assert.matches("RULES 0: from all lookup local;32766: from all lookup main;32767: from all lookup default;\n",
      answer, 1, true)
    assert.matches("ROUTE-DEL no\n", answer, 1, true)
    assert.matches("REACH simulated%-198%.1[89]%.%d+%.%d+ yes", answer)
  end)

  it("shows no path of the run, its --out dir or the source tree in the claude container's mount table", function()
    local p = as_user("cd " .. quote(dir .. "/tree") .. " && ./leakbench run spec/fixtures/e2e/isolation/host-paths.lua"
      .. " --out " .. quote(dir .. "/paths-out"))
    local pdoc = cjson.decode(must(read(dir .. "/paths-out/results.json"), "no results.json: " .. p.stderr))
    local prun = pdoc.runs[1]
    assert.are.equal("pass", prun.verdict, tostring(prun.reason))
    local answer = ""
    for line in (read(prun.dir .. "/stream.jsonl") or ""):gmatch("[^\n]+") do
      local ok, ev = pcall(cjson.decode, line)
      if ok and ev.type == "result" then answer = ev.result end
    end
    local mounts = must(answer:match("MOUNTINFO%-BEGIN\n(.-)MOUNTINFO%-END"), answer)
    assert.matches(" /work ", mounts, 1, true)
    -- (podman's own storage, under the user's home, names the image
    -- layers of the root file system: podman offers no way to hide it)
    for _, path in ipairs({ dir, prun.dir }) do
      assert.is_nil(mounts:find(path, 1, true), ("'%s' is in the mount table:\n%s"):format(path, mounts))
    end
    assert.are.equal("", must(answer:match("CMDLINE%-BEGIN\n(.-)CMDLINE%-END"), answer))
  end)

  it("keeps what Claude Code wrote to a transcript the agent rewrites, and says it changed (no append-only here)",
    function()
      local p = as_user("cd " .. quote(dir .. "/tree") .. " && ./leakbench run "
        .. "spec/fixtures/e2e/evidence/tamper-rewrite.lua --out " .. quote(dir .. "/tamper-out"))
      local tdoc = cjson.decode(must(read(dir .. "/tamper-out/results.json"), "no results.json: " .. p.stderr))
      local trun = tdoc.runs[1]
      assert.are.equal("pass", trun.verdict, tostring(trun.reason))
      local final = must(read(trun.dir .. "/claude-config/projects/-work/" .. trun.session_id .. ".jsonl"))
      assert.is_nil(final:find("sk%-tamper%-%x"), "the tamperer did not take the canary out")
      assert.truthy(trun.leaks[1].channels.transcript.leaked, "T is gone")
      assert.are.equal("replaced", must(trun.tampered, "no change recorded")[1].how)
      assert.matches("^leak W T · tampered T", p.stdout:match("tamper%-rewrite%s+([^\n]*)"))
    end)

  -- podman 4.3's rootless service crashes (SIGSEGV in libsubid) on creates
  -- that come at once; the runs of a suite share it, and a run sends its
  -- own side by side: svc:create takes one lock for them all. Without it,
  -- this case failed in 4 of 4 tries here (the service dead, or HTTP 500).
  it("creates containers sent at once by 8 processes through one service, 10 times over", function()
    local c = as_user("cd " .. quote(dir .. "/tree") .. " && mkdir -p ../creates && ./leakbench lua "
      .. "spec/e2e/support/service_creates.lua " .. quote(dir .. "/creates") .. " " .. quote(proxy_tag) .. " 8 10")
    assert.are.equal(0, c.status, c.stderr)
    local ok, lines = 0, {}
    for line in c.stdout:gmatch("[^\n]+") do
      if line:match("^lb%-creates%-%d+%-%d+ 201$") then ok = ok + 1 else lines[#lines + 1] = line end
    end
    assert.are.equal(80, ok, table.concat(lines, "\n"))
    assert.are.same({ "service alive" }, lines)
    assert.is_nil(sh.run({ "stat", dir .. "/creates/podman-create.lock" }).stdout:match("%S"))
  end)

  it("leaves no container and no network in the user's podman", function()
    assert.are.equal("", as_user("podman ps -a --filter label=leakbench=1 --format '{{.Names}}'").stdout)
    assert.are.equal("", as_user("podman network ls --filter label=leakbench=1 --format '{{.Name}}'").stdout)
  end)
end)
