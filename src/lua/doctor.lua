-- `leakbench doctor`: what this machine lacks to run leakbench, each problem
-- with a one-line fix. Checks podman, the OCI runtime (with a real trial
-- container), the ulimit workaround, rootful/rootless set-up (for rootless:
-- /dev/net/tun, subuid/subgid, slirp4netns), the images, the tools to build a
-- base image offline, and which credential --live would use (its source only:
-- a credential is never printed).
--
-- Exit status: 0 when nothing is wrong, 1 otherwise. Notes (a missing
-- credential, which only --live needs) do not count as problems.
local core = require "leakbench.core"
local cjson = require "cjson"
local podman = require "leakbench.podman"
local images = require "leakbench.images"

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

  if not pm.rootful then
    local uid, user = core.getuid(), user_name()
    if not has_subids("/etc/subuid", user, uid) or not has_subids("/etc/subgid", user, uid) then
      add("FAIL", ("rootless: no /etc/subuid or /etc/subgid entry for '%s'"):format(user or uid),
          ("usermod --add-subuids 100000-165535 --add-subgids 100000-165535 %s"):format(user or "$USER"))
    else
      add("ok", "rootless: subordinate uids and gids")
    end
    local tun = io.open("/dev/net/tun", "r+")
    if tun then
      tun:close()
      add("ok", "rootless: /dev/net/tun is usable (container networks work)")
    else
      add("FAIL", "rootless: /dev/net/tun is not usable by this user, so podman networks fail",
          "as root: chmod 0666 /dev/net/tun (or run leakbench as root)")
    end
    if not podman.find_program("slirp4netns") then
      add("FAIL", "rootless: slirp4netns is not installed", "apt-get install slirp4netns")
    end
  end

  local tags
  tags, err = images.tags { pm = pm, root = opts.root }
  local present = images.local_images(pm) or {}
  if not tags then
    add("FAIL", "images: " .. err, "set LEAKBENCH_HOME to the leakbench source tree")
  else
    for _, what in ipairs { "claude", "proxy", "base" } do
      if present[tags[what]] then
        add("ok", ("image %s"):format(tags[what]))
      else
        add("FAIL", ("image %s is missing"):format(tags[what]), "leakbench build")
      end
    end
  end

  local trial = opts.trial_image
  if not trial and tags then
    for _, what in ipairs { "base", "proxy", "claude" } do
      if present[tags[what]] then trial = tags[what] break end
    end
  end
  if trial then
    local argv = { "run", "--rm", "--network", "none" }
    for _, v in ipairs(pm:run_args()) do argv[#argv + 1] = v end
    argv[#argv + 1] = "--entrypoint"
    argv[#argv + 1] = "true"
    argv[#argv + 1] = trial
    local t0 = core.now()
    local r
    r, err = pm:podman(argv, { timeout = 60 })
    if r then
      add("ok", ("trial container (--network none): started and stopped in %.2f s"):format(core.now() - t0))
    else
      add("FAIL", "trial container (--network none): " .. err, trial_fix(err))
    end
  else
    add("note", "trial container: skipped, no image yet", "leakbench build")
  end

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
  return out
end

--- M.main(args, [pm]) -> 0 when every check passed, 1 otherwise, 2 usage.
function M.main(args, pm)
  for _, a in ipairs(args or {}) do
    if a == "-h" or a == "--help" then
      io.stdout:write("usage: leakbench doctor\n",
        "Checks podman, its runtime, limits, networking, images and credentials,\n",
        "and prints a fix for each problem. Exit status 0 when all is well.\n")
      return 0
    end
    io.stderr:write(("leakbench: doctor: unknown argument '%s' (try 'leakbench doctor --help')\n"):format(a))
    return 2
  end
  local problems = 0
  for _, c in ipairs(M.check(pm or podman.get())) do
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
