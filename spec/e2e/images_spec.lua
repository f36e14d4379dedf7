-- End to end with real podman: builds the images through leakbench.images
-- (no registry is asked: the base comes from the Debian mirror), checks that
-- a second build is a no-op, that tags follow the files they hash, runs the
-- claude image with the sandbox's rootful flags, runs the servers' --help,
-- and exercises podman.lua's verbs, `clean` and `doctor` on real containers.
--
-- Plain busted (lua5.4) cannot spawn from an argv array, so each step is a
-- Lua chunk run inside the leakbench binary ($LEAKBENCH lua FILE), where
-- core.run does the spawning; the chunk's return value comes back as JSON.
-- The first build takes minutes (Claude Code is a 400 MB download).
local cjson = require "cjson"

local LEAKBENCH = assert(os.getenv("LEAKBENCH"), "LEAKBENCH is not set (run via spec/run)")
local VERSION = "2.1.332"

local function q(s)
  return "'" .. tostring(s):gsub("'", "'\\''") .. "'"
end

local tmp = os.tmpname()

-- Runs `code` (a Lua chunk returning a table) inside leakbench, with env
-- ("NAME=value ..." words, already quoted) prepended; returns the table and
-- everything the chunk printed (stdout and stderr, kept out of the TAP stream).
local function inside(code, env)
  local script, out, err = tmp .. ".lua", tmp .. ".json", tmp .. ".err"
  local f = assert(io.open(script, "w"))
  f:write("local core = require 'leakbench.core'\n",
          "local podman = require 'leakbench.podman'\n",
          "local images = require 'leakbench.images'\n",
          "local cjson = require 'cjson'\n",
          "local result = (function() ", code, "\nend)()\n",
          "local f = assert(io.open(", ("%q"):format(out), ", 'w'))\n",
          "f:write(cjson.encode(result)) f:close()\n")
  f:close()
  os.remove(out)
  local ok = os.execute(("%s %s lua %s >%s 2>&1"):format(env or "", q(LEAKBENCH), q(script), q(err)))
  local ef = io.open(err)
  local stderr = ef and ef:read("a") or ""
  if ef then ef:close() end
  local rf = io.open(out)
  assert(ok and rf, "leakbench lua failed:\n" .. stderr)
  local result = cjson.decode(rf:read("a"))
  rf:close()
  os.remove(script)
  os.remove(out)
  os.remove(err)
  return result, stderr
end

local tags

