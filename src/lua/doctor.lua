-- `leakbench doctor`: what this machine lacks to run leakbench, each problem
-- with a one-line fix, found by trying it where it can be tried. Checks
-- podman, the OCI runtime, the ulimit workaround, rootful/rootless set-up
-- (subuid/subgid, user namespaces; /dev/net/tun and slirp4netns only for
-- --live), the network backend and a stale CNI bridge (--live only: offline
-- runs create no network), the images, the tools to build a base image
-- offline, and which credential --live would use (its source only: a
-- credential is never printed). Then it tries a run's topology once
-- (M.trial_topology, the sandbox's trial mode: the very table of
-- containers a run starts): the upstream on a Unix socket, the sidecar
-- bridging 127.0.0.1:8080 to it, and the claude container, whose program
-- is a probe that sends one request through and checks that nothing else
-- is there.
--
-- Exit status: 0 when nothing is wrong, 1 otherwise. Notes (a missing
-- credential, which only --live needs) do not count as problems.
local core = require "leakbench.core"
local cjson = require "cjson"
local podman = require "leakbench.podman"
local images = require "leakbench.images"
local lb = require "leakbench"
local cli = require "leakbench.cli"
local sandbox = require "leakbench.sandbox"

local M = {}

-- Claude Code's OAuth token from ~/.claude/.credentials.json: where, and
-- whether it is about to expire (the proxy never refreshes it).
local function credentials_file()
  local home = os.getenv("HOME") or ""
  local path = home .. "/.claude/.credentials.json"
  local text = core.read_file(path)
  if not text then return nil end
  local ok, data = pcall(cjson.decode, text)
  if not ok or type(data) ~= "table" or type(data.claudeAiOauth) ~= "table" then
    return path, "has no claudeAiOauth entry"
  end
  local exp = tonumber(data.claudeAiOauth.expiresAt)
  if exp then
    local left = exp / 1000 - os.time()
    if left < 30 * 60 then
      return path, ("its access token expires in %d min: run `claude -p hi` on this machine to refresh it")
        :format(math.max(0, math.floor(left / 60)))
    end
  end
  return path
end

--- M.credential_source() -> "BENCH_AUTH" | "ANTHROPIC_API_KEY" |
--- "CLAUDE_CODE_OAUTH_TOKEN" | path of .credentials.json | nil, and a
--- warning. The same order the sandbox uses; never the credential itself.
function M.credential_source()
  for _, name in ipairs { "BENCH_AUTH", "ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN" } do
    local v = os.getenv(name)
    if v and v ~= "" then return name end
  end
  return credentials_file()
end

-- The likely fix for a failed trial container, from podman's message.
local function trial_fix(msg)
  if msg:find("hybrid mode", 1, true) or msg:find("crun", 1, true) then
    return "apt-get install runc (leakbench then passes --runtime runc), or set LEAKBENCH_RUNTIME=runc"
  elseif msg:find("rlimit", 1, true) then
    return "run leakbench as a user with CAP_SYS_RESOURCE, or report this: the --ulimit workaround did not help"
  elseif msg:find("newuidmap", 1, true) or msg:find("subuid", 1, true) then
    return "give your user subordinate ids: usermod --add-subuids 100000-165535 --add-subgids 100000-165535 $USER"
  end
  return "run the command by hand to see podman's full message"
end

-- What the probe in the trial's netns prints, one fact a line.
local TRIAL_PROBE = [[
for i in $(seq 200); do ss -H -ltn | grep -q 127.0.0.1:8080 && break; sleep 0.02; done
echo "ifaces $(awk -F: 'NR > 2 { gsub(/ /, "", $1); print $1 }' /proc/net/dev | sort | tr '\n' ' ')"
echo "routes $(tail -n +2 /proc/net/route | wc -l)"
echo "listen $(ss -H -ltn | awk '{ print $4 }' | sort | tr '\n' ' ')"
echo "http $(curl -s -o /dev/null -m 10 -w '%{http_code}' -X POST -H 'content-type: application/json' \
  -d '{"model":"m","max_tokens":8,"messages":[{"role":"user","content":"hi"}]}' \
  http://127.0.0.1:8080/v1/messages)"
]]

