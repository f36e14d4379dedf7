-- The container images: which tags this source tree needs, and building
-- whatever is missing.
--
--   localhost/leakbench-claude:<version>-<hash12>  containers/claude.Containerfile
--   localhost/leakbench-proxy:<hash12>             containers/proxy.Containerfile
--   localhost/leakbench-base:bookworm-<hash12>     Debian from the mirror (debootstrap)
--   localhost/leakbench-agent-<subject>:<hash12>   a subject's agent layer, FROM the claude image
--
-- A tag's hash covers everything its image is built from: the Containerfile,
-- the base image reference (passed to FROM as the BASE build-arg), for the
-- claude image the CLAUDE_VERSION build-arg, and for the proxy image every
-- file staged into its build context (the Makefile, src/*.c, src/*.h,
-- src/embed.sh, src/common/, src/model/, src/proxy/, src/net/, src/trap/,
-- src/init/; not src/lua/, which the servers do not contain). An edit
-- rebuilds exactly the image it feeds; an unchanged tree builds nothing,
-- and finding that out costs one `podman images` call.
--
-- The base: LEAKBENCH_BASE_IMAGE (or --base) names one; "debootstrap" means
-- build it from the Debian mirror without asking any registry. Otherwise a
-- base already present is used (the registry's Debian first, then ours), and
-- when neither is, the registry is tried with a 5 s reachability budget before
-- falling back to debootstrap (root) or mmdebstrap --mode=unshare (rootless),
-- imported with `tar | podman import`.
--
-- TLS during builds: the host's CA bundle is handed to the claude build (and
-- to every agent layer's) as the build secret "ca"; it is mounted for one
-- RUN and never stored in the image.
--
-- An agent layer (a subject's `agent = { build = { context, containerfile }
-- }`) is built FROM the claude image of the run's Claude Code version,
-- passed as --build-arg CLAUDE_IMAGE, with BASE and the secret "ca" as
-- above. Its tag hashes every file of the context, the Containerfile's
-- name and the claude image's tag (which itself hashes the version and
-- the base): a new Claude Code version, a new base or an edited context
-- rebuilds it; nothing else does.
local core = require "leakbench.core"
local podman = require "leakbench.podman"
local trace = require "leakbench.trace"
local cjson = require "cjson"
local defaults = require "leakbench.defaults"
local tree = require "leakbench.tree"
local loader = require "leakbench.loader"
local cli = require "leakbench.cli"

local M = {}

M.DEFAULT_CLAUDE_VERSION = defaults.CLAUDE_VERSION
M.REGISTRY_BASE = defaults.BASE_IMAGE
M.DEFAULT_MIRROR = defaults.DEBIAN_MIRROR
M.SUITE = "bookworm"
M.PROBE_TIMEOUT = 5           -- seconds to find out whether a registry answers
M.PULL_TIMEOUT = 900
M.BOOTSTRAP_TIMEOUT = 1800

local CA_BUNDLES = {
  "/etc/ssl/certs/ca-certificates.crt",                  -- Debian, Ubuntu, Arch
  "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem",   -- Fedora, RHEL
  "/etc/pki/tls/certs/ca-bundle.crt",
  "/etc/ssl/ca-bundle.pem",                              -- openSUSE
  "/etc/ssl/cert.pem",                                   -- Alpine, macOS
}

local function say(opts, fmt, ...)
  local out = opts.progress
  if out == false then return end
  local line = fmt:format(...)
  if type(out) == "function" then out(line) else io.stderr:write(line, "\n") end
end

-- A regular file, or a link to one.
local function is_file(path)
  local st = core.stat(path)
  if st and st.type == "link" then
    local real = core.realpath(path)
    st = real and core.stat(real)
  end
  return st ~= nil and st.type == "file"
end

local function dirname(path)
  return path:match("^(.*)/[^/]*$") or "."
end

--- M.root([opts]) -> the source tree (the directory holding containers/ and
--- the Makefile) | nil, err. opts.root, then $LEAKBENCH_HOME, then the
--- directories above the running binary, then ../share/leakbench beside
--- it (where `make install` puts the tree), then the working directory.
function M.root(opts)
  opts = opts or {}
  local function looks_right(d)
    return d and is_file(d .. "/containers/claude.Containerfile") and is_file(d .. "/Makefile")
  end
  for _, d in ipairs { opts.root or "", os.getenv("LEAKBENCH_HOME") or "" } do
    if d ~= "" then
      if looks_right(d) then return core.realpath(d) end
      return nil, ("'%s' is not a leakbench source tree (no containers/claude.Containerfile)"):format(d)
    end
  end
  local exe = core.exe_path()
  local starts = {}
  if exe then
    starts[#starts + 1] = exe
    starts[#starts + 1] = dirname(dirname(exe)) .. "/share/leakbench/x"
  end
  if os.getenv("PWD") then starts[#starts + 1] = os.getenv("PWD") .. "/x" end
  for _, start in ipairs(starts) do
    local d = start and dirname(start)
    for _ = 1, 6 do
      if not d or d == "" then break end
      if looks_right(d) then return core.realpath(d) end
      if d == "/" then break end
      d = dirname(d)
      if d == "" then d = "/" end
    end
  end
  return nil, "cannot find the leakbench source tree (containers/claude.Containerfile): set LEAKBENCH_HOME"
end

-- The files under root/rel (recursively), as paths relative to root, sorted.
local function walk(root, rel, out, pattern)
  local names = core.listdir(root .. "/" .. rel)
  if not names then return out end
  for _, name in ipairs(names) do
    local r = rel .. "/" .. name
    local st = core.stat(root .. "/" .. r)
    if st and st.type == "dir" and not pattern then
      walk(root, r, out)
    elseif st and st.type == "file" and (not pattern or name:match(pattern)) then
      out[#out + 1] = r
    end
  end
  return out
end

--- M.proxy_files(root) -> the paths (relative to root, sorted) staged into
--- the proxy image's build context.
function M.proxy_files(root)
  local files = { "Makefile" }
  walk(root, "src", files, "%.c$")
  walk(root, "src", files, "%.h$")
  if is_file(root .. "/src/embed.sh") then files[#files + 1] = "src/embed.sh" end
  walk(root, "src/model", files)
  walk(root, "src/proxy", files)
  for _, d in ipairs({ "src/common", "src/net", "src/trap", "src/init" }) do
    if core.stat(root .. "/" .. d) then walk(root, d, files) end
  end
  table.sort(files)
  return files
end

--- M.hash(root, files, extra) -> 12 hex digits over the files' paths and
--- contents and the extra "key=value" strings | nil, err.
function M.hash(root, files, extra)
  local parts = {}
  for _, rel in ipairs(files) do
    local h, err = core.sha256_file(root .. "/" .. rel)
    if not h then return nil, err end
    parts[#parts + 1] = ("file %s %s\n"):format(rel, h)
  end
  for _, e in ipairs(extra or {}) do parts[#parts + 1] = "arg " .. e .. "\n" end
  return core.sha256(table.concat(parts)):sub(1, 12)
end

--- M.sources_list(mirror) -> the APT sources of the bootstrapped base.
function M.sources_list(mirror)
  local s = ("deb %s %s main\ndeb %s %s-updates main\n"):format(mirror, M.SUITE, mirror, M.SUITE)
  if mirror == M.DEFAULT_MIRROR then
    s = s .. ("deb http://deb.debian.org/debian-security %s-security main\n"):format(M.SUITE)
  end
  return s
end

--- M.base_tag(opts) -> localhost/leakbench-base:bookworm-<hash12>, the hash
--- over the recipe (tool-independent: suite, variant, APT sources).
function M.base_tag(opts)
  local mirror = (opts and opts.mirror) or os.getenv("LEAKBENCH_DEBIAN_MIRROR") or M.DEFAULT_MIRROR
  local recipe = ("leakbench-base v1\nsuite %s\nvariant minbase\nclean apt caches and lists\n%s")
    :format(M.SUITE, M.sources_list(mirror))
  return ("localhost/leakbench-base:%s-%s"):format(M.SUITE, core.sha256(recipe):sub(1, 12)), mirror
end

local function options(opts)
  local o = {}
  for k, v in pairs(opts or {}) do o[k] = v end
  o.claude_version = o.claude_version or os.getenv("LEAKBENCH_CLAUDE_VERSION") or M.DEFAULT_CLAUDE_VERSION
  if o.base == nil or o.base == "" then
    local env = os.getenv("LEAKBENCH_BASE_IMAGE")
    o.base = env ~= "" and env or nil
  end
  return o
end

--- M.local_images(pm) -> set of "repo:tag" present locally | nil, err.
function M.local_images(pm)
  local r, err = pm:podman({ "images", "--format", "{{.Repository}}:{{.Tag}}" }, { timeout = 60 })
  if not r then return nil, err end
  local set = {}
  for line in r.stdout:gmatch("[^\n]+") do set[line] = true end
  return set
end

-- The set of REFS that the images of LIST (podman's JSON list) name.
local function named_in(list, refs)
  local names, set = {}, {}
  for _, img in ipairs(list) do
    for _, n in ipairs(type(img) == "table" and type(img.Names) == "table" and img.Names or {}) do
      if type(n) == "string" then names[n] = true end
    end
  end
  for _, ref in ipairs(refs) do
    if names[ref] or names["localhost/" .. ref] then set[ref] = true end
  end
  return set
end

--- M.present(pm, refs) -> the set of those refs present locally | nil, err.
--- Asks the suite's service where pm has one (pm:use_service), else one
--- `podman images --format json`, filtered to those refs, judged by its
--- exit status and its JSON alone: podman prints warnings on stderr (a new
--- store's "Error validating CNI config file" among them) that are not
--- failures, so stderr is never read for a verdict.
function M.present(pm, refs)
  if #refs == 0 then return {} end
  if pm.api then
    -- libpod's exists, every reference in flight together: a name lookup
    -- (3 ms here), where a listing filtered to one reference still walks
    -- every image (60 ms with 116 images), and the service ANDs several
    -- references where the CLI ORs them (issue 26)
    local reqs = {}
    for i, ref in ipairs(refs) do
      reqs[i] = { "GET", "/images/" .. podman.path_segment(ref) .. "/exists" }
    end
    local set = {}
    for i, a in ipairs(pm.api:all(reqs)) do
      if a[1] == 204 then set[refs[i]] = true
      elseif a[1] ~= 404 then set = nil break end
    end
    if set then return set end
  end
  local list
  local argv = { "images", "--format", "json" }
  for _, ref in ipairs(refs) do
    argv[#argv + 1] = "--filter"
    argv[#argv + 1] = "reference=" .. ref
  end
  local done = trace.begin("cli", "podman images --filter reference")
  local r, err = core.run { argv = pm:argv(argv), timeout = 60 }
  done { status = r and r.status }
  if not r then return nil, err end
  local bad = podman.failure("images", r)
  if bad then return nil, bad end
  local ok
  ok, list = pcall(cjson.decode, r.stdout)
  if not ok or type(list) ~= "table" then
    return nil, "podman images --format json printed no JSON list"
  end
  return named_in(list, refs)
end

-- The base reference to build on, decided without network: the explicit
-- one, else one already present; else nil (to be fetched or built).
local function pick_base(o, present)
  local boot = M.base_tag(o)
  if o.base == "debootstrap" then return boot, "debootstrap" end
  if o.base then return o.base, "explicit" end
  if present[M.REGISTRY_BASE] then return M.REGISTRY_BASE, "registry" end
  if present[boot] then return boot, "debootstrap" end
  return nil
end

--- M.tags_for(root, base, claude_version) -> { claude =, proxy =, base = } | nil, err.
function M.tags_for(root, base, claude_version)
  if not claude_version:match("^[%w][%w%.%-%+]*$") then
    return nil, ("claude version '%s' is not a version"):format(claude_version)
  end
  local ch, err = M.hash(root, { "containers/claude.Containerfile" },
                         { "BASE=" .. base, "CLAUDE_VERSION=" .. claude_version })
  if not ch then return nil, err end
  local files = M.proxy_files(root)
  table.insert(files, 1, "containers/proxy.Containerfile")
  local ph
  ph, err = M.hash(root, files, { "BASE=" .. base })
  if not ph then return nil, err end
  local v = claude_version:gsub("%+", "_")
  return {
    claude = ("localhost/leakbench-claude:%s-%s"):format(v, ch),
    proxy = ("localhost/leakbench-proxy:%s"):format(ph),
    base = base,
  }
end

--- M.tags([opts]) -> { claude =, proxy =, base = } | nil, err, computed
--- without building. opts: root, claude_version, base, mirror, pm. When no
--- base is chosen yet (none present, none named), the registry's is assumed.
function M.tags(opts)
  local o = options(opts)
  local root, err = M.root(o)
  if not root then return nil, err end
  local base = o.base == "debootstrap" and M.base_tag(o) or o.base
  if not base then
    local present
    present, err = M.local_images(o.pm or podman.get())
    if not present then return nil, err end
    base = pick_base(o, present) or M.REGISTRY_BASE
  end
  return M.tags_for(root, base, o.claude_version)
end

--- M.ca_bundle() -> path of the host's CA bundle, or nil.
function M.ca_bundle()
  local candidates = {}
  for _, name in ipairs { "LEAKBENCH_CA_BUNDLE", "SSL_CERT_FILE", "NODE_EXTRA_CA_CERTS" } do
    local v = os.getenv(name)
    if v and v ~= "" then candidates[#candidates + 1] = v end
  end
  for _, p in ipairs(CA_BUNDLES) do candidates[#candidates + 1] = p end
  for _, p in ipairs(candidates) do
    if is_file(p) then return p end
  end
  return nil
end

-- Does a registry answer within PROBE_TIMEOUT? (podman search is one HTTPS
-- round trip to the registry, or a quick DNS failure offline.)
local function registry_answers(pm)
  local r = core.run { argv = pm:argv { "search", "--limit", "1", "--format", "{{.Name}}",
                                         "docker.io/library/debian" },
                       timeout = M.PROBE_TIMEOUT }
  return r ~= nil and r.status == 0 and r.stdout:match("%S") ~= nil
end

-- Empties dir (relative to root) except the names in keep.
local function empty_dir(root, rel, keep)
  for _, name in ipairs(core.listdir(root .. "/" .. rel) or {}) do
    if not keep[name] then core.rmtree(root .. "/" .. rel .. "/" .. name) end
  end
end

--- M.bootstrap_base(pm, tag, mirror, opts) -> true | nil, err. Builds a
--- minimal Debian from the mirror and imports it as tag.
function M.bootstrap_base(pm, tag, mirror, opts)
  opts = opts or {}
  local tool = pm.rootful and "debootstrap" or "mmdebstrap"
  if not podman.find_program(tool) then
    return nil, ("cannot build the base image: '%s' is not installed (apt-get install %s)")
      :format(tool, tool)
  end
  local work, err = core.tmpdir("leakbench-base-", opts.workdir or "/var/tmp")
  if not work then return nil, err end
  local tar = work .. "/base.tar"
  local log = work .. "/bootstrap.log"
  local function fail(msg)
    core.rmtree(work)
    return nil, msg
  end
  local r
  if pm.rootful then
    local rootfs = work .. "/rootfs"
    r, err = core.run { argv = { "debootstrap", "--variant=minbase", M.SUITE, rootfs, mirror },
                        timeout = M.BOOTSTRAP_TIMEOUT, stdout = log, stderr = log }
    if not r then return fail(err) end
    if r.status ~= 0 or r.signal then
      local text = core.read_file(log) or ""
      local last = text:match("([^\n]*)\n?$") or ""
      return fail(("debootstrap failed%s: %s"):format(
        r.timed_out and " (timed out)" or r.interrupted and " (interrupted)" or
        r.status and (" (exit %d)"):format(r.status) or "", last))
    end
    empty_dir(rootfs, "var/cache/apt/archives", { partial = true, lock = true })
    empty_dir(rootfs, "var/lib/apt/lists", { partial = true, lock = true })
    core.rmtree(rootfs .. "/etc/apt/sources.list")
    local ok
    ok, err = core.write_file(rootfs .. "/etc/apt/sources.list", M.sources_list(mirror), tonumber("644", 8))
    if not ok then return fail(err) end
    r, err = core.run { argv = { "tar", "--numeric-owner", "-C", rootfs, "-cf", tar, "." },
                        timeout = 600 }
    if not r then return fail(err) end
    if r.status ~= 0 then return fail("tar failed: " .. (r.stderr:match("[^\n]+") or "")) end
    core.rmtree(rootfs)
  else
    local sources = work .. "/sources.list"
    core.write_file(sources, M.sources_list(mirror))
    r, err = core.run { argv = { "mmdebstrap", "--mode=unshare", "--variant=minbase", M.SUITE,
                                 tar, sources },
                        timeout = M.BOOTSTRAP_TIMEOUT, stdout = log, stderr = log }
    if not r then return fail(err) end
    if r.status ~= 0 or r.signal then
      local text = core.read_file(log) or ""
      return fail("mmdebstrap failed: " .. (text:match("([^\n]*)\n?$") or ""))
    end
  end
  r, err = pm:podman({ "import", "--change", 'CMD ["/bin/bash"]', "--change", "LABEL leakbench=1",
                       tar, tag }, { timeout = 600 })
  if not r then return fail(err) end
  core.rmtree(work)
  return true
end

-- Makes sure the base image exists. Returns its reference | nil, err.
local function ensure_base(pm, o, present)
  local base, how = pick_base(o, present)
  if base and present[base] then return base end
  if how == "explicit" then
    say(o, "pulling base image %s", base)
    local r, err = pm:podman({ "pull", "-q", base }, { timeout = M.PULL_TIMEOUT })
    if not r then return nil, err end
    return base
  end
  if how ~= "debootstrap" then
    if registry_answers(pm) then
      say(o, "pulling base image %s", M.REGISTRY_BASE)
      local r = pm:podman({ "pull", "-q", M.REGISTRY_BASE }, { timeout = M.PULL_TIMEOUT })
      if r then return M.REGISTRY_BASE end
    end
    say(o, "no container registry answers: building the base image from the Debian mirror")
  end
  local tag, mirror = M.base_tag(o)
  local t0 = core.now()
  say(o, "building image %s (debootstrap from %s: a minute or two)", tag, mirror)
  local ok, err = M.bootstrap_base(pm, tag, mirror, o)
  if not ok then return nil, err end
  say(o, "built image %s in %.0f s", tag, core.now() - t0)
  return tag
end

-- Copies the proxy image's sources into a fresh context directory.
local function stage_proxy_context(root)
  local ctx, err = core.tmpdir("leakbench-ctx-")
  if not ctx then return nil, err end
  for _, rel in ipairs(M.proxy_files(root)) do
    local data, ok
    data, err = core.read_file(root .. "/" .. rel)
    if data then ok, err = core.mkdir_p(dirname(ctx .. "/" .. rel)) end
    if ok then ok, err = core.write_file(ctx .. "/" .. rel, data) end
    if not ok then
      core.rmtree(ctx)
      return nil, err
    end
  end
  return ctx
end

-- Calls fn(path of the CA bundle for the build secret "ca") and returns
-- what it returns. Without a bundle on this host, an empty file: the
-- Containerfiles treat it as "use npm's own".
local function with_ca(fn)
  local ca = M.ca_bundle()
  if ca then return fn(ca) end
  local tmp, err = core.tmpdir("leakbench-ca-")
  if not tmp then return nil, err end
  core.write_file(tmp .. "/empty.crt", "")
  local ok
  ok, err = fn(tmp .. "/empty.crt")
  core.rmtree(tmp)
  return ok, err
end

-- Builds one image, with progress lines. Returns true | nil, err.
local function build(pm, o, what, spec)
  local t0 = core.now()
  local logdir, err = core.tmpdir("leakbench-build-")
  if not logdir then return nil, err end
  spec.log = logdir .. "/build.log"
  say(o, "building image %s (first time: several minutes; log: %s)", spec.tag, spec.log)
  local ok
  ok, err = pm:build(spec)
  if not ok then return nil, err end    -- the log stays for the user
  core.rmtree(logdir)
  say(o, "built image %s in %.0f s", spec.tag, core.now() - t0)
  o.built[what] = core.now() - t0
  return true
end

-- One build at a time per machine and user: a lock file holding the owner's
-- pid, created exclusively. A lock whose owner is gone is taken over.
-- Returns a function that releases it | nil, err.
local function lock(o)
  local dir = os.getenv("XDG_RUNTIME_DIR")
  if not dir or not core.stat(dir) then dir = "/tmp" end
  local path = ("%s/leakbench-build-%d.lock"):format(dir, core.getuid())
  local waited = false
  while true do
    if core.write_file(path, tostring(core.getpid()), tonumber("644", 8), true) then
      return function() core.rmtree(path) end
    end
    local pid = math.tointeger(tonumber(core.read_file(path) or ""))
    if not pid or not podman.live_owner { ["leakbench.pid"] = tostring(pid) } then
      core.rmtree(path)                 -- stale: its owner is gone
    else
      if not waited then
        say(o, "waiting for another leakbench build (pid %d) to finish", pid)
        waited = true
      end
      if not core.sleep(0.5) then return nil, "interrupted" end
    end
  end
end

--- M.candidates([opts]) -> { root =, by_base = { [base] = tags }, refs = {...} }
--- | nil, err: what M.ensure looks for with the same OPTS, every base
--- pick_base could choose and the tags of the images on each, computed
--- from the files alone (their hashes: about 10 ms), without podman, so
--- that the runner computes them while its podman service starts.
function M.candidates(opts)
  local o = options(opts)
  local root, err = M.root(o)
  if not root then return nil, err end
  local bases
  if o.base == "debootstrap" then bases = { (M.base_tag(o)) }
  elseif o.base then bases = { o.base }
  else bases = { M.REGISTRY_BASE, (M.base_tag(o)) } end
  local c = { root = root, by_base = {}, refs = {} }
  for _, b in ipairs(bases) do
    local tags
    tags, err = M.tags_for(root, b, o.claude_version)
    if not tags then return nil, err end
    c.by_base[b] = tags
    for _, ref in ipairs({ b, tags.claude, tags.proxy }) do c.refs[#c.refs + 1] = ref end
  end
  return c
end

--- M.ensure(pm, [opts]) -> { claude =, proxy =, base = , built = {what = s} }
--- | nil, err. Builds whatever is missing. opts: root, claude_version, base,
--- mirror, progress (false: silent; a function(line); default: stderr),
--- candidates (M.candidates of the same opts, computed before).
function M.ensure(pm, opts)
  local o = options(opts)
  o.built = {}
  -- The usual case, nothing to build, in one podman call: every base
  -- that pick_base could choose, and the images on each.
  local c, err = o.candidates
  if not c then c, err = M.candidates(o) end
  if not c then return nil, err end
  local root, by_base = c.root, c.by_base
  local present
  present, err = M.present(pm, c.refs)
  if not present then return nil, err end
  local base = pick_base(o, present)
  local tags = base and present[base] and by_base[base]
  if tags and present[tags.claude] and present[tags.proxy] then
    tags.built = o.built
    return tags
  end
  local unlock
  unlock, err = lock(o)
  if not unlock then return nil, err end
  tags, err = M._build_missing(pm, o, root)
  unlock()
  return tags, err
end

-- ensure()'s second half, under the build lock.
function M._build_missing(pm, o, root)
  local present, err = M.local_images(pm)   -- again: a build we waited for may have made them
  if not present then return nil, err end
  local base
  base, err = ensure_base(pm, o, present)
  if not base then return nil, err end
  local tags
  tags, err = M.tags_for(root, base, o.claude_version)
  if not tags then return nil, err end
  tags.built = o.built

  if not present[tags.claude] then
    local ctx
    ctx, err = core.tmpdir("leakbench-ctx-")
    local ok = ctx ~= nil
    if ok then
      ok, err = with_ca(function(ca)
        return build(pm, o, "claude", {
          tag = tags.claude, context = ctx,
          containerfile = root .. "/containers/claude.Containerfile",
          build_args = { BASE = base, CLAUDE_VERSION = o.claude_version,
                         NPM_REGISTRY = os.getenv("LEAKBENCH_NPM_REGISTRY") },
          secrets = { ca = ca },
        })
      end)
      core.rmtree(ctx)
    end
    if not ok then return nil, err end
  end

  if not present[tags.proxy] then
    local ctx
    ctx, err = stage_proxy_context(root)
    if not ctx then return nil, err end
    local ok
    ok, err = build(pm, o, "proxy", {
      tag = tags.proxy, context = ctx,
      containerfile = root .. "/containers/proxy.Containerfile",
      build_args = { BASE = base },
    })
    core.rmtree(ctx)
    if not ok then return nil, err end
  end
  return tags
end

--- M.subject_image(pm, subject, base, [opts]) -> the image of SUBJECT's
--- interceptor: IMAGE as given, or built from its
--- context with the Containerfile there, on leakbench's base image, tagged
--- with a hash of every file of the context (an edit rebuilds it, nothing
--- else does). opts: progress (as M.ensure's). Returns the tag or nil, err.
function M.subject_image(pm, subject, base, opts)
  local icp = subject.interceptor
  if icp.image then
    if pm:image_exists(icp.image) then return icp.image end
    return nil, string.format("subject '%s': image '%s' is not present (podman pull it first)",
      subject.name, icp.image)
  end
  local ctx = icp.build.context
  local st = core.stat(ctx)
  if not st or st.type ~= "dir" then
    return nil, string.format("subject '%s': build context '%s' is not a directory", subject.name, ctx)
  end
  local cf = ctx .. "/" .. icp.build.containerfile
  if not core.stat(cf) then
    return nil, string.format("subject '%s': no Containerfile '%s'", subject.name, cf)
  end
  local parts = { "base\0" .. tostring(base) .. "\0containerfile\0" .. icp.build.containerfile }
  for _, rel in ipairs(tree.files(ctx)) do
    parts[#parts + 1] = rel .. "\0" .. assert(core.sha256_file(ctx .. "/" .. rel))
  end
  local tag = string.format("localhost/leakbench-subject-%s:%s", subject.name:lower(),
    core.sha256(table.concat(parts, "\0")):sub(1, 12))
  if pm:image_exists(tag) then return tag end
  local o = options(opts)
  o.built = (opts and opts.built) or {}
  local ok, err = build(pm, o, tag, { containerfile = cf, tag = tag, context = ctx,
    build_args = { BASE = base } })
  if not ok then return nil, string.format("subject '%s': interceptor: %s", subject.name, err) end
  return tag
end

-- Every regular file under DIR, as paths relative to it, sorted.
local function context_files(dir)
  local out = {}
  local function walk_ctx(rel)
    local names = core.listdir(rel and (dir .. "/" .. rel) or dir) or {}
    table.sort(names)
    for _, n in ipairs(names) do
      local r = rel and (rel .. "/" .. n) or n
      local st = core.stat(dir .. "/" .. r)
      if st and st.type == "dir" then walk_ctx(r)
      elseif st and st.type == "file" then out[#out + 1] = r end
    end
  end
  walk_ctx(nil)
  return out
end

--- M.agent_tag(subject, claude_tag) -> the tag of SUBJECT's agent layer
--- on the claude image CLAUDE_TAG | nil, err (no context, no Containerfile).
function M.agent_tag(subject, claude_tag)
  local b = subject.agent.build
  local st = core.stat(b.context)
  if not st or st.type ~= "dir" then
    return nil, ("subject '%s': agent build context '%s' is not a directory"):format(subject.name, b.context)
  end
  if not is_file(b.context .. "/" .. b.containerfile) then
    return nil, ("subject '%s': no Containerfile '%s/%s' for its agent layer"):format(subject.name,
      b.context, b.containerfile)
  end
  local h, err = M.hash(b.context, context_files(b.context),
    { "CLAUDE_IMAGE=" .. claude_tag, "CONTAINERFILE=" .. b.containerfile })
  if not h then return nil, err end
  return ("localhost/leakbench-agent-%s:%s"):format(subject.name:lower(), h)
end

--- M.ensure_agent(pm, subject, tags, [opts]) -> the agent layer's tag,
--- built when missing | nil, err. TAGS: M.ensure's (claude, base). opts:
--- progress (as M.ensure's), built (a table: built[tag] = seconds).
function M.ensure_agent(pm, subject, tags, opts)
  local o = options(opts)
  o.built = (opts and opts.built) or {}
  local tag, err = M.agent_tag(subject, tags.claude)
  if not tag then return nil, err end
  local present
  present, err = M.present(pm, { tag })
  if not present then return nil, err end
  if present[tag] then return tag end
  local unlock
  unlock, err = lock(o)
  if not unlock then return nil, err end
  present = M.present(pm, { tag }) or {}
  local ok = true
  if not present[tag] then
    local b = subject.agent.build
    ok, err = with_ca(function(ca)
      return build(pm, o, tag, {
        tag = tag, context = b.context, containerfile = b.context .. "/" .. b.containerfile,
        build_args = { CLAUDE_IMAGE = tags.claude, BASE = tags.base,
                       NPM_REGISTRY = os.getenv("LEAKBENCH_NPM_REGISTRY") },
        secrets = { ca = ca },
      })
    end)
  end
  unlock()
  if not ok then return nil, ("subject '%s': agent layer: %s"):format(subject.name, err) end
  return tag
end

-- Where the user config of an agent layer is kept, extracted once per
-- image tag: $XDG_CACHE_HOME/leakbench/user-config, else
-- ~/.cache/leakbench/user-config.
local function user_config_cache()
  local base = os.getenv("XDG_CACHE_HOME")
  if not base or base == "" then base = (os.getenv("HOME") or "/tmp") .. "/.cache" end
  return base .. "/leakbench/user-config"
end

--- M.agent_user_config(pm, tag) -> the host directory holding a copy of
--- the agent layer TAG's /home/bench/.claude (what the package's installer
--- wrote there, as uid 1000) | nil, err. Extracted once per tag (podman
--- create, cp, rm), into a fresh directory renamed into place, so a
--- concurrent or interrupted extraction never leaves half a copy; the same
--- tag afterwards costs one stat.
M.USER_HOME = "/home/bench/.claude"
function M.agent_user_config(pm, tag)
  local dir = user_config_cache() .. "/" .. tag:gsub("[^%w._-]", "_")
  local st = core.stat(dir)
  if st and st.type == "dir" then return dir end
  local ok, err = core.mkdir_p(user_config_cache(), 448)
  if not ok then return nil, err end
  local tmp
  tmp, err = core.tmpdir("extract-", user_config_cache())
  if not tmp then return nil, err end
  local name = "leakbench-uc-" .. core.uuid():sub(1, 12)
  local function fail(msg)
    pm:podman({ "rm", "-f", name }, { timeout = 60 })
    core.rmtree(tmp)
    return nil, ("cannot copy %s out of image '%s': %s"):format(M.USER_HOME, tag, msg)
  end
  local argv = { "create", "--name", name }
  for _, a in ipairs(pm:label_args()) do argv[#argv + 1] = a end
  argv[#argv + 1], argv[#argv + 2] = tag, "true"
  local r
  r, err = pm:podman(argv, { timeout = 120 })
  if not r then return fail(err) end
  r, err = pm:podman({ "cp", name .. ":" .. M.USER_HOME .. "/.", tmp .. "/claude" }, { timeout = 300 })
  if not r then
    if tostring(err):find("no such file or directory", 1, true) then
      return fail("the layer's installer wrote nothing there (agent.user_config = true)")
    end
    return fail(err)
  end
  pm:podman({ "rm", "-f", name }, { timeout = 60 })
  if not os.rename(tmp .. "/claude", dir) then
    core.rmtree(tmp)
    st = core.stat(dir)
    if st and st.type == "dir" then return dir end     -- another process was first
    return nil, ("cannot move the user config of '%s' into '%s'"):format(tag, dir)
  end
  core.rmtree(tmp)
  return dir
end

--- M.init_copy(pm, tag, base) -> the host directory holding a copy of
--- what the claude container runs from the servers image TAG (lb-init and
--- lb-nodump.so, at their paths in the image), for a run to bind-mount
--- read-only at sandbox.lua's INIT_ROOT | nil, err. Extracted once per
--- tag, like agent_user_config, into a fresh directory renamed into place.
---
--- Not an image mount of TAG per container: on podman 4.3.1 (its
--- containers/storage 1.43), an image mount's count lives in the layer
--- store's mountpoints.json and in each podman process's own reference
--- count of the overlay mount (drivers.RefCounter); a long-lived process
--- (the suite's podman service) and the CLI processes around it (conmon's
--- `podman container cleanup` of every container) fall out of step, and
--- one unmounts, and removes, the merged directory another container is
--- about to mount: "error mounting ... to rootfs at /opt/leakbench: no
--- such file or directory" (4 of 559 runs). A bind of one host copy has no
--- count shared between processes.
---
--- The files are written by root in a container of TAG, run the way the
--- claude container is (rootless: the keep-id user namespace), so that
--- there they are owned by root, as in the image. Their folder, files/,
--- also holds opt/leakbench, a link to INIT_ROOT: through the image mount,
--- a process's memory map named lb-nodump.so by its path in the image
--- (/usr/local/lib/leakbench/...), through the bind by its full path, and
--- subjects/srt's launcher (built into its agent layer) puts INIT_ROOT in
--- front of what its map says.
M.INIT_ROOT = "/opt/leakbench"
M.INIT_FILES = { "usr/local/bin/lb-init", "usr/local/lib/leakbench/lb-nodump.so" }

--- BASE: a directory of ours alone (mode 0700), whose path the claude
--- container's mount table may show: sandbox.hide_base(), where a run's
--- folder sits while it runs (no path of the user's shows there). The copy
--- is BASE/init/<tag>/files (not .../root: the mount table shows the path,
--- and it must not name the host's /root).
function M.init_copy(pm, tag, base)
  local cache = base .. "/init"
  local dir = cache .. "/" .. M.init_dir_name(tag)
  local function lacks(d)
    for _, rel in ipairs(M.INIT_FILES) do
      local f = core.stat(d .. "/files/" .. rel)
      if not (f and f.type == "file") then return rel end
    end
  end
  local function done()
    local rel = lacks(dir)
    if rel then
      return nil, ("lb-init's copy in '%s' lacks %s: remove the folder, and the next run copies it again")
        :format(dir, rel)
    end
    return dir .. "/files"
  end
  local st = core.stat(dir .. "/files")
  if st and st.type == "dir" then return done() end
  core.mkdir_p(cache, 448)
  for _, d in ipairs({ base, cache }) do
    st = core.stat(d)
    if not (st and st.type == "dir" and st.uid == core.getuid() and st.mode & 63 == 0) then
      return nil, ("cannot copy lb-init out of image '%s': '%s' is not a directory of ours alone (mode 0700)")
        :format(tag, d)
    end
  end
  -- named by this process, so that a sweep tells a killed one's (sweep_init)
  local tmp, err = core.tmpdir(("%s%d-"):format(M.EXTRACT_PREFIX, core.getpid()), cache)
  if not tmp then return nil, err end
  local script = { "set -eu; umask 022; mkdir /out/files" }
  for _, rel in ipairs(M.INIT_FILES) do
    script[#script + 1] = ("mkdir -p /out/files/%s && cp /%s /out/files/%s && chmod 0555 /out/files/%s")
      :format(rel:match("^(.*)/"), rel, rel, rel)
  end
  script[#script + 1] = "mkdir -p /out/files/opt && ln -s " .. M.INIT_ROOT .. " /out/files" .. M.INIT_ROOT
  local argv = { "run", "--rm", "--network", "none", "--cap-drop", "all", "--cap-add", "DAC_OVERRIDE" }
  if not pm.rootful then argv[#argv + 1] = ("--userns=keep-id:uid=%d,gid=%d"):format(podman.UID, podman.UID) end
  for _, a in ipairs(pm:ulimit_args()) do argv[#argv + 1] = a end
  for _, a in ipairs({ "--user", "0:0", "-v", tmp .. ":/out" }) do argv[#argv + 1] = a end
  for _, a in ipairs(pm:label_args()) do argv[#argv + 1] = a end
  for _, a in ipairs({ "--entrypoint", "/bin/sh", tag, "-c", table.concat(script, "; ") }) do
    argv[#argv + 1] = a
  end
  local r
  r, err = pm:podman(argv, { timeout = 120 })
  -- a copy that lacks a file is never put in place
  local missing = r and lacks(tmp)
  if not r or missing then
    M.rm_init_tmp(pm, tmp)
    return nil, ("cannot copy lb-init out of image '%s': %s"):format(tag,
      missing and "the image has no /" .. missing or err)
  end
  if not os.rename(tmp, dir) then
    M.rm_init_tmp(pm, tmp)
    st = core.stat(dir .. "/files")
    if st and st.type == "dir" then return done() end     -- another process was first
    return nil, ("cannot move lb-init's copy of '%s' into '%s'"):format(tag, dir)
  end
  return done()
end

--- M.sweep_init(pm, base, [tell], [keep], [every]) -> count. What init_copy left in
--- BASE/init that nothing will use again: an extraction's folder
--- (EXTRACT_PREFIX .. pid .. "-XXXXXX") whose leakbench process is gone (a
--- run killed while it copied; one that names no process, older than
--- EXTRACT_STALE seconds), and the copy of an image that no longer
--- exists (removed, or a tag of an older build). KEEP: a set of tags whose
--- copies stay without asking podman (the suite's own images); podman's
--- list of images (label leakbench=1, which the servers image inherits
--- from the base) is read only when another copy is there, and when it
--- cannot be read no copy is removed; EVERY (seconds): not again within
--- that time of the last time it was read (INIT_CHECKED's age: the sweep
--- before each suite; `leakbench clean` reads it each time). A copy
--- another suite's image or a live run uses has its image, so it stays.
M.EXTRACT_PREFIX = "extract-"
M.EXTRACT_STALE = 3600
M.INIT_CHECKED = ".images-checked"

function M.sweep_init(pm, base, tell, keep, every)
  tell = tell or function() end
  local cache = base .. "/init"
  local keep_dirs = {}
  for tag in pairs(keep or {}) do keep_dirs[M.init_dir_name(tag)] = true end
  local n, others = 0, {}
  for _, name in ipairs(core.listdir(cache) or {}) do
    local pid = name:match("^" .. M.EXTRACT_PREFIX:gsub("%-", "%%-") .. "(%d+)%-")
    if pid then
      if not podman.live_owner({ ["leakbench.pid"] = pid }) and M.rm_init_tmp(pm, cache .. "/" .. name) then
        n = n + 1
        tell(("removed lb-init's unfinished copy %s/%s (process %s is gone)"):format(cache, name, pid))
      end
    elseif name:match("^" .. M.EXTRACT_PREFIX:gsub("%-", "%%-")) then
      -- one that names no process (made before they did): by its age,
      -- beyond any extraction's timeout
      local st = core.stat(cache .. "/" .. name)
      if st and st.type == "dir" and os.time() - st.mtime > M.EXTRACT_STALE
          and M.rm_init_tmp(pm, cache .. "/" .. name) then
        n = n + 1
        tell(("removed lb-init's unfinished copy %s/%s (older than %d s)"):format(cache, name, M.EXTRACT_STALE))
      end
    elseif not keep_dirs[name] and name:sub(1, 1) ~= "." then
      others[#others + 1] = name
    end
  end
  if #others == 0 then return n end
  local stamp = cache .. "/" .. M.INIT_CHECKED
  local checked = every and core.stat(stamp)
  if checked and os.time() - checked.mtime < every then return n end
  local list = pm:images("leakbench=1")
  if not list then return n end
  core.write_file(stamp, "", 384)
  local exists = {}
  for _, im in ipairs(list) do
    for _, tag in ipairs(im.names) do exists[M.init_dir_name(tag)] = true end
  end
  for _, name in ipairs(others) do
    local st = core.stat(cache .. "/" .. name)
    if st and st.type == "dir" and not exists[name] and M.rm_init_tmp(pm, cache .. "/" .. name) then
      n = n + 1
      tell(("removed lb-init's copy %s/%s (its image is gone)"):format(cache, name))
    end
  end
  return n
end

--- M.init_dir_name(tag) -> the name of TAG's copy in BASE/init.
function M.init_dir_name(tag)
  return (tag:gsub("[^%w._-]", "_"))
end

-- Removes an extraction's folder: rootless, its files belong to the user
-- namespace's root, which only `podman unshare` can remove.
function M.rm_init_tmp(pm, tmp)
  if pm.rootful then return core.rmtree(tmp) end
  return pm:podman({ "unshare", "rm", "-rf", tmp }, { timeout = 60 })
end

--- M.main(args, [pm]) -> exit status for `leakbench build`: 0 built or
--- present, 1 failed, 2 usage error. Prints the tags on stdout.
function M.main(args, pm)
  local flags, status = cli.args("build", args)
  if not flags then return status end
  for _, k in ipairs({ "base", "mirror" }) do
    if flags[k] == "" then
      io.stderr:write(("leakbench: build: --%s needs a value\n"):format(k))
      return 2
    end
  end
  local opts = { base = flags.base, mirror = flags.mirror }
  local versions = {}
  for _, v in ipairs(flags.claude_version or {}) do
    if v == "" then
      io.stderr:write("leakbench: build: --claude-version needs a value\n")
      return 2
    end
    versions[#versions + 1] = v
  end
  if #versions == 0 then versions[1] = false end
  -- --subject FILE: its interceptor's image and its agent layer (on each
  -- version's claude image) too, as `run` would build them.
  local subjects = {}
  for _, f in ipairs(flags.subject or {}) do
    local t, err = loader.load(f, "subject")
    if not t then
      io.stderr:write("leakbench: build: ", err, "\n")
      return 1
    end
    subjects[#subjects + 1] = t
  end
  pm = pm or podman.get()
  local failed = false
  for n, v in ipairs(versions) do
    opts.claude_version = v or nil
    local tags, err = M.ensure(pm, opts)
    if not tags then
      io.stderr:write("leakbench: build: ", err, "\n")
      return 1
    end
    for _, what in ipairs(n == 1 and { "claude", "proxy", "base" } or { "claude" }) do
      io.stdout:write(("%-7s %s\n"):format(what, tags[what]))
    end
    for _, s in ipairs(subjects) do
      local parts = {}
      if s.interceptor and n == 1 then parts[#parts + 1] = { "interceptor", M.subject_image, tags.base } end
      if s.agent then parts[#parts + 1] = { "agent", M.ensure_agent, tags } end
      if s.agent and s.agent.user_config then
        parts[#parts + 1] = { "config", function(p, subj, t)
          local tag, e = M.ensure_agent(p, subj, t)
          if not tag then return nil, e end
          local dir
          dir, e = M.agent_user_config(p, tag)
          if not dir then return nil, ("subject '%s': %s"):format(subj.name, e) end
          return dir
        end, tags }
      end
      for _, p in ipairs(parts) do
        local tag, perr = p[2](pm, s, p[3])
        if tag then
          io.stdout:write(("%-7s %s (subject '%s')\n"):format(p[1] == "interceptor" and "icp" or p[1], tag,
            s.name))
        else
          io.stderr:write("leakbench: build: ", perr, "\n")
          failed = true
        end
      end
    end
  end
  return failed and 1 or 0
end

return M