describe("leakbench images", function()
  teardown(function() os.remove(tmp) end)

  it("builds whatever is missing, and a second time nothing, quickly", function()
    local r, stderr = inside [[
      core.trap_signals()
      local pm = podman.get()
      local t0 = core.now()
      local first = assert(images.ensure(pm, { base = "debootstrap" }))
      local t1 = core.now()
      local second = assert(images.ensure(pm, { base = "debootstrap", progress = false }))
      local t2 = core.now()
      return { first = first, second = second, t_first = t1 - t0, t_second = t2 - t1 }
    ]]
    io.stderr:write(stderr)
    tags = r.second
    assert.same(r.first.claude, r.second.claude)
    assert.same(r.first.proxy, r.second.proxy)
    assert.same({}, r.second.built)
    assert.matches("^localhost/leakbench%-claude:" .. VERSION:gsub("%.", "%%.")
      .. "%-%x%x%x%x%x%x%x%x%x%x%x%x$", tags.claude)
    assert.matches("^localhost/leakbench%-proxy:%x+$", tags.proxy)
    assert.matches("^localhost/leakbench%-base:bookworm%-%x+$", tags.base)
    assert.is_true(r.t_second < 3, ("second ensure took %.2f s"):format(r.t_second))
    print(("# first ensure %.0f s, second %.2f s"):format(r.t_first, r.t_second))
  end)

  it("changes a tag exactly when a file it hashes changes", function()
    local r = inside [[
      local root = assert(images.root())
      local copy = assert(core.tmpdir("lb-e2e-tree-"))
      local function cp(rel)
        core.mkdir_p((copy .. "/" .. rel):match("^(.*)/"))
        assert(core.write_file(copy .. "/" .. rel, assert(core.read_file(root .. "/" .. rel))))
      end
      cp("Makefile")
      cp("containers/claude.Containerfile")
      cp("containers/proxy.Containerfile")
      for _, rel in ipairs(images.proxy_files(root)) do cp(rel) end
      local function t(v) return assert(images.tags_for(copy, "B", v or "2.1.332")) end
      local out = { base = t() }
      out.same_tree = t()
      out.version = t("2.1.333")
      core.mkdir_p(copy .. "/src/lua")
      core.write_file(copy .. "/src/lua/x.lua", "return 1\n")
      out.lua_edit = t()
      core.mkdir_p(copy .. "/src/proxy")
      core.write_file(copy .. "/src/proxy/extra.c", "/* new */\n")
      out.proxy_edit = t()
      core.write_file(copy .. "/containers/claude.Containerfile",
        core.read_file(copy .. "/containers/claude.Containerfile") .. "\n# edit\n")
      out.claude_edit = t()
      out.other_base = assert(images.tags_for(copy, "C", "2.1.332"))
      core.rmtree(copy)
      out.real = assert(images.tags { root = root, base = "debootstrap" })
      return out
    ]]
    assert.same(r.base, r.same_tree)
    assert.are_not.equal(r.base.claude, r.version.claude)
    assert.equal(r.base.proxy, r.version.proxy)
    assert.same(r.base, r.lua_edit)                       -- src/lua is not in either image
    assert.equal(r.base.claude, r.proxy_edit.claude)
    assert.are_not.equal(r.base.proxy, r.proxy_edit.proxy)
    assert.are_not.equal(r.proxy_edit.claude, r.claude_edit.claude)
    assert.equal(r.proxy_edit.proxy, r.claude_edit.proxy)
    assert.are_not.equal(r.claude_edit.claude, r.other_base.claude)
    assert.are_not.equal(r.claude_edit.proxy, r.other_base.proxy)
    if tags then
      assert.equal(tags.claude, r.real.claude)
      assert.equal(tags.proxy, r.real.proxy)
    end
  end)

  it("runs Claude Code as uid 1000 with the sandbox's flags, /work writable", function()
    assert.truthy(tags, "the build test must pass first")
    local r = inside(([[
      local pm = podman.get()
      local image = %q
      local flags = { "run", "--rm", "--read-only", "--cap-drop=all",
        "--security-opt=no-new-privileges", "--tmpfs", "/tmp",
        "--tmpfs", "/home/bench:rw,mode=1777", "--network", "none" }
      for _, v in ipairs(pm:run_args()) do flags[#flags + 1] = v end
      local function run(extra)
        local argv = {}
        for _, v in ipairs(flags) do argv[#argv + 1] = v end
        for _, v in ipairs(extra) do argv[#argv + 1] = v end
        local res, err, raw = pm:podman(argv, { timeout = 120 })
        return res and res.stdout or ("ERROR " .. err .. " " .. (raw and raw.stderr or ""))
      end
      local work = assert(core.tmpdir("lb-e2e-work-"))
      if pm.rootful then assert(core.chown(work, 1000, 1000, true)) end
      local out = {
        version = run { image, "--version" },
        id = run { "--entrypoint", "id", image, "-u" },
        home = run { "--entrypoint", "sh", image, "-c", "touch $HOME/x && echo $HOME" },
        work = run { "-v", work .. ":/work", "--entrypoint", "sh", image, "-c",
                     "echo hello > /work/f && id -un" },
        tools = run { "--entrypoint", "sh", image, "-c",
                      "for t in bash git rg python3; do command -v $t >/dev/null || echo missing $t; done; python3 -c \"import json, base64, subprocess\" && echo checked" },
        ro = run { "--entrypoint", "sh", image, "-c", "touch /usr/x 2>/dev/null || echo read-only" },
      }
      out.written = core.read_file(work .. "/f")
      core.rmtree(work)
      return out
    ]]):format(tags.claude))
    assert.equal(VERSION .. " (Claude Code)\n", r.version)
    assert.equal("1000\n", r.id)
    assert.equal("/home/bench\n", r.home)
    assert.equal("bench\n", r.work)
    assert.equal("hello\n", r.written)
    assert.equal("checked\n", r.tools)
    assert.equal("read-only\n", r.ro)
  end)

  it("runs the servers from the proxy image as a non-root user", function()
    assert.truthy(tags, "the build test must pass first")
    local r = inside(([[
      local pm = podman.get()
      local image = %q
      local base = { "run", "--rm", "--network", "none" }
      for _, v in ipairs(pm:ulimit_args()) do base[#base + 1] = v end
      local function run(extra)
        local argv = {}
        for _, v in ipairs(base) do argv[#argv + 1] = v end
        for _, v in ipairs(extra) do argv[#argv + 1] = v end
        local res, err = pm:podman(argv, { timeout = 60 })
        return res and (res.stdout .. res.stderr) or ("ERROR " .. err)
      end
      return { uid = run { image, "id", "-u" },
               bins = run { image, "sh", "-c", "ls /usr/local/bin" },
               proxy = run { image, "lb-proxy", "--help" },
               model = run { image, "lb-model", "--help" } }
    ]]):format(tags.proxy))
    assert.equal("1000\n", r.uid)
    -- Both servers are built (src/proxy, src/model): a missing one fails.
    for _, name in ipairs { "proxy", "model" } do
      assert.truthy(r.bins:find("lb-" .. name .. "\n", 1, true),
        "lb-" .. name .. " is not in the image's /usr/local/bin: " .. r.bins)
      assert.matches("lb%-" .. name, r[name])
      assert.not_matches("^ERROR", r[name])
    end
  end)

  it("creates labelled networks and containers, follows logs, cleans leftovers", function()
    assert.truthy(tags, "the build test must pass first")
    local run_id = "e2e" .. tostring(os.time())
    -- A first leakbench process leaves a network and a container behind.
    local left = inside(([[
      local pm = podman.get()
      local id = %q
      local net = { "network", "create", "--internal" }
      for _, v in ipairs(pm:label_args(id)) do net[#net + 1] = v end
      net[#net + 1] = "lb-e2e-left-" .. id
      assert(pm:podman(net))
      local argv = { "run", "-d", "--name", "lb-e2e-left-" .. id, "--network", "lb-e2e-left-" .. id }
      local logs_dir = assert(core.tmpdir("lb-e2e-logs-"))
      for _, v in ipairs(pm:run_args()) do argv[#argv + 1] = v end
      for _, v in ipairs(pm:label_args(id)) do argv[#argv + 1] = v end
      for _, v in ipairs(pm:log_args(logs_dir, "left")) do argv[#argv + 1] = v end
      for _, v in ipairs { "--entrypoint", "sh", %q, "-c",
                           "echo starting; sleep 0.5; echo ready now; sleep 300" } do
        argv[#argv + 1] = v
      end
      assert(pm:podman(argv))
      local t0 = core.now()
      local ok, logs = podman.wait_ready(logs_dir, "left", "ready now", 30)
      local waited = core.now() - t0
      local missing = { podman.wait_ready(logs_dir, "left", "never printed", 0.5) }
      core.rmtree(logs_dir)
      return { ok = ok, logs = logs, waited = waited, missing = missing[1] }
    ]]):format(run_id, tags.base))
    assert.is_true(left.ok)
    assert.equal("starting\nready now\n", left.logs)
    assert.is_true(left.waited < 10)
    assert.is_false(left.missing)
    -- A second one, alive while it cleans, keeps its own network.
    local r = inside(([[
      local pm = podman.get()
      local id = %q
      local net = { "network", "create" }
      for _, v in ipairs(pm:label_args(id .. "-live")) do net[#net + 1] = v end
      net[#net + 1] = "lb-e2e-live-" .. id
      assert(pm:podman(net))
      local removed = assert(podman.clean(pm))
      local nets = assert(pm:networks("leakbench.run=" .. id .. "-live"))
      local gone = assert(pm:containers("leakbench.run=" .. id))
      local gone_nets = assert(pm:networks("leakbench.run=" .. id))
      local again = assert(pm:remove_by_label("leakbench.run=" .. id .. "-live"))
      return { removed = removed, live_kept = #nets, containers_left = #gone,
               networks_left = #gone_nets, again = again }
    ]]):format(run_id))
    assert.is_true(#r.removed.containers >= 1)
    assert.truthy(table.concat(r.removed.containers, " "):find("lb-e2e-left-" .. run_id, 1, true))
    assert.truthy(table.concat(r.removed.networks, " "):find("lb-e2e-left-" .. run_id, 1, true))
    assert.equal(1, r.live_kept)
    assert.equal(0, r.containers_left)
    assert.equal(0, r.networks_left)
    assert.same({ "lb-e2e-live-" .. run_id }, r.again.networks)
  end)

  it("doctor finds nothing wrong once the images are built", function()
    assert.truthy(tags, "the build test must pass first")
    local r, text = inside([[
      return { status = require("leakbench.doctor").main({}) }
    ]], "LEAKBENCH_BASE_IMAGE=debootstrap")
    assert.equal(0, r.status, text)
    assert.matches("all good\n$", text)
    assert.matches("ok    trial container %(%-%-network none%)", text)
    assert.matches("ok    trial topology: a request through a socket bridge, nothing else in the sandbox", text)
    assert.matches("ok    image " .. tags.claude:gsub("%p", "%%%0"), text)
    assert.matches("ok    trial build: a RUN step reached the Debian mirror http", text)
  end)

  it("doctor's trial build names a mirror it cannot reach, and the fix", function()
    assert.truthy(tags, "the build test must pass first")
    -- Loopback port 1: refused at once, and no traffic leaves the machine.
    local r, text = inside(([[
      local ok, what, fix = require("leakbench.doctor").trial_build(podman.get(), %q)
      local left = podman.get():podman({ "images", "--format", "{{.Repository}}",
        "--filter", "reference=localhost/leakbench-doctor-trial" })
      return { ok = ok, what = what, fix = fix, left = left and left.stdout }
    ]]):format(tags.base), "LEAKBENCH_DEBIAN_MIRROR=http://127.0.0.1:1/debian")
    assert.is_false(r.ok, text)
    assert.matches("^trial build: a RUN step could not reach the Debian mirror http://127%.0%.0%.1:1/debian: "
      .. "podman build failed %(exit %d+%)", r.what)
    assert.matches("^the mirror http://127%.0%.0%.1:1/debian does not answer from this machine", r.fix)
    assert.equal("", r.left, "the trial image is thrown away")
  end)
end)