-- What listens in the claude container's netns in a run (TCP): lb-net's
-- bridge to the proxy, the egress trap's DNS and HTTP proxy, and where
-- lb-net hands the simulated internet to the trap (sorted as the probe
-- prints them).
M.TRIAL_LISTEN = ("127.0.0.1:%d 127.0.0.1:3128 127.0.0.1:53 127.0.0.1:8080 "):format(sandbox.SIM_PORT)

--- M.trial_topology(pm, tags) -> true, seconds | nil, what, fix. Tries a
--- run's topology in the sandbox's trial mode (Sandbox:trial: the same
--- table of containers a run starts, staged in a temporary folder for a
--- one-line scripted model): the upstream, claude's network sidecar with
--- its trap, and the claude container, whose program is a probe that
--- posts one Messages request through the bridge and reports its
--- interfaces, routes and listeners. Removes everything.
function M.trial_topology(pm, tags)
  local dir, err = core.tmpdir("leakbench-doctor-")
  if not dir then return nil, "trial topology: " .. err, "check that $TMPDIR is writable" end
  local t0 = core.now()
  local function run()
    local scenario = { name = "doctor-trial", prompt = "hi", files = {}, home = {}, env = {}, settings = {},
                       secrets = {}, setup = {}, model = lb.script { lb.say("ok") } }
    local sb = sandbox.new { scenario = scenario, dir = dir, pm = pm, run_id = core.uuid(),
                             images = { proxy = tags.proxy, claude = tags.claude }, model = "m", timeout = 60 }
    local r, e = sb:trial(TRIAL_PROBE)
    if not r then return nil, "trial topology: " .. e end
    local facts = {}
    for k, v in r.stdout:gmatch("(%a+) ([^\n]*)") do facts[k] = v end
    if facts.http ~= "200" then
      return nil, ("trial topology: a request through the bridge got HTTP %s, not 200")
        :format(facts.http or "nothing")
    end
    if facts.ifaces ~= "lo " or facts.routes ~= "0" then
      return nil, ("trial topology: the sandbox has interfaces '%s' and %s routes; only lo and none expected")
        :format(facts.ifaces or "?", facts.routes or "?")
    end
    if facts.listen ~= M.TRIAL_LISTEN then
      return nil, ("trial topology: listening in the sandbox: '%s'; only the bridge and the trap expected")
        :format(facts.listen or "?")
    end
    return true
  end
  local ok, res, what = pcall(run)
  core.rmtree(dir)
  if not ok then return nil, "trial topology: " .. tostring(res), "report this: it is a leakbench bug" end
  if not res then
    return nil, what, "a runtime, ulimit or user namespace problem named above is the likely cause"
  end
  return true, core.now() - t0
end

-- Whether this kernel lets an unprivileged user create user namespaces
-- (rootless podman needs it). nil, why when it does not.
-- The likely fix for a failed trial build, from its log.
local function build_fix(log, mirror)
  if log:find("netavark", 1, true) or log:find("iptables", 1, true) then
    return "apt-get install iptables netavark (a build's RUN steps should not need them: "
      .. "builds use --network host; report this)"
  elseif log:find("Temporary failure resolving", 1, true) or log:find("Could not resolve", 1, true) then
    return ("this machine cannot resolve the mirror's name (%s): check /etc/resolv.conf, "
      .. "or set LEAKBENCH_DEBIAN_MIRROR to a mirror it can reach"):format(mirror)
  elseif log:find("Could not connect", 1, true) or log:find("Connection", 1, true)
      or log:find("timed out", 1, true) then
    return ("the mirror %s does not answer from this machine: set LEAKBENCH_DEBIAN_MIRROR, "
      .. "or http_proxy for apt"):format(mirror)
  end
  return "read the build log it names"
end

--- M.trial_build(pm, base) -> ok, what, fix. What a build does, once, and
--- thrown away: a build FROM the base image, with the flags every image
--- build gets, whose RUN step fetches the mirror's Release file with
--- apt's own transport. A nonce build argument keeps podman's layer cache
--- from answering instead of the mirror.
function M.trial_build(pm, base)
  local _, mirror = images.base_tag()
  local dir, err = core.tmpdir("leakbench-doctor-")
  if not dir then return false, "trial build: " .. err, nil end
  local cf = "FROM " .. base .. "\nARG NONCE\n"
    .. "RUN echo \"trial $NONCE\" && /usr/lib/apt/apt-helper download-file "
    .. mirror .. "/dists/" .. images.SUITE .. "/Release /tmp/Release && test -s /tmp/Release\n"
  core.write_file(dir .. "/Containerfile", cf)
  local tag = "localhost/leakbench-doctor-trial:" .. core.getpid()
  local t0 = core.now()
  local ok
  ok, err = pm:build { tag = tag, containerfile = dir .. "/Containerfile", context = dir,
                       build_args = { NONCE = core.uuid() }, log = dir .. "/build.log", timeout = 120 }
  local log = core.read_file(dir .. "/build.log") or ""
  pm:podman({ "rmi", "-f", tag }, { timeout = 60 })
  core.rmtree(dir)
  if ok then
    return true, ("trial build: a RUN step reached the Debian mirror %s (%.1f s)"):format(mirror, core.now() - t0)
  end
  local last = log:match("([^\n]*)\n[^\n]*$") or ""
  return false, ("trial build: a RUN step could not reach the Debian mirror %s: %s")
    :format(mirror, (err:gsub(" %(build log: .*", "")) .. (last ~= "" and ("; " .. last) or "")),
    build_fix(log, mirror)
end

local function userns_allowed()
  local clone = core.read_file("/proc/sys/kernel/unprivileged_userns_clone")
  if clone and clone:match("^%s*0") then
    return nil, "kernel.unprivileged_userns_clone is 0", "sysctl -w kernel.unprivileged_userns_clone=1"
  end
  local max = core.read_file("/proc/sys/user/max_user_namespaces")
  if max and max:match("^%s*0%s*$") then
    return nil, "user.max_user_namespaces is 0", "sysctl -w user.max_user_namespaces=15000"
  end
  return true
end

local function user_name()
  local r = core.run { argv = { "id", "-un" }, timeout = 10 }
  return r and r.status == 0 and r.stdout:match("^(%S+)") or os.getenv("USER")
end

local function has_subids(file, user, uid)
  local text = core.read_file(file) or ""
  for line in text:gmatch("[^\n]+") do
    local who = line:match("^([^:]+):")
    if who == user or who == tostring(uid) then return true end
  end
  return false
end

-- The runtime and ulimits podman is called with (M.check's part).
local function check_runtime(pm, add)
  if pm.runtime then
    if pm.runtime == "runc" and not podman.find_program("runc") then
      add("FAIL", "runtime runc is not installed", "apt-get install runc")
    else
      add("ok", ("runtime: %s (%s)"):format(pm.runtime, pm.runtime_reason or "chosen"))
    end
  elseif pm.cgroups == "v1" then
    add("FAIL", "cgroup v1/hybrid hierarchy and no runc: crun fails here "
      .. "(\"cgroups in hybrid mode not supported\")", "apt-get install runc")
  else
    add("ok", "runtime: podman's default")
  end

  if pm.ulimits then
    add("ok", ("ulimits: no CAP_SYS_RESOURCE, so containers get %s")
      :format(table.concat(pm:ulimit_args(), " ")))
  elseif pm.rootful then
    add("ok", "ulimits: podman's defaults (CAP_SYS_RESOURCE held)")
  end
  local seccomp, why = pm:seccomp()
  if seccomp then
    add("ok", "seccomp: podman's profile, this machine's own system-call interface only, "
      .. "no socket family a run does not need, no kernel keyring (" .. seccomp .. ")")
  else
    add("note", "seccomp: podman's default profile, which also lets 32-bit system calls and every socket "
      .. "family through, vsock too (" .. why .. ")",
      "install podman's seccomp.json (Debian: golang-github-containers-common), or unset " .. podman.SECCOMP_ENV)
  end
end

-- A rootless user's subordinate ids, user namespaces, cgroups, and what
-- --live needs (M.check's part).
local function check_rootless(add)
  local uid, user = core.getuid(), user_name()
  if not has_subids("/etc/subuid", user, uid) or not has_subids("/etc/subgid", user, uid) then
    add("FAIL", ("rootless: no /etc/subuid or /etc/subgid entry for '%s'"):format(user or uid),
        ("usermod --add-subuids 100000-165535 --add-subgids 100000-165535 %s"):format(user or "$USER"))
  else
    add("ok", "rootless: subordinate uids and gids")
  end
  if podman.cgroup_mode() == "v1" then
    add("note", "rootless on cgroup v1: podman ignores the containers' memory and pids limits "
      .. "(\"Resource limits are not supported and ignored on cgroups V1 rootless systems\")",
      "boot with systemd.unified_cgroup_hierarchy=1 (cgroup v2), or run leakbench as root")
  end
  local ok, why, fix = userns_allowed()
  if ok then
    add("ok", "rootless: user namespaces allowed")
  else
    add("FAIL", "rootless: user namespaces are off: " .. why, fix)
  end
  -- Only --live gives a container a network (the upstream's way out).
  local tun = io.open("/dev/net/tun", "r+")
  if tun then
    tun:close()
    add("ok", "rootless: /dev/net/tun is usable (the --live upstream can have a network)")
  else
    add("note", "rootless: /dev/net/tun is not usable by this user: --live runs cannot reach the API "
        .. "(offline runs need no network)", "as root: chmod 0666 /dev/net/tun (or run leakbench as root)")
  end
  if not podman.find_program("slirp4netns") then
    add("note", "rootless: slirp4netns is not installed: --live runs cannot reach the API",
        "apt-get install slirp4netns")
  end
end

-- The network backend, which matters to --live only: offline runs create
-- no network and use none (M.check's part).
local function check_network(pm, add)
  local info = pm:podman({ "info", "--format", "{{.Host.NetworkBackend}}" }, { timeout = 30 })
  local backend = info and info.stdout:match("%S+")
  if backend then
    add("ok", ("network backend: %s (used by --live only; offline runs have no network)"):format(backend))
    if pm.rootful and backend == "netavark" and core.stat("/sys/class/net/cni-podman0") then
      add("FAIL", "a stale CNI bridge cni-podman0 shares netavark's subnet: image builds and --live's "
          .. "upstream have no route out (apt-get: \"Temporary failure resolving\")", "ip link delete cni-podman0")
    end
  end
  add("ok", "--init is not used: catatonit is not needed")
  -- rootful, a run sets up the simulated internet of its namespace with
  -- the host's nft, and needs no network sidecar (sandbox.lua's hold_sockets)
  if pm.rootful then
    local nft = core.run { argv = { "sh", "-c", "command -v nft" }, timeout = 10 }
    if nft and nft.status == 0 then
      add("ok", "nft: a run needs no network sidecar (its namespace's sockets are bound from the host)")
    else
      add("note", "nft is not installed: each run starts a network sidecar (a container more, about 0.2 CPU-s)",
        "apt-get install nftables")
    end
  end
end

-- The images of each Claude Code version asked for (--claude-version,
-- as `run` takes it); the trials use the first version's. Returns its
-- tags (nil when they cannot be known) and the images present.
local function check_images(pm, opts, add)
  local tags, err
  local present = images.local_images(pm) or {}
  local versions = opts.claude_versions or {}
  if #versions == 0 then versions = { false } end
  for vi, v in ipairs(versions) do
    local t
    t, err = images.tags { pm = pm, root = opts.root, claude_version = v or nil }
    if vi == 1 then tags = t end
    local build = v and ("leakbench build --claude-version " .. v) or "leakbench build"
    if not t then
      add("FAIL", "images: " .. err, v and build or "set LEAKBENCH_HOME to the leakbench source tree")
    else
      for _, what in ipairs(vi == 1 and { "claude", "proxy", "base" } or { "claude" }) do
        if present[t[what]] then
          add("ok", ("image %s"):format(t[what]))
        else
          add("FAIL", ("image %s is missing"):format(t[what]), build)
        end
      end
    end
  end
  return tags, present
end

-- A trial container, a trial topology and a trial build, each once its
-- image exists (M.check's part).
local function check_trials(pm, opts, tags, present, add)
  local trial = opts.trial_image
  if not trial and tags then
    for _, what in ipairs { "base", "proxy", "claude" } do
      if present[tags[what]] then trial = tags[what] break end
    end
  end
  if trial then
    local argv = pm:run_argv { name = "lb-doctor-" .. core.uuid():sub(1, 8), rm = true,
      labels = podman.labels(), network = "none", entrypoint = "true", image = trial }
    local t0 = core.now()
    local r, err = pm:podman(argv, { timeout = 60 })
    if r then
      add("ok", ("trial container (--network none): started and stopped in %.2f s"):format(core.now() - t0))
    else
      add("FAIL", "trial container (--network none): " .. err, trial_fix(err))
    end
  else
    add("note", "trial container: skipped, no image yet", "leakbench build")
  end

  if tags and present[tags.proxy] and present[tags.claude] then
    local ok, what, fix = M.trial_topology(pm, tags)
    if ok then
      add("ok", ("trial topology: a request through a socket bridge, nothing else in the sandbox (%.2f s)")
        :format(what))
    else
      add("FAIL", what, fix)
    end
  else
    add("note", "trial topology: skipped, the images are not built yet", "leakbench build")
  end

  if tags and present[tags.base] then
    local ok, what, fix = M.trial_build(pm, tags.base)
    add(ok and "ok" or "FAIL", what, fix)
  else
    add("note", "trial build: skipped until the base image exists", "leakbench build")
  end

end

-- What building and --live need on the host: the base image's tool, the
-- CA bundle, the credential (M.check's part).
local function check_host(pm, tags, present, add)
  if not (tags and present[tags.base]) then
    local tool = pm.rootful and "debootstrap" or "mmdebstrap"
    if podman.find_program(tool) then
      add("ok", ("%s: can build the base image offline"):format(tool))
    else
      add("FAIL", ("%s is missing: without a registry the base image cannot be built"):format(tool),
          "apt-get install " .. tool)
    end
  end
  local ca = images.ca_bundle()
  if ca then
    add("ok", "CA bundle for npm during builds: " .. ca)
  else
    add("note", "no CA bundle found: npm uses its own trust store during builds",
        "set LEAKBENCH_CA_BUNDLE if TLS to the npm registry needs a local CA")
  end

  local source, warning = M.credential_source()
  if source and warning then
    add("FAIL", ("credential for --live: %s %s"):format(source, warning), nil)
  elseif source then
    add("ok", "credential for --live: from " .. source)
  else
    add("note", "credential for --live: none (offline runs need none)",
        "set ANTHROPIC_API_KEY or CLAUDE_CODE_OAUTH_TOKEN, or log in with `claude`")
  end
end

--- M.check(pm, [opts]) -> list of { status = "ok" | "FAIL" | "note", what, fix }.
--- opts: root (source tree), trial_image (skip the image lookup).
function M.check(pm, opts)
  opts = opts or {}
  local out = {}
  local function add(status, what, fix) out[#out + 1] = { status = status, what = what, fix = fix } end

  local version, err = pm:version()
  if not version then
    add("FAIL", "podman: " .. err, "apt-get install podman runc uidmap slirp4netns fuse-overlayfs")
    return out
  end
  add("ok", ("podman %s (%s)"):format(version, pm.rootful and "rootful" or "rootless"))
  check_runtime(pm, add)
  if not pm.rootful then check_rootless(add) end
  check_network(pm, add)
  local tags, present = check_images(pm, opts, add)
  check_trials(pm, opts, tags, present, add)
  check_host(pm, tags, present, add)
  return out
end

--- M.main(args, [pm]) -> 0 when every check passed, 1 otherwise, 2 usage.
function M.main(args, pm)
  local flags, status = cli.args("doctor", args)
  if not flags then return status end
  local opts = { claude_versions = {} }
  for _, value in ipairs(flags.claude_version or {}) do
    if not value:match("^[%w][%w%.%-%+]*$") then
      io.stderr:write(("leakbench: doctor: --claude-version needs a version, got '%s'\n"):format(value))
      return 2
    end
    opts.claude_versions[#opts.claude_versions + 1] = value
  end
  local problems = 0
  for _, c in ipairs(M.check(pm or podman.get(), opts)) do
    io.stdout:write(("%-5s %s\n"):format(c.status, c.what))
    if c.fix and c.status ~= "ok" then io.stdout:write(("      fix: %s\n"):format(c.fix)) end
    if c.status == "FAIL" then problems = problems + 1 end
  end
  if problems > 0 then
    io.stdout:write(("%d problem(s)\n"):format(problems))
    return 1
  end
  io.stdout:write("all good\n")
  return 0
end

return M
