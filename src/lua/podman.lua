-- Podman control: one object per process that knows how podman must be
-- called on this machine, and small verbs on top of core.run.
--
-- What it detects, without running podman (so creating it costs nothing):
--   rootful or rootless  getuid() == 0
--   runtime              on cgroup v1 or hybrid hierarchies crun fails
--                        ("cgroups in hybrid mode not supported"); runc works
--                        there, so "--runtime runc" is passed when runc is
--                        installed. LEAKBENCH_RUNTIME overrides ("" = podman's
--                        default).
--   ulimits              rootful podman sets container rlimits this process
--                        cannot raise without CAP_SYS_RESOURCE ("setrlimit
--                        RLIMIT_NOFILE: operation not permitted"); then every
--                        run and build gets --ulimit nofile=N:N (N = our hard
--                        limit) and nproc=M:M (M = min(hard, 32768)).
--
-- How Claude Code runs as uid 1000 (user_args):
--   rootless  --userns=keep-id:uid=1000,gid=1000: the invoking user's files
--             appear as 1000:1000; staged directories need no chown.
--   rootful   --user 1000:1000: the caller chowns staged directories that the
--             container must write to 1000:1000 (core.chown(dir, 1000, 1000,
--             true)).
--
-- Errors: every failed podman command comes back as nil, "podman run failed
-- (exit 125): <first error line>" (the result table as a third value).
-- Labels: everything created for a run carries leakbench=1,
-- leakbench.run=<run id> and leakbench.pid=<our pid>, so `leakbench clean`
-- can tell live runs from leftovers.
local core = require "leakbench.core"
local cjson = require "cjson"
local printable = require "leakbench.printable"
local json = require "leakbench.json"
local trace = require "leakbench.trace"

local M = {}

M.UID = 1000
M.DEFAULT_TIMEOUT = 120       -- seconds, for ordinary podman commands
M.BUILD_TIMEOUT = 3600        -- seconds, for podman build
M.NPROC_MAX = 32768

local Podman = {}
Podman.__index = Podman

-- Is an executable named `name` on PATH or in the usual sbin directories?
local function find_program(name)
  local path = (os.getenv("PATH") or "") .. ":/usr/sbin:/sbin:/usr/local/sbin"
  for dir in path:gmatch("[^:]+") do
    local st = core.stat(dir .. "/" .. name)
    if st and (st.type == "file" or st.type == "link") then
      return dir .. "/" .. name
    end
  end
  return nil
end
M.find_program = find_program

-- "v2" when /sys/fs/cgroup is the unified hierarchy, "v1" otherwise (v1 or
-- hybrid, where crun fails), nil when there is no cgroup file system.
local function cgroup_mode()
  if core.stat("/sys/fs/cgroup/cgroup.controllers") then return "v2" end
  if core.stat("/sys/fs/cgroup") then return "v1" end
  return nil
end
M.cgroup_mode = cgroup_mode

-- Does this process hold CAP_SYS_RESOURCE (bit 24 of CapEff)?
local function has_cap_sys_resource()
  local status = core.read_file("/proc/self/status")
  local hex = status and status:match("CapEff:%s*(%x+)")
  if not hex then return false end
  local v = tonumber(hex:sub(-8), 16) or 0     -- bit 24 lives in the low 32 bits
  return (v >> 24) & 1 == 1
end
M.has_cap_sys_resource = has_cap_sys_resource

-- The --ulimit values rootful podman needs here, or nil when none are.
local function ulimits(rootful)
  if not rootful or has_cap_sys_resource() then return nil end
  local _, nofile = core.getrlimit("nofile")
  local _, nproc = core.getrlimit("nproc")
  if nofile == math.huge then nofile = 1048576 end
  if nproc == math.huge or nproc > M.NPROC_MAX then nproc = M.NPROC_MAX end
  return { nofile = math.tointeger(nofile), nproc = math.tointeger(nproc) }
end

-- The first line worth showing from podman's stderr: the "Error: " line if
-- there is one (without the prefix), else the first non-empty line.
local function first_error_line(text)
  for line in text:gmatch("[^\n]+") do
    local e = line:match("^Error: (.*)")
    if e then return e end
  end
  for line in text:gmatch("[^\n]+") do
    if line:match("%S") then return line end
  end
  return "(no message)"
end
M.first_error_line = first_error_line

-- The message for a podman result that is not a success, or nil.
local function failure(verb, r)
  if r.interrupted then
    return ("podman %s interrupted"):format(verb)
  elseif r.timed_out then
    return ("podman %s timed out after %.1f s"):format(verb, r.elapsed)
  elseif r.signal then
    return ("podman %s was killed by %s"):format(verb, r.signame or r.signal)
  elseif r.status ~= 0 then
    return ("podman %s failed (exit %d): %s"):format(verb, r.status,
      first_error_line(r.stderr ~= "" and r.stderr or r.stdout))
  end
  return nil
end
M.failure = failure

--- M.new([opts]) -> Podman. opts: podman (program, default $LEAKBENCH_PODMAN
--- or "podman"), runtime (overrides detection; "" for podman's default),
--- rootful (boolean, for tests), timeout (default seconds per command),
--- seccomp (a profile's path, or false for podman's default; default
--- M.seccomp_profile's).
function M.new(opts)
  opts = opts or {}
  local self = setmetatable({}, Podman)
  self.program = opts.podman or os.getenv("LEAKBENCH_PODMAN") or "podman"
  if opts.rootful ~= nil then
    self.rootful = opts.rootful
  else
    self.rootful = core.getuid() == 0
  end
  self.timeout = opts.timeout or M.DEFAULT_TIMEOUT
  local runtime = opts.runtime or os.getenv("LEAKBENCH_RUNTIME")
  if runtime == nil then
    self.cgroups = cgroup_mode()
    if self.cgroups == "v1" and find_program("runc") then
      runtime = "runc"
      self.runtime_reason = "cgroup v1/hybrid hierarchy: crun does not support it, runc does"
    end
  elseif runtime ~= "" then
    self.runtime_reason = "set by LEAKBENCH_RUNTIME"
  end
  if runtime == "" then runtime = nil end
  self.runtime = runtime
  self.ulimits = ulimits(self.rootful)
  -- a profile's path, or false for podman's default (tests): else found
  -- on first use (pm:seccomp)
  if opts.seccomp ~= nil then self.seccomp_path = opts.seccomp end
  return self
end

local the_podman
--- M.get() -> the process-wide Podman (created on first use).
function M.get()
  the_podman = the_podman or M.new()
  return the_podman
end

--- pm:args() -> global flags that go before the podman verb.
function Podman:args()
  if self.runtime then return { "--runtime", self.runtime } end
  return {}
end

--- pm:ulimit_args() -> { "--ulimit", "nofile=N:N", "--ulimit", "nproc=M:M" } or {}.
function Podman:ulimit_args()
  local u = self.ulimits
  if not u then return {} end
  return { "--ulimit", ("nofile=%d:%d"):format(u.nofile, u.nofile),
           "--ulimit", ("nproc=%d:%d"):format(u.nproc, u.nproc) }
end

--- pm:user_args() -> how to run as uid 1000: rootless
--- { "--userns=keep-id:uid=1000,gid=1000" }, rootful { "--user", "1000:1000" }.
function Podman:user_args()
  if self.rootful then
    return { "--user", ("%d:%d"):format(M.UID, M.UID) }
  end
  return { ("--userns=keep-id:uid=%d,gid=%d"):format(M.UID, M.UID) }
end

--- pm:run_args() -> per-container flags for `podman run`: ulimit_args() then
--- user_args(). (Policy flags such as --cap-drop are the caller's.)
function Podman:run_args()
  local a = self:ulimit_args()
  for _, v in ipairs(self:user_args()) do a[#a + 1] = v end
  return a
end

--- M.labels(ids) -> the labels of everything leakbench creates, as an
--- ordered list of { key, value }: leakbench=1, leakbench.run=IDS.run,
--- leakbench.suite=IDS.suite (each only when given), leakbench.pid=<our
--- pid> and, in a run the runner started, leakbench.runner=<its pid>
--- (M.RUNNER_ENV), so that `leakbench clean` and the next suite can tell
--- live runs from leftovers (M.live_owner). The one place labels are
--- written: label_args and run_argv use it.
M.RUNNER_ENV = "LEAKBENCH_RUNNER_PID"
function M.labels(ids)
  ids = ids or {}
  local l = { { "leakbench", "1" } }
  if ids.run then l[#l + 1] = { "leakbench.run", ids.run } end
  if ids.suite then l[#l + 1] = { "leakbench.suite", ids.suite } end
  l[#l + 1] = { "leakbench.pid", tostring(core.getpid()) }
  local runner = os.getenv(M.RUNNER_ENV)
  if runner and runner:match("^%d+$") then l[#l + 1] = { "leakbench.runner", runner } end
  return l
end

--- pm:label_args(run_id) -> { "--label", "leakbench=1", "--label",
--- "leakbench.run=ID", "--label", "leakbench.pid=PID" } (no run label
--- without a run_id).
function Podman:label_args(run_id)
  local a = {}
  for _, kv in ipairs(M.labels { run = run_id }) do
    a[#a + 1] = "--label"
    a[#a + 1] = kv[1] .. "=" .. kv[2]
  end
  return a
end

-- The hardening of every container leakbench starts, written once: no
-- capability (a container's spec adds back only what it names in
-- cap_add), no privilege gained through exec, a read-only root. run_argv
-- and the service's create request (create_spec) both apply it.
M.HARDENING = { cap_drop = "all", no_new_privileges = true, read_only = true }

-- The seccomp profile of every container (pm:seccomp): podman's own
-- default, the first of M.SECCOMP_SOURCES that is there, with three
-- changes.
--   * Only this machine's native system-call interface is let through.
--     podman's default also admits the compatibility ones (on x86_64 the
--     32-bit int 0x80 interface and x32; on arm64 the 32-bit arm one),
--     whose system-call numbers are not the native ones a filter is
--     written for, and which no program of ours or of Claude Code's
--     calls: a call through one now kills its process (SIGSYS). And runc
--     compiles the filter for every container it starts: one interface
--     is a third of the work (issue 26: a container's start, 84 -> 67 ms
--     here).
--   * No call reaches the kernel keyring (M.DENIED_CALLS), which user
--     namespaces do not separate.
--   * socket() makes only the families a run needs (M.SOCKET_RULES: Unix,
--     IPv4, IPv6, netlink but its audit protocol, packet, which the
--     kernel refuses without CAP_NET_RAW); any other fails with ENOSYS.
--     podman's default lets every family through, AF_VSOCK among them,
--     which no network namespace holds: from inside a sealed run, a
--     virtual machine's vsock reaches its host.
-- Every other rule as it was. Where there is no source, or it cannot be
-- changed for sure, or LEAKBENCH_SECCOMP=podman, podman's default stays
-- (pm:seccomp says why).
M.SECCOMP_SOURCES = { "/etc/containers/seccomp.json", "/usr/share/containers/seccomp.json" }
M.SECCOMP_ENV = "LEAKBENCH_SECCOMP"
M.SECCOMP_PREFIX = "seccomp-"

-- ELF's e_machine -> libseccomp's name of that native interface.
local ELF_SCMP = { [62] = "SCMP_ARCH_X86_64", [183] = "SCMP_ARCH_AARCH64", [243] = "SCMP_ARCH_RISCV64" }

--- M.native_arch([exe]) -> the libseccomp name of the system-call
--- interface EXE (default: this program) is built for, read from its ELF
--- header, | nil when it is not one of ELF_SCMP's.
function M.native_arch(exe)
  local f = io.open(exe or "/proc/self/exe", "rb")
  local h = f and f:read(20)
  if f then f:close() end
  if not h or #h < 20 or h:sub(1, 4) ~= "\127ELF" then return nil end
  local lo, hi = h:byte(19), h:byte(20)
  return ELF_SCMP[h:byte(6) == 2 and lo * 256 + hi or hi * 256 + lo]
end

-- The index of what closes the "[" or "{" at I of TEXT (JSON), or nil.
local function closing(text, i)
  local open = text:sub(i, i)
  local close = open == "[" and "]" or "}"
  local depth, n = 0, #text
  while i <= n do
    local c = text:sub(i, i)
    if c == '"' then
      i = i + 1
      while i <= n and text:sub(i, i) ~= '"' do
        i = i + (text:sub(i, i) == "\\" and 2 or 1)
      end
    elseif c == open then
      depth = depth + 1
    elseif c == close then
      depth = depth - 1
      if depth == 0 then return i end
    end
    i = i + 1
  end
  return nil
end

-- The list under KEY (once in TEXT): its "[" and "]", or nil and why.
local function key_list(text, key)
  local at = text:find('"' .. key .. '"', 1, true)
  if not at then return nil, "it has no " .. key end
  if text:find('"' .. key .. '"', at + 1, true) then return nil, "it names " .. key .. " twice" end
  local open = text:match('^"' .. key .. '"%s*:%s*()%[', at)
  local close = open and closing(text, open)
  if not close then return nil, "its " .. key .. " is not a list" end
  return open, close
end

-- What socket() may make (M.seccomp_profile): the families a run needs.
local function socket_rule(action, args, comment, errno)
  local a = {}
  for i, c in ipairs(args) do
    a[i] = ('{"index":%d,"value":%d,"valueTwo":0,"op":"SCMP_CMP_%s"}'):format(c[1], c[2], c[3])
  end
  return ('{"names":["socket"],"action":"%s",%s"args":[%s],"comment":"leakbench: %s",'
    .. '"includes":{},"excludes":{}}'):format(action, errno and ('"errnoRet":%d,'):format(errno) or "",
    table.concat(a, ","), comment)
end
M.SOCKET_RULES = {
  socket_rule("SCMP_ACT_ALLOW", { { 0, 1, "EQ" } }, "AF_UNIX"),
  socket_rule("SCMP_ACT_ALLOW", { { 0, 2, "EQ" } }, "AF_INET"),
  socket_rule("SCMP_ACT_ALLOW", { { 0, 10, "EQ" } }, "AF_INET6"),
  socket_rule("SCMP_ACT_ALLOW", { { 0, 17, "EQ" } }, "AF_PACKET, which the kernel refuses without CAP_NET_RAW"),
  socket_rule("SCMP_ACT_ALLOW", { { 0, 16, "EQ" }, { 2, 9, "NE" } }, "AF_NETLINK but NETLINK_AUDIT"),
  socket_rule("SCMP_ACT_ERRNO", { { 0, 16, "EQ" }, { 2, 9, "EQ" } }, "NETLINK_AUDIT, as podman's", 22),
}

-- Calls no rule lets through (M.seccomp_profile): the kernel keyring,
-- which user namespaces do not separate: rootful, the agent's uid 1000 is
-- the host's, and so is its user keyring (Docker's default refuses these
-- three too; podman's lets keyctl through).
M.DENIED_CALLS = { keyctl = true, add_key = true, request_key = true }

-- RULE's TEXT (a rule of a profile, and RULE, it decoded) without the
-- names of M.DENIED_CALLS: "" when it names nothing else; nil and why
-- when they cannot be taken out for sure. RULE.names is changed to match.
local function without_denied(text, rule)
  local names, out = {}, text
  for _, name in ipairs(rule.names) do
    if not M.DENIED_CALLS[name] then names[#names + 1] = name end
  end
  if #names == 0 then return "" end
  if #names == #rule.names then return text end
  names = {}
  for _, name in ipairs(rule.names) do
    if M.DENIED_CALLS[name] then
      local q = '"' .. name .. '"'
      local n
      out, n = out:gsub(q:gsub("%p", "%%%0") .. "%s*,%s*", "", 1)
      if n == 0 then out, n = out:gsub(",%s*" .. q:gsub("%p", "%%%0"), "", 1) end
      if n == 0 then return nil, "cannot take " .. name .. " out of its rule" end
    else
      names[#names + 1] = name
    end
  end
  local ok, back = pcall(cjson.decode, out)
  if not (ok and type(back) == "table" and #back.names == #names) then
    return nil, "a rule without the calls it must not let through does not read back"
  end
  for k, v in ipairs(names) do
    if back.names[k] ~= v then return nil, "a rule without the calls it must not let through does not read back" end
  end
  rule.names = names
  return out
end

--- M.narrow_seccomp(text, arch) -> text | nil, why: TEXT (a podman
--- seccomp profile, JSON) whose archMap is ARCH alone, without its
--- sub-architectures, whose socket rules are M.SOCKET_RULES, at the end
--- of its syscalls, and whose rules name none of M.DENIED_CALLS; every
--- other rule byte for byte, in its order.
--- Checked by decoding both: the same default action and other rules.
function M.narrow_seccomp(text, arch)
  local ok, doc = pcall(cjson.decode, text)
  if not ok or type(doc) ~= "table" or type(doc.archMap) ~= "table" or type(doc.syscalls) ~= "table" then
    return nil, "not a profile with an archMap and syscalls"
  end
  local has
  for _, a in ipairs(doc.archMap) do has = has or (type(a) == "table" and a.architecture == arch) end
  if not has then return nil, "its archMap lacks " .. arch end
  local open, close = key_list(text, "archMap")
  if not open then return nil, close end
  local out = text:sub(1, open - 1) .. ('[{"architecture":"%s","subArchitectures":[]}]'):format(arch)
    .. text:sub(close + 1)
  open, close = key_list(out, "syscalls")
  if not open then return nil, close end
  local keep, i, others = {}, open + 1, {}
  while true do
    local at = out:match("^[%s,]*()", i)
    if at >= close then break end
    local e = out:sub(at, at) == "{" and closing(out, at)
    local okr, rule = pcall(cjson.decode, out:sub(at, e or -1))
    if not (e and okr and type(rule) == "table" and type(rule.names) == "table") then
      return nil, "an entry of its syscalls is not a rule"
    end
    local socket = false
    for _, name in ipairs(rule.names) do socket = socket or name == "socket" end
    if socket and #rule.names > 1 then return nil, "a rule of its names socket with other calls" end
    local text_of, why = without_denied(out:sub(at, e), rule)
    if not text_of then return nil, why end
    if not socket and text_of ~= "" then
      keep[#keep + 1] = text_of
      others[#others + 1] = rule
    end
    i = e + 1
  end
  for _, r in ipairs(M.SOCKET_RULES) do keep[#keep + 1] = r end
  out = out:sub(1, open) .. "\n    " .. table.concat(keep, ",\n    ") .. "\n  " .. out:sub(close)
  local ok2, new = pcall(cjson.decode, out)
  if not (ok2 and type(new) == "table" and #new.archMap == 1 and new.archMap[1].architecture == arch
      and #new.archMap[1].subArchitectures == 0 and new.defaultAction == doc.defaultAction
      and #new.syscalls == #others + #M.SOCKET_RULES) then
    return nil, "the narrowed profile does not read back"
  end
  return out
end

--- M.seccomp_profile([sources], [base], [arch]) -> path | nil, why: the
--- narrowed profile (M.narrow_seccomp of the first of SOURCES there),
--- written once to BASE (M.conmon_base(): a folder of this user's alone)
--- as seccomp-<sha256>.json, and taken from there when it holds those
--- bytes.
function M.seccomp_profile(sources, base, arch)
  if os.getenv(M.SECCOMP_ENV) == "podman" then return nil, M.SECCOMP_ENV .. "=podman" end
  arch = arch or M.native_arch()
  if not arch then return nil, "this machine's system-call interface is not one leakbench knows" end
  sources = sources or M.SECCOMP_SOURCES
  local text, src
  for _, p in ipairs(sources) do
    text = core.read_file(p)
    if text then src = p break end
  end
  if not text then return nil, "no seccomp profile of podman's at " .. table.concat(sources, " or ") end
  local out, why = M.narrow_seccomp(text, arch)
  if not out then return nil, ("podman's profile %s: %s"):format(src, why) end
  base = base or M.conmon_base()
  if not base then return nil, "no folder of this user's alone to write it to" end
  local path = ("%s/%s%s.json"):format(base, M.SECCOMP_PREFIX, core.sha256(out):sub(1, 16))
  if core.read_file(path) == out then return path end
  local tmp = ("%s.%d.tmp"):format(path, core.getpid())
  local okw, err = core.write_file(tmp, out, 384)
  if not okw then return nil, err end
  local okr, rerr = os.rename(tmp, path)
  if not okr then
    os.remove(tmp)
    return nil, rerr
  end
  return path
end

-- The runner's profile, for its runs (M.SECCOMP_PATH_ENV): made once
-- for the suite, where each run's process made it again.
M.SECCOMP_PATH_ENV = "LEAKBENCH_SECCOMP_PROFILE"

--- M.made_profile(path, [base]) -> PATH | nil: PATH when it is a profile
--- M.seccomp_profile wrote: named for its bytes' hash, in BASE (default
--- M.conmon_base(), a folder of this user's alone). nil otherwise.
function M.made_profile(path, base)
  base = base or M.conmon_base()
  local hash = base and type(path) == "string" and path:match("^(.*)/" .. M.SECCOMP_PREFIX:gsub("%p", "%%%0")
    .. "(%x+)%.json$") == base and path:match("(%x+)%.json$")
  local text = hash and #hash == 16 and core.read_file(path)
  if text and core.sha256(text):sub(1, 16) == hash then return path end
  return nil
end

--- pm:seccomp() -> the seccomp profile's path (M.seccomp_profile, once
--- per Podman; in a run, the runner's, M.SECCOMP_PATH_ENV, when
--- M.made_profile says it is one) | nil, why: podman's default.
function Podman:seccomp()
  if self.seccomp_path == nil then
    local given = os.getenv(M.SECCOMP_ENV) ~= "podman" and M.made_profile(os.getenv(M.SECCOMP_PATH_ENV))
    local path, why
    if given then path = given else path, why = M.seccomp_profile() end
    self.seccomp_path, self.seccomp_why = path or false, why
  end
  return self.seccomp_path or nil, self.seccomp_why
end

local function sorted_keys(t)
  local keys = {}
  for k in pairs(t or {}) do keys[#keys + 1] = k end
  table.sort(keys)
  return keys
end

local SPEC_FIELDS = { name = "string", image = "string", entrypoint = "string", command = "table",
  detach = "boolean", rm = "boolean", stdin = "boolean", labels = "table", network = "string",
  join = "string", limits = "table", ulimits = "table", mounts = "table", env = "table",
  workdir = "string", cap_add = "table", sysctls = "table", masks = "table", log = "table",
  ready = "table", role = "string", what = "string", lifetime = "number" }

--- M.check_spec(spec): raises (misuse) when SPEC is not a container spec
--- as run_argv documents it.
function M.check_spec(spec)
  if type(spec) ~= "table" then error("container spec: expected a table, got " .. type(spec), 3) end
  for k, v in pairs(spec) do
    local want = SPEC_FIELDS[k]
    if not want then error(("container spec: unknown field '%s'"):format(tostring(k)), 3) end
    if type(v) ~= want then
      error(("container spec: field '%s' is a %s, expected a %s"):format(k, type(v), want), 3)
    end
  end
  if not spec.name or not spec.image then error("container spec: 'name' and 'image' are required", 3) end
  if (spec.network == nil) == (spec.join == nil) then
    error(("container spec '%s': exactly one of 'network' and 'join'"):format(spec.name), 3)
  end
  local n = spec.network
  if n and n ~= "none" and n ~= "default" and not n:match("^ns:/.") then
    error(("container spec '%s': network '%s' is none of 'none', 'default' and 'ns:/PATH'"):format(spec.name, n), 3)
  end
end

--- pm:run_argv(spec) -> the `podman run` argv (verb first, no program) of
--- one container, described as data (sandbox.lua's topology; doctor's
--- trial). SPEC fields:
---   name, image          required
---   entrypoint, command  the program (entrypoint) and what follows the image
---   detach, rm, stdin    -d, --rm, -i
---   labels               M.labels' list of { key, value }
---   network              "none", "default" (podman's default network) or
---                        "ns:PATH" (a network namespace kept at PATH:
---                        core.netns_make; rootful), or
---   join                 the name of a container whose network namespace it
---                        joins (rootless: its user namespace too: a netns
---                        owned by another user namespace cannot get /sys
---                        mounted), then as uid 1000 (--user)
---   limits               memory, pids, cpus, tmp (a size-capped /tmp), home
---                        (a size-capped /home/bench)
---   ulimits              { name = n } beyond this machine's (pm.ulimits)
---   mounts               list of { src, dst, ro = bool } (bind) or
---                        { image = ref, dst } (an image, read-only)
---   env                  { NAME = value }, passed sorted
---   workdir, cap_add (list), sysctls (list of { key, value }), masks (paths)
---   log                  { dir =, name =, max = }: the k8s-file log and conmon
---                        pid file (pm:log_args; max = false: no size cap)
---   lifetime             seconds after which conmon kills it, whoever else
---                        is gone (--timeout; defaults.container_lifetime)
---   ready, role, what    for the caller (readiness lines, names), not podman's
--- Every container gets M.HARDENING and runs as uid 1000 (user_args).
function Podman:run_argv(spec)
  M.check_spec(spec)
  local a = { "run" }
  local function add(...)
    for _, v in ipairs({ ... }) do a[#a + 1] = v end
  end
  if spec.detach then add("-d") end
  if spec.rm then add("--rm") end
  if spec.stdin then add("-i") end
  add("--name", spec.name)
  for _, kv in ipairs(spec.labels or {}) do add("--label", kv[1] .. "=" .. kv[2]) end
  for _, v in ipairs(self:ulimit_args()) do add(v) end
  for _, k in ipairs(sorted_keys(spec.ulimits)) do
    add("--ulimit", ("%s=%d:%d"):format(k, spec.ulimits[k], spec.ulimits[k]))
  end
  if spec.join then
    add("--network", "container:" .. spec.join)
    if not self.rootful then add("--userns", "container:" .. spec.join) end
    add("--user", ("%d:%d"):format(M.UID, M.UID))
  else
    for _, v in ipairs(self:user_args()) do add(v) end
    if spec.network ~= "default" then add("--network", spec.network) end
  end
  if spec.log then
    for _, v in ipairs(self:log_args(spec.log.dir, spec.log.name, spec.log.max)) do add(v) end
  end
  local h = M.HARDENING
  add("--cap-drop=" .. h.cap_drop)
  if h.no_new_privileges then add("--security-opt=no-new-privileges") end
  local seccomp = self:seccomp()
  if seccomp then add("--security-opt", "seccomp=" .. seccomp) end
  if h.read_only then add("--read-only") end
  for _, c in ipairs(spec.cap_add or {}) do add("--cap-add=" .. c) end
  for _, m in ipairs(spec.masks or {}) do add("--security-opt", "mask=" .. m) end
  for _, kv in ipairs(spec.sysctls or {}) do add("--sysctl", kv[1] .. "=" .. kv[2]) end
  local l = spec.limits
  if l then
    add("--memory=" .. l.memory, "--pids-limit=" .. l.pids, "--cpus=" .. tostring(l.cpus),
      "--tmpfs", "/tmp:rw,mode=1777,size=" .. l.tmp)
    if l.home then add("--tmpfs", "/home/bench:rw,mode=1777,size=" .. l.home) end
  end
  for _, m in ipairs(spec.mounts or {}) do
    if m.image then
      add("--mount", "type=image,source=" .. m.image .. ",destination=" .. m[1])
    else
      add("-v", m[1] .. ":" .. m[2] .. (m.ro and ":ro" or ""))
    end
  end
  for _, k in ipairs(sorted_keys(spec.env)) do add("-e", k .. "=" .. spec.env[k]) end
  if spec.workdir then add("-w", spec.workdir) end
  if spec.entrypoint then add("--entrypoint", spec.entrypoint) end
  if spec.lifetime then add("--timeout", ("%d"):format(math.ceil(spec.lifetime))) end
  add(spec.image)
  for _, v in ipairs(spec.command or {}) do add(v) end
  return a
end

-- Bytes of a size such as "512m" (k, m, g: powers of 1024).
local function size_bytes(v)
  local n, unit = tostring(v):match("^(%d+)([kKmMgG]?)$")
  if not n then error(("container spec: '%s' is not a size"):format(tostring(v)), 3) end
  local shift = ({ k = 10, m = 20, g = 30 })[unit:lower()] or 0
  return math.tointeger(tonumber(n)) << shift
end

-- Where the CLI's --read-only puts a writable tmpfs (podman 4.3's
-- --read-only-tmpfs, on by default), unless a mount is there already.
local READ_ONLY_TMPFS = { "/tmp", "/var/tmp", "/run" }

-- The create request's user, user namespace, id mappings and network
-- namespace (in G), as the CLI sets them for SPEC on this podman.
local function create_namespaces(pm, spec, g)
  local user = ("%d:%d"):format(M.UID, M.UID)
  -- as the CLI fills it in (util.ParseIDMapping): the host's ids, but for keep-id
  g.idmappings = { HostUIDMapping = true, HostGIDMapping = true }
  if spec.join then
    g.netns = { nsmode = "container", value = spec.join }
    if not pm.rootful then g.userns = { nsmode = "container", value = spec.join } end
    g.user = user
  else
    if pm.rootful then
      g.user = user
    else
      g.userns = { nsmode = "keep-id", value = ("uid=%d,gid=%d"):format(M.UID, M.UID) }
      g.idmappings = { HostUIDMapping = false, HostGIDMapping = false }
    end
    if spec.network == "none" then g.netns = { nsmode = "none" } end
    local path = spec.network:match("^ns:(.+)$")
    if path then g.netns = { nsmode = "path", value = path } end
  end
end

-- The create request's mounts, image volumes and resource limits (in G)
-- for SPEC: its tmpfs mounts and binds, and the CLI's read-only tmpfs
-- mounts where nothing is mounted already.
local function create_mounts(spec, g)
  local mounts, at = {}, {}
  local function tmpfs(dst, opts)
    mounts[#mounts + 1] = { destination = dst, type = "tmpfs", source = "tmpfs", options = opts }
    at[dst] = true
  end
  local l = spec.limits
  if l then
    tmpfs("/tmp", { "rw", "mode=1777", "size=" .. l.tmp })
    if l.home then tmpfs("/home/bench", { "rw", "mode=1777", "size=" .. l.home }) end
    local quota = math.tointeger(math.floor(l.cpus * 100000 + 0.5))
    g.resource_limits = { memory = { limit = size_bytes(l.memory) }, pids = { limit = l.pids },
                          cpu = { quota = quota, period = 100000 } }
  end
  for _, m in ipairs(spec.mounts or {}) do
    if m.image then
      g.image_volumes = g.image_volumes or {}
      g.image_volumes[#g.image_volumes + 1] = { Source = m.image, Destination = m[1], ReadWrite = false }
      at[m[1]] = true
    else
      mounts[#mounts + 1] = { destination = m[2], type = "bind", source = m[1], options = m.ro and { "ro" } or nil }
      at[m[2]] = true
    end
  end
  if M.HARDENING.read_only then
    for _, dst in ipairs(READ_ONLY_TMPFS) do
      if not at[dst] then tmpfs(dst, { "rw", "rprivate", "nosuid", "nodev", "tmpcopyup" }) end
    end
  end
  if #mounts > 0 then g.mounts = mounts end
end

--- pm:create_spec(spec) -> the body of the service's POST
--- /libpod/containers/create (podman 4.3's SpecGenerator) for the same
--- container spec run_argv turns into `podman run`: the same hardening
--- (M.HARDENING), limits, mounts, namespaces and labels, with what the
--- CLI fills in itself (the read-only tmpfs mounts, the runtime). A spec
--- test compares `podman inspect` of both.
function Podman:create_spec(spec)
  M.check_spec(spec)
  local g = { name = spec.name, image = spec.image, remove = spec.rm or nil, stdin = spec.stdin or nil,
              labels = {}, env = {}, oci_runtime = self.runtime, work_dir = spec.workdir,
              entrypoint = spec.entrypoint and { spec.entrypoint } or nil, command = spec.command }
  for _, kv in ipairs(spec.labels or {}) do g.labels[kv[1]] = kv[2] end
  for k, v in pairs(spec.env or {}) do g.env[k] = v end
  -- what the CLI's defaults set: no terminal, sd_notify handled by the container
  g.annotations, g.sdnotifyMode = { ["io.kubernetes.cri-o.TTY"] = "false" }, "container"
  local rl = {}
  local function rlimit(name, n) rl[#rl + 1] = { type = name, soft = n, hard = n } end
  if self.ulimits then
    rlimit("nofile", self.ulimits.nofile)
    rlimit("nproc", self.ulimits.nproc)
  end
  for _, k in ipairs(sorted_keys(spec.ulimits)) do rlimit(k, spec.ulimits[k]) end
  -- a list even when empty: the service reads a missing one as "no
  -- rlimits at all" (the service's own), the CLI sends an empty one
  g.r_limits = json.array(rl)
  create_namespaces(self, spec, g)
  if spec.log then
    -- the CLI reads --log-opt max-size in decimal units (64m: 64,000,000)
    g.log_configuration = { driver = "k8s-file", path = spec.log.dir .. "/" .. spec.log.name .. ".ctr.log",
                            size = spec.log.max ~= false and size_bytes(M.LOG_MAX) // (1 << 20) * 1000000 or nil }
    g.conmon_pid_file = spec.log.dir .. "/" .. spec.log.name .. ".conmon.pid"
  end
  local h = M.HARDENING
  g.cap_drop = { h.cap_drop }
  g.no_new_privileges = h.no_new_privileges
  g.seccomp_profile_path = self:seccomp()
  -- where the CLI records it (podman inspect's SecurityOpt)
  g.annotations["io.podman.annotations.seccomp"] = g.seccomp_profile_path
  g.read_only_filesystem = h.read_only
  g.timeout = spec.lifetime and math.ceil(spec.lifetime) or nil
  g.cap_add = spec.cap_add
  g.mask = spec.masks
  if spec.sysctls then
    g.sysctl = {}
    for _, kv in ipairs(spec.sysctls) do g.sysctl[kv[1]] = kv[2] end
  end
  create_mounts(spec, g)
  return g
end

--- pm:argv(argv) -> the full command line: program, global args, argv.
function Podman:argv(argv)
  local full = { self.program }
  for _, v in ipairs(self:args()) do full[#full + 1] = v end
  for _, v in ipairs(argv) do full[#full + 1] = v end
  return full
end

--- pm:podman(argv, [opts]) -> result | nil, err, result.
--- argv starts with the podman verb ("run", ...). opts as core.run's (argv
--- excluded); timeout defaults to pm.timeout. A non-zero exit, a signal, a
--- timeout or an interrupt is an error.
function Podman:podman(argv, opts)
  if type(argv) ~= "table" or type(argv[1]) ~= "string" then
    error("pm:podman: argv must be a list starting with the podman verb", 2)
  end
  local o = {}
  for k, v in pairs(opts or {}) do o[k] = v end
  o.argv = self:argv(argv)
  if o.timeout == nil then o.timeout = self.timeout end
  local done = trace.begin("cli", trace.podman(argv))
  local r, err = core.run(o)
  done { status = r and r.status }
  if not r then return nil, err end
  local msg = failure(argv[1], r)
  if msg then return nil, msg, r end
  return r
end

--- pm:version() -> "4.3.1" | nil, err (cached).
function Podman:version()
  if self._version then return self._version end
  local r, err = self:podman({ "version", "--format", "{{.Client.Version}}" }, { timeout = 30 })
  if not r then return nil, err end
  self._version = r.stdout:match("^%s*(.-)%s*$")
  return self._version
end

--- pm:image_exists(ref) -> true | false | nil, err.
function Podman:image_exists(ref)
  if self.api then
    -- the suite's service, where it answers: no podman process
    local status = self.api:request("GET", "/images/" .. M.path_segment(ref) .. "/exists")
    if status == 204 then return true end
    if status == 404 then return false end
  end
  local done = trace.begin("cli", "podman image exists " .. ref)
  local r, err = core.run { argv = self:argv { "image", "exists", ref }, timeout = 60 }
  done { status = r and r.status }
  if not r then return nil, err end
  if r.status == 0 then return true end
  if r.status == 1 then return false end
  return nil, failure("image exists", r)
end

--- pm:build(spec) -> true | nil, err. spec: tag, containerfile (path),
--- context (dir), build_args ({K = "v"}), secrets ({id = path}), labels
--- (list of "k=v"), timeout (seconds, default BUILD_TIMEOUT), log (a file
--- for podman's output; default: a temp file, kept and named in the error
--- when the build fails, removed when it succeeds).
function Podman:build(spec)
  -- --network host: RUN steps use the host's network as it is, so a build
  -- needs no network backend (a fresh Debian 12 has no iptables, and
  -- netavark cannot make the bridge a default build would use).
  local argv = { "build", "--pull=never", "--layers", "--network", "host",
                 "-f", spec.containerfile, "-t", spec.tag }
  for _, v in ipairs(self:ulimit_args()) do argv[#argv + 1] = v end
  local keys = {}
  for k in pairs(spec.build_args or {}) do keys[#keys + 1] = k end
  table.sort(keys)
  for _, k in ipairs(keys) do
    argv[#argv + 1] = "--build-arg"
    argv[#argv + 1] = k .. "=" .. spec.build_args[k]
  end
  keys = {}
  for k in pairs(spec.secrets or {}) do keys[#keys + 1] = k end
  table.sort(keys)
  for _, k in ipairs(keys) do
    argv[#argv + 1] = "--secret"
    argv[#argv + 1] = ("id=%s,src=%s"):format(k, spec.secrets[k])
  end
  for _, l in ipairs(spec.labels or { "leakbench=1" }) do
    argv[#argv + 1] = "--label"
    argv[#argv + 1] = l
  end
  argv[#argv + 1] = spec.context
  local log, logdir = spec.log, nil
  if not log then
    local err
    logdir, err = core.tmpdir("leakbench-build-")
    if not logdir then return nil, err end
    log = logdir .. "/build.log"
  end
  local done = trace.begin("cli", trace.podman(argv))
  local r, err = core.run { argv = self:argv(argv), timeout = spec.timeout or M.BUILD_TIMEOUT,
                           stdout = log, stderr = log }
  done { status = r and r.status }
  if not r then
    if logdir then core.rmtree(logdir) end
    return nil, err
  end
  if failure("build", r) == nil then
    if logdir then core.rmtree(logdir) end
    return true
  end
  r.stderr = core.read_file(log) or ""
  local hint = M.build_hint(r.stderr, spec.secrets and spec.secrets.ca)
  local cause = M.build_cause(r.stderr)
  return nil, ("%s (build log: %s)%s%s"):format(failure("build", r), log,
    cause and (": its last output:\n" .. cause) or "", hint)
end

-- What a failed build's log says about its cause, as a last line ("\n...")
-- to append to the message, or "". CA: the bundle the build was given as
-- secret "ca".
M.TLS_FAILURES = { "SELF_SIGNED_CERT_IN_CHAIN", "self-signed certificate", "self signed certificate",
                   "unable to get local issuer certificate", "UNABLE_TO_GET_ISSUER_CERT",
                   "certificate verify failed", "UNABLE_TO_VERIFY_LEAF_SIGNATURE" }
function M.build_hint(text, ca)
  if text:find("Temporary failure resolving", 1, true) or text:find("Could not resolve", 1, true) then
    return "\nThe build had no network: `leakbench doctor` says why."
  end
  for _, s in ipairs(M.TLS_FAILURES) do
    if text:find(s, 1, true) then
      return ("\nTLS failed: the server's certificate chain ends in a CA that the bundle the build "
        .. "trusts (%s) does not hold. If this network intercepts TLS, add its CA to this "
        .. "machine's trust store (Debian: copy it to /usr/local/share/ca-certificates/ and run "
        .. "update-ca-certificates), or set LEAKBENCH_CA_BUNDLE to a bundle that holds it.")
        :format(ca and (core.stat(ca) or {}).size ~= 0 and printable.line(ca, 200)
          or "none: this host has no CA bundle leakbench knows")
    end
  end
  return ""
end

-- The lines of a failing step's own output in a podman build log, as
-- podman 4 writes it: after the last "STEP n/m: ..." header, before the
-- final "Error: ..." line, blank lines and podman's own "WARN[..]" lines
-- left out; at most MAX (default 5) of the last ones, each made printable
-- on one line and indented. Returns nil when the step printed nothing
-- (or the log holds no step).
M.BUILD_CAUSE_LINES = 5
function M.build_cause(text, max)
  max = max or M.BUILD_CAUSE_LINES
  local lines, in_step = {}, false
  for line in (text or ""):gmatch("[^\n]*") do
    line = line:gsub("\r$", "")
    if line:match("^STEP %d+/%d+: ") or line:match("^%[%d+/%d+%] STEP %d+/%d+: ") then
      lines, in_step = {}, true
    elseif line:match("^Error: ") then
      break
    elseif in_step and line:match("%S") and not line:match("^WARN%[%d+%]")
        and not line:match("^%-%-> ") and not line:match("^COMMIT ") then
      lines[#lines + 1] = line
    end
  end
  if #lines == 0 then return nil end
  local out = {}
  for i = math.max(1, #lines - max + 1), #lines do
    out[#out + 1] = "  " .. printable.line(lines[i])
  end
  return table.concat(out, "\n")
end

--- pm:network_rm(name) -> true | nil, err. Removes containers using it;
--- a missing network is success. Runs to completion even after ^C.
function Podman:network_rm(name)
  local r, err, res = self:podman({ "network", "rm", "-f", "-t", "0", name },
                                  { timeout = 60, uninterruptible = true })
  if not r and res and res.stderr:match("network not found") then return true end
  if not r then return nil, err end
  return true
end

--- pm:rm(name) -> true | nil, err. Force-removes; a missing one is success.
function Podman:rm(name)
  local r, err = self:podman({ "rm", "-f", "-i", "-t", "0", name },
                             { timeout = 60, uninterruptible = true })
  if not r then return nil, err end
  return true
end

--- pm:use_service(svc). The listings (pm:containers, pm:images,
--- pm:networks, images.present) ask SVC, the suite's running service,
--- before the CLI: a request costs milliseconds, a CLI process 0.3 s.
--- Where the service does not answer, the CLI is asked.
function Podman:use_service(svc)
  self.api = svc
end

-- JSON list output of a podman command, or nil, err: through the service
-- (pm:use_service) when it answers, else the CLI's.
function Podman:_json(argv)
  local listed = self.api and self.api:list(argv)
  if listed then return listed end
  local r, err = self:podman(argv, { timeout = 60, uninterruptible = true })
  if not r then return nil, err end
  local ok, list = pcall(cjson.decode, r.stdout ~= "" and r.stdout or "[]")
  if not ok or type(list) ~= "table" then
    return nil, ("podman %s printed something that is not JSON"):format(argv[1])
  end
  return list
end

--- pm:containers(label) -> { {id=, name=, labels={}, state=}, ... } | nil, err.
function Podman:containers(label)
  local list, err = self:_json { "ps", "-a", "--filter", "label=" .. label, "--format", "json" }
  if not list then return nil, err end
  local out = {}
  for _, c in ipairs(list) do
    local names = type(c.Names) == "table" and c.Names or {}
    out[#out + 1] = { id = c.Id, name = names[1] or c.Id,
                      labels = type(c.Labels) == "table" and c.Labels or {},
                      state = c.State }
  end
  return out
end

--- pm:images(label) -> { {id=, names={...}, size=, created=}, ... } | nil, err.
--- An image with several tags is listed once (podman lists it per tag).
function Podman:images(label)
  local list, err = self:_json { "images", "--filter", "label=" .. label, "--format", "json" }
  if not list then return nil, err end
  local out, seen = {}, {}
  for _, im in ipairs(list) do
    if type(im.Id) == "string" and not seen[im.Id] then
      seen[im.Id] = true
      local names = {}
      for _, n in ipairs(type(im.Names) == "table" and im.Names or {}) do
        if type(n) == "string" then names[#names + 1] = n end
      end
      out[#out + 1] = { id = im.Id, names = names, size = tonumber(im.Size) or 0,
                        created = tonumber(im.Created) or 0 }
    end
  end
  return out
end

--- pm:networks(label) -> { {name=, labels={}}, ... } | nil, err.
function Podman:networks(label)
  local list, err = self:_json { "network", "ls", "--filter", "label=" .. label, "--format", "json" }
  if not list then return nil, err end
  local out = {}
  for _, n in ipairs(list) do
    out[#out + 1] = { name = n.name or n.Name, labels = type(n.labels) == "table" and n.labels or {} }
  end
  return out
end

--- pm:remove_by_label(label) -> { containers = {names}, networks = {names} } |
--- nil, err. Containers first (a network in use cannot go), those others
--- join after them, then networks.
--- Runs to completion even after ^C.
function Podman:remove_by_label(label)
  local removed = { containers = {}, networks = {} }
  local cs, err = self:containers(label)
  if not cs then return nil, err end
  -- A container another joins (a network sidecar) goes after it: in
  -- passes, each removing what it can, until one removes nothing.
  local left = cs
  while #left > 0 do
    local again, last_err = {}, nil
    for _, c in ipairs(left) do
      local ok, e = self:rm(c.id)
      if ok then
        removed.containers[#removed.containers + 1] = c.name
      else
        again[#again + 1], last_err = c, e
      end
    end
    if #again == #left then return nil, last_err end
    left = again
  end
  local ns
  ns, err = self:networks(label)
  if not ns then return nil, err end
  for _, n in ipairs(ns) do
    local ok, e = self:network_rm(n.name)
    if not ok then return nil, e end
    removed.networks[#removed.networks + 1] = n.name
  end
  return removed
end

--- pm:log_args(dir, name) -> flags that make a detached container write its
--- log to dir/name.ctr.log (podman's k8s-file format) and conmon's pid to
--- dir/name.conmon.pid, so that readiness and the log need no podman call
--- (M.wait_ready, M.log_text). The files outlive the container. A log is
--- capped at M.LOG_MAX (conmon then starts it over), so that a hostile
--- interceptor cannot fill the disk.
--- MAX false: no cap (Claude Code's output, whose start a cap would lose).
M.LOG_MAX = "64m"
function Podman:log_args(dir, name, max)
  local a = { "--log-driver", "k8s-file", "--log-opt", "path=" .. dir .. "/" .. name .. ".ctr.log" }
  if max ~= false then a[#a + 1], a[#a + 2] = "--log-opt", "max-size=" .. M.LOG_MAX end
  a[#a + 1], a[#a + 2] = "--conmon-pidfile", dir .. "/" .. name .. ".conmon.pid"
  return a
end

--- M.k8s_log_text(raw) -> the text a container printed, from a k8s-file
--- log: every line is "<time> <stdout|stderr> <F|P> <text>", and P (a
--- partial line) continues on the next one. A line of another shape is
--- kept as it is.
function M.k8s_log_text(raw)
  local out = {}
  for line in raw:gmatch("([^\n]*)\n") do
    local tag, text = line:match("^%S+ std%a+ ([FP]) ?(.*)$")
    if not tag then
      out[#out + 1] = line .. "\n"
    else
      out[#out + 1] = tag == "F" and text .. "\n" or text
    end
  end
  return table.concat(out)
end

--- M.k8s_log_streams(raw) -> stdout, stderr: what the container wrote to
--- each, from a k8s-file log (M.k8s_log_text, stream by stream). A line
--- of another shape goes to stderr, as it is.
function M.k8s_log_streams(raw)
  local out = { stdout = {}, stderr = {} }
  for line in raw:gmatch("([^\n]*)\n") do
    local stream, tag, text = line:match("^%S+ (std%a+) ([FP]) ?(.*)$")
    local t = out[stream or "stderr"]
    if not t then
      t, tag, text = out.stderr, nil, nil
    end
    if not tag then
      t[#t + 1] = line .. "\n"
    else
      t[#t + 1] = tag == "F" and text .. "\n" or text
    end
  end
  return table.concat(out.stdout), table.concat(out.stderr)
end

--- M.conmon_pid(dir, name) -> the pid the conmon of container log NAME
--- wrote to DIR/NAME.conmon.pid (the log spec's conmon_pid_file and the
--- CLI's --conmon-pidfile), or nil when there is none yet.
function M.conmon_pid(dir, name)
  return math.tointeger(tonumber((core.read_file(dir .. "/" .. name .. ".conmon.pid") or ""):match("%d+") or ""))
end

--- M.log_text(dir, name) -> what the container started with log_args(dir,
--- name) has printed so far ("" before its first line).
function M.log_text(dir, name)
  return M.k8s_log_text(core.read_file(dir .. "/" .. name .. ".ctr.log") or "")
end

--- M.wait_ready(dir, name, line, timeout) -> true, text | false, text,
--- why. Polls the log file of a container started with log_args(dir, name)
--- until `line` (plain text) appears; gives up when its conmon has ended
--- (the container exited), the timeout passes, or an interrupt arrives.
--- why: "exited", "timeout" or "interrupted".
function M.wait_ready(dir, name, line, timeout)
  local done = trace.begin("ready", name .. ": " .. line)
  local ok, text, why = M.await_line(dir, name, line, timeout)
  done { ok = ok, why = why }
  return ok, text, why
end

-- wait_ready's loop, untraced.
function M.await_line(dir, name, line, timeout)
  local deadline = core.now() + (timeout or 20)
  local pid
  while true do
    local text = M.log_text(dir, name)
    if text:find(line, 1, true) then return true, text end
    pid = pid or M.conmon_pid(dir, name)
    if pid and not M.running(pid) then
      text = M.log_text(dir, name)
      if text:find(line, 1, true) then return true, text end
      return false, text, "exited"
    end
    if core.interrupted() then return false, text, "interrupted" end
    if core.now() >= deadline then return false, text, "timeout" end
    core.sleep(0.01)
  end
end

-- Whether PID is a live leakbench process: a zombie is not (a killed
-- process stays one until PID 1 reaps it, seconds later on some
-- machines), and a recycled pid is told apart by its command name.
local function live_leakbench(pid)
  pid = math.tointeger(tonumber(pid or ""))
  if not pid or not M.running(pid) then return false end
  local comm = core.read_file(("/proc/%d/comm"):format(pid))
  return comm == nil or comm:find("leakbench", 1, true) ~= nil
end

--- M.live_owner(labels) -> true when what carries LABELS has a live owner
--- (so it is no leftover): the leakbench process named by leakbench.pid,
--- or the runner named by leakbench.runner (a finished run's carrier
--- containers wait for their runner to remove them).
function M.live_owner(labels)
  labels = labels or {}
  return live_leakbench(labels["leakbench.pid"]) or live_leakbench(labels["leakbench.runner"])
end

--- M.clean(pm, [opts]) -> removed | nil, err. Removes containers, then
--- networks, labelled leakbench=1 whose owner (leakbench.pid) is not a live
--- leakbench process. opts.out: a function(line) for progress (default: none).
--- opts.owned: only what names its owner (a leakbench.pid label; what
--- someone labelled by hand is left alone).
function M.clean(pm, opts)
  opts = opts or {}
  local say = opts.out or function() end
  local removed = { containers = {}, networks = {}, kept = 0 }
  local function keep(labels)
    return M.live_owner(labels) or (opts.owned and not labels["leakbench.pid"])
  end
  local cs, err = pm:containers("leakbench=1")
  if not cs then return nil, err end
  local left = {}
  for _, c in ipairs(cs) do
    if keep(c.labels) then removed.kept = removed.kept + 1 else left[#left + 1] = c end
  end
  -- A container whose netns others joined (a run's net container) cannot
  -- go before them: what podman refused is tried again after the rest.
  for _ = 1, 3 do
    local refused = {}
    for _, c in ipairs(left) do
      local ok, e = pm:rm(c.id)
      if ok then
        removed.containers[#removed.containers + 1] = c.name
        say(("removed container %s (run %s)"):format(c.name, c.labels["leakbench.run"] or "?"))
      else
        refused[#refused + 1], err = c, e
      end
    end
    left = refused
    if #left == 0 then break end
  end
  if #left > 0 then return nil, err end
  local ns
  ns, err = pm:networks("leakbench=1")
  if not ns then return nil, err end
  for _, n in ipairs(ns) do
    if keep(n.labels) then
      removed.kept = removed.kept + 1
    else
      local ok, e = pm:network_rm(n.name)
      if not ok then return nil, e end
      removed.networks[#removed.networks + 1] = n.name
      say(("removed network %s (run %s)"):format(n.name, n.labels["leakbench.run"] or "?"))
    end
  end
  return removed
end

-- Cleanup off a run's critical path: a run that ended well, started by
-- the runner with DEFER_ENV=1, leaves its carrier containers (stopped by
-- nothing: their work is done) to the runner, named in DIR/DEFERRED_RM
-- in waves (a container another joins goes in a wave after it); the
-- runner removes them while the next run starts (runner.lua), and
-- before the suite ends.
M.DEFER_ENV = "LEAKBENCH_DEFER_RM"
M.DEFERRED_RM = "containers-to-remove.txt"
local WAVE_END = "-"

--- M.defer_rm(dir, waves, [ended]) -> true | nil, err: writes the list:
--- a name a line, "<name> ended" for one in the set ENDED (a container
--- that has ended already: svc:rm_waves sends it no SIGKILL), a line "-"
--- after each wave.
function M.defer_rm(dir, waves, ended)
  local lines = {}
  for _, wave in ipairs(waves) do
    for _, n in ipairs(wave) do lines[#lines + 1] = ended and ended[n] and n .. " ended" or n end
    lines[#lines + 1] = WAVE_END
  end
  return core.write_file(dir .. "/" .. M.DEFERRED_RM, table.concat(lines, "\n") .. "\n", 384)
end

--- M.take_deferred(dir, run_id) -> waves, ended: the waves DIR/DEFERRED_RM
--- lists (a list of lists of names), each name a container of run RUN_ID
--- (named lb-<its first 12 characters>-...; any other line is dropped,
--- and so is a wave left empty), and the set of those said to have ended;
--- the file removed. {}, {} when there is none.
function M.take_deferred(dir, run_id)
  local path = dir .. "/" .. M.DEFERRED_RM
  local text = core.read_file(path)
  if not text then return {}, {} end
  os.remove(path)
  local prefix, waves, wave, ended = "lb-" .. run_id:sub(1, 12) .. "-", {}, {}, {}
  for line in (text .. "\n" .. WAVE_END .. "\n"):gmatch("[^\n]+") do
    local name, gone = line:match("^([%w%-]+)(.*)$")
    if line == WAVE_END then
      if #wave > 0 then waves[#waves + 1] = wave end
      wave = {}
    elseif name and (gone == "" or gone == " ended") and name:sub(1, #prefix) == prefix then
      wave[#wave + 1] = name
      if gone ~= "" then ended[name] = true end
    end
  end
  return waves, ended
end

--- M.merge_waves(list) -> the waves of LIST (a list of M.take_deferred's
--- answers) as one: every first wave, then every second, ...
function M.merge_waves(list)
  local out = {}
  for _, waves in ipairs(list) do
    for i, wave in ipairs(waves) do
      out[i] = out[i] or {}
      table.move(wave, 1, #wave, #out[i] + 1, out[i])
    end
  end
  return out
end

-- One podman service for a suite (`podman system service`), and its REST
-- client: the libpod API of podman 4.3 over a Unix socket, through
-- core.uhttp (src/uhttp.c). Every podman CLI call is a fresh Go process that
-- costs about 0.25 CPU-s before it does anything; a request to the
-- service costs a few milliseconds. The runner starts it for the suite's
-- life (M.service_start) and hands its socket to each run's process in
-- LEAKBENCH_PODMAN_SOCKET (M.SOCKET_ENV); a run then creates its detached
-- containers with pm:create_spec's body and removes them through it.
M.SOCKET_ENV = "LEAKBENCH_PODMAN_SOCKET"
M.API = "/v4.3.1/libpod"
M.SERVICE_START_TIMEOUT = 20
-- sun_path holds 108 bytes, the NUL included
M.SOCKET_PATH_MAX = 107

local Service = {}
Service.__index = Service

--- M.service_start(pm, dir) -> svc | nil, err. Starts `podman system
--- service --time=0 unix://DIR/podman.sock` (its output in
--- DIR/podman-service.log) and waits until it answers /_ping. The caller
--- stops it (svc:stop(); also its __close and __gc).
function M.service_start(pm, dir)
  local svc, err = M.service_spawn(pm, dir)
  if not svc then return nil, err end
  return svc:await()
end

--- M.conmon_dir(dir) -> a folder (0700) that holds lb-conmon,
--- a program of its own that this binary carries (src/conmon/main.c:
--- libc only, so that its exec costs about what conmon's does), which
--- runs conmon without podman's exit command (src/conmon.h) | nil where
--- there is no conmon for it to run, or LEAKBENCH_PODMAN_CLEANUP=1 asks
--- for podman's own. conmon runs that
--- command when a container's process ends: `podman container cleanup`,
--- a podman process of its own (about 0.25 CPU-s, every container of
--- every run) that unmounts the container and tears down its network,
--- which the removal that follows does anyway: every container the
--- service makes is removed through it (svc:rm_waves, the sweep).
--- The folder is made in M.conmon_base() when it is this user's alone,
--- named by this process (M.CONMON_PREFIX .. pid .. "-"), so that the
--- folder of a suite killed outright is swept (clean.sweep_conmon);
--- else in DIR.
M.CONMON_PREFIX = "conmon-"

--- M.conmon_base() -> /var/tmp/leakbench-UID (sandbox.hide_base), made
--- 0700, when it is a folder of this user's that no one else may enter
--- | nil.
function M.conmon_base()
  local base = ("/var/tmp/leakbench-%d"):format(core.getuid())
  core.mkdir_p(base, 448)
  local st = core.stat(base)
  if st and st.type == "dir" and st.uid == core.getuid() and st.mode & 63 == 0 then return base end
  return nil
end

function M.conmon_dir(dir)
  if os.getenv("LEAKBENCH_PODMAN_CLEANUP") == "1" or not core.conmon_real() then return nil end
  local base = M.conmon_base()
  local d = base and core.tmpdir(("%s%d-"):format(M.CONMON_PREFIX, core.getpid()), base)
    or core.tmpdir("lb-conmon-", dir)
  if not d then return nil end
  local prog = d .. "/lb-conmon"
  local r = core.write_file(prog, core.conmon_helper(), tonumber("700", 8), true)
    and core.run { argv = { prog, "--version" }, timeout = 10 }
  -- it runs there, and runs conmon (a noexec mount would stop every
  -- container): else podman's own conmon, as without it
  if not (r and r.status == 0) then
    core.rmtree(d)
    return nil
  end
  return d
end

--- M.service_spawn(pm, dir) -> svc | nil, err: service_start's process,
--- started, not awaited: svc:await() -> svc | nil, err waits until it
--- answers /_ping (within M.SERVICE_START_TIMEOUT of its start), and
--- stops it when it does not. The caller stops it (svc:stop()).
function M.service_spawn(pm, dir)
  local sock = dir .. "/podman.sock"
  if #sock > M.SOCKET_PATH_MAX then
    return nil, ("cannot start the podman service: the socket path '%s' is longer than %d bytes")
      :format(printable.line(sock, 200), M.SOCKET_PATH_MAX)
  end
  os.remove(sock)
  -- It must not outlive us when we are killed (SIGKILL ends no <close>):
  -- where util-linux's setpriv is, it runs with SIGTERM as its parent-death
  -- signal (kept across its exec of podman).
  local conmon_dir = M.conmon_dir(dir)
  local argv = pm:argv(conmon_dir
    and { "--conmon", conmon_dir .. "/lb-conmon", "system", "service", "--time=0", "unix://" .. sock }
    or { "system", "service", "--time=0", "unix://" .. sock })
  local setpriv = find_program("setpriv")
  if setpriv then argv = table.move(argv, 1, #argv, 4, { setpriv, "--pdeathsig", "TERM" }) end
  local h, err = core.start { argv = argv,
    stdout = dir .. "/podman-service.log", stderr = dir .. "/podman-service.log" }
  if not h then
    if conmon_dir then core.rmtree(conmon_dir) end
    return nil, "cannot start the podman service: " .. err
  end
  return setmetatable({ sock = sock, h = h, dir = dir, conmon_dir = conmon_dir,
    deadline = core.now() + M.SERVICE_START_TIMEOUT }, Service)
end

function Service:await()
  local sock, h, dir, deadline = self.sock, self.h, self.dir, self.deadline
  local svc = self
  local done = trace.begin("ready", "podman system service: /_ping")
  while true do
    if core.stat(sock) then
      local status = core.uhttp(sock, "GET", M.API .. "/_ping", nil, 5)
      if status == 200 then
        done { ok = true }
        return svc
      end
    end
    local why
    if h:done() then
      why = "it exited: " .. ((core.read_file(dir .. "/podman-service.log") or ""):match("[^\n]+") or "no message")
    elseif core.interrupted() then
      why = "interrupted"
    elseif core.now() > deadline then
      why = ("it did not answer within %d s"):format(M.SERVICE_START_TIMEOUT)
    end
    if why then
      done { ok = false, why = why }
      svc:stop()
      return nil, "cannot start the podman service: " .. why
    end
    core.sleep(0.02)
  end
end

--- svc:stop(). Ends the service (SIGTERM, then SIGKILL) and removes its
--- socket. Idempotent; never raises.
function Service:stop()
  local h = self.h
  if not h then return end   -- stopped, or a client (M.client): not ours to stop
  self.h = nil
  local done = trace.begin("phase", "service stop")
  h:kill("SIGTERM")
  if not h:wait(10) then
    h:kill("SIGKILL")
    h:wait(5)
  end
  h:close()
  done()
  if self.conmon_dir then core.rmtree(self.conmon_dir) end
  os.remove(self.sock)
  os.remove(self:create_lock_path())
  -- its log stays only when it says something
  local log = self.dir .. "/podman-service.log"
  local st = core.stat(log)
  if st and st.size == 0 then os.remove(log) end
end
Service.__close = Service.stop
Service.__gc = Service.stop

--- M.client(sock) -> a client of the service listening on SOCK (no
--- process of its own: what a run uses).
function M.client(sock)
  return setmetatable({ sock = sock }, Service)
end

--- svc:request(method, path, [body]) -> status, decoded body | nil, err.
--- PATH under M.API; BODY a table (sent as JSON).
-- status, the decoded body (the text where it is no JSON) | nil, err.
local function decoded(status, text)
  if not status then return nil, text end
  local ok, doc = pcall(cjson.decode, text ~= "" and text or "null")
  return status, ok and doc or text
end

function Service:request(method, path, body)
  local done = trace.begin("api", method .. " " .. path)
  local status, text = core.uhttp(self.sock, method, M.API .. path, body and json.encode(body) or nil,
    M.DEFAULT_TIMEOUT)
  done { status = status }
  return decoded(status, text)
end

-- A request in flight (svc:request_start).
local Pending = {}
Pending.__index = Pending

--- svc:request_start(method, path, [body]) -> p: svc:request's request,
--- sent from a thread of its own (core.uhttp_start), so that several are
--- in flight together. p:wait() -> what svc:request returns, once;
--- p:done() -> whether it has ended. A request that could not start
--- waits for nothing and returns nil, err.
function Service:request_start(method, path, body)
  local done = trace.begin("api", method .. " " .. path)
  local job, err = core.uhttp_start(self.sock, method, M.API .. path, body and json.encode(body) or nil,
    M.DEFAULT_TIMEOUT)
  return setmetatable({ job = job, err = err, traced = done }, Pending)
end

function Pending:done()
  return not self.job or self.job:done()
end

function Pending:wait()
  local status, text = nil, self.err
  if self.job then status, text = self.job:wait() end
  self.job = nil
  -- the span ends when its end is seen
  self.traced { status = status }
  return decoded(status, text)
end

--- svc:all(requests) -> { {status, doc | nil, err}, ... }: REQUESTS (each
--- { method, path, [body] }) in flight together, each awaited.
function Service:all(requests)
  local pending, out = {}, {}
  for i, r in ipairs(requests) do pending[i] = self:request_start(r[1], r[2], r[3]) end
  for i, p in ipairs(pending) do out[i] = table.pack(p:wait()) end
  return out
end

--- M.path_segment(text) -> TEXT percent-encoded (RFC 3986's unreserved
--- kept), for a query string's value or one segment of a path.
function M.path_segment(text)
  return (text:gsub("[^%w%-%._~]", function(c) return ("%%%02X"):format(c:byte()) end))
end
local query_value = M.path_segment

--- svc:get_list(path, filters) -> the JSON list of GET PATH with podman's
--- FILTERS ({ name = { values } }) | nil when the service gives none.
function Service:get_list(path, filters)
  local sep = path:find("?", 1, true) and "&" or "?"
  local status, doc = self:request("GET", path .. sep .. "filters=" .. query_value(json.encode(filters)))
  if status == 200 and type(doc) == "table" then return doc end
  return nil
end

-- The CLI's listings that Podman:_json asks, as the service's requests:
-- the same lists (libpod's ListContainer, Network and ImageSummary).
-- LABEL stands for "label=VALUE".
local LISTINGS = {
  { { "ps", "-a", "--filter", "LABEL", "--format", "json" }, "/containers/json?all=true" },
  { { "network", "ls", "--filter", "LABEL", "--format", "json" }, "/networks/json" },
  { { "images", "--filter", "LABEL", "--format", "json" }, "/images/json" },
}

--- svc:list(argv) -> the list the podman CLI's ARGV prints (a listing of
--- LISTINGS, by one label) | nil (another command, or no answer).
function Service:list(argv)
  for _, l in ipairs(LISTINGS) do
    local shape, label = l[1], nil
    local same = #argv == #shape
    for i = 1, #shape do
      if shape[i] == "LABEL" then
        label = same and type(argv[i]) == "string" and argv[i]:match("^label=(.+)$") or nil
        same = label ~= nil
      elseif argv[i] ~= shape[i] then
        same = false
      end
    end
    if same then return self:get_list(l[2], { label = { label } }) end
  end
  return nil
end

-- The message of a failed request: podman's own ("cause", "message").
local function api_failure(what, name, status, doc)
  local msg = type(doc) == "table" and (doc.message or doc.cause) or tostring(doc)
  return ("podman service: cannot %s container '%s' (HTTP %d): %s"):format(what, name, status,
    printable.line(tostring(msg), 400))
end

-- Rootless, podman 4.3's service reads the user's subordinate ids for each
-- container it creates (keep-id: rootless.GetConfiguredMappings) through
-- libsubid, which is not thread-safe: two creates at once, from one run
-- or from two, can crash the service (SIGSEGV in subid_get_uid_ranges;
-- the clients see an empty reply). So a rootless create holds a lock
-- shared by every process of the suite, a file beside the socket.
function Service:create_lock_path()
  return self.sock:gsub("%.sock$", "") .. "-create.lock"
end

--- svc:create(pm, spec) -> status, doc | nil, err: the create request of
--- SPEC (pm:create_spec); rootless, one at a time in the whole suite. No
--- spec.rm: a container the service makes is removed by leakbench (its
--- conmon may run no exit command: M.conmon_dir).
function Service:create(pm, spec)
  if spec.rm then error("svc:create: spec.rm: leakbench removes the service's containers itself", 2) end
  local body = pm:create_spec(spec)
  if pm.rootful then return self:request("POST", "/containers/create", body) end
  local waited = trace.begin("lock", "podman-create.lock")
  local lock <close>, err = core.lock(self:create_lock_path())
  waited { ok = lock ~= nil }
  if not lock then return nil, "podman service: " .. err end
  return self:request("POST", "/containers/create", body)
end

--- svc:run(pm, spec) -> true | nil, err. Creates the container of SPEC
--- (svc:create) and starts it, detached: what `podman run -d` does.
function Service:run(pm, spec)
  local status, doc = self:create(pm, spec)
  if not status then return nil, doc end
  if status ~= 201 then return nil, api_failure("create", spec.name, status, doc) end
  status, doc = self:request("POST", "/containers/" .. spec.name .. "/start")
  if not status then return nil, doc end
  if status ~= 204 and status ~= 304 then return nil, api_failure("start", spec.name, status, doc) end
  return true
end

-- A container started through the service, awaited as core.start's
-- handles are (Sandbox:claude): its conmon ending is the container's.
local Handle = {}
Handle.__index = Handle
M.HANDLE_POLL = 0.01   -- seconds between looks at the conmon

-- The first failure of a wave of svc:all's answers to WHAT (create,
-- start) the containers of SPECS, nil when every status is in OK. An
-- answer missing (a request never sent: what it waited for failed) is
-- passed over. NAMED: SPECS is a list of names.
local function wave_failure(answers, what, specs, ok, named)
  for i = 1, #specs do
    local a = answers[i]
    if a and not a[1] then return a[2] end
    if a and not ok[a[1]] then return api_failure(what, named and specs[i] or specs[i].name, a[1], a[2]) end
  end
end

-- For each of SPECS, the index of the one it joins (spec.join), when
-- that one is in SPECS too.
local function joined_in(specs)
  local at, dep = {}, {}
  for i, s in ipairs(specs) do at[s.name] = i end
  for i, s in ipairs(specs) do dep[i] = s.join and at[s.join] end
  return dep
end

-- REQ(spec) (a { method, path, [body] }) for each of SPECS, in flight
-- together, except that one which joins another of them is sent once
-- that one's has been answered with a status in OK (a netns is joined
-- when its container exists, and entered when it runs), and not at all
-- otherwise. The answers, as svc:all's, in SPECS' order (nil: not sent).
-- DURING, when given, is called once the first requests are in flight,
-- before any is awaited; what it raises is raised again once every
-- request sent has been answered.
function Service:all_joined(specs, req, ok, during)
  local dep, pending, out = joined_in(specs), {}, {}
  local function send(i) pending[i] = self:request_start(table.unpack(req(specs[i]), 1, 3)) end
  for i in ipairs(specs) do if not dep[i] then send(i) end end
  local fine, raised = true, nil
  if during then fine, raised = pcall(during) end
  for i in ipairs(specs) do
    if not dep[i] then
      out[i] = table.pack(pending[i]:wait())
      for j, d in pairs(dep) do
        if d == i and ok[out[i][1]] then send(j) end
      end
    end
  end
  for j in pairs(dep) do if pending[j] then out[j] = table.pack(pending[j]:wait()) end end
  if not fine then error(raised, 0) end
  return out
end

local CREATED, STARTED = { [201] = true }, { [204] = true, [304] = true }

--- svc:run_all(pm, specs) -> true | nil, err. svc:run for each of SPECS,
--- side by side: every container created together (a create request
--- each, all in flight at once; rootless, one after another, as
--- svc:create says), then, when all are, started together; a container
--- that joins another of SPECS (spec.join) is created, and started, once
--- that one is (svc:all_joined). Every request is awaited before it
--- returns, whatever failed; none is started when a create failed.
--- DURING, when given, runs while the starts are in flight (and not when
--- a create failed); what it raises is raised once they are answered.
function Service:run_all(pm, specs, during)
  local err
  if pm.rootful then
    err = wave_failure(self:all_joined(specs, function(spec)
      return { "POST", "/containers/create", pm:create_spec(spec) }
    end, CREATED), "create", specs, CREATED)
  else
    -- rootless, one at a time (svc:create's lock), a joined one first
    local dep, order = joined_in(specs), {}
    for i, spec in ipairs(specs) do if not dep[i] then order[#order + 1] = spec end end
    for i, spec in ipairs(specs) do if dep[i] then order[#order + 1] = spec end end
    for _, spec in ipairs(order) do
      local status, doc = self:create(pm, spec)
      if not status then return nil, doc end
      if status ~= 201 then return nil, api_failure("create", spec.name, status, doc) end
    end
  end
  if err then return nil, err end
  err = wave_failure(self:all_joined(specs, function(spec)
    return { "POST", "/containers/" .. spec.name .. "/start" }
  end, STARTED, during), "start", specs, STARTED)
  if err then return nil, err end
  return true
end

--- svc:handle(spec) -> h | nil, err: a handle on the container of SPEC,
--- created and started already (svc:run, svc:run_all), which writes a
--- k8s-file log (spec.log: its output is there, M.k8s_log_streams) and is
--- not removed when it ends (no spec.rm: its exit code is asked for
--- after); removed when its conmon wrote no pid. h:done(),
--- h:wait([timeout]) -> { status =, interrupted = } | nil (still running),
--- h:kill(signal), h:close(), as core.start's. An interrupt (SIGINT,
--- SIGTERM) sends the container SIGTERM, then SIGKILL 5 s later.
function Service:handle(spec)
  if not spec.log or spec.rm then error("svc:handle: a spec with a log and without rm", 2) end
  local pidfile = spec.log.dir .. "/" .. spec.log.name .. ".conmon.pid"
  local pid = M.conmon_pid(spec.log.dir, spec.log.name)
  if not pid then
    self:rm(spec.name)
    return nil, ("podman service: container '%s' started, but its conmon wrote no pid to %s")
      :format(spec.name, pidfile)
  end
  return setmetatable({ svc = self, name = spec.name, pid = pid }, Handle)
end

-- Whether process PID runs: a zombie does not (an ended conmon stays one
-- until PID 1 reaps it, seconds later on some machines).
local function running(pid)
  local stat = core.read_file("/proc/" .. pid .. "/stat")
  -- no /proc here: the process table only
  if not stat then return core.stat("/proc/self") == nil and core.pid_alive(pid) end
  local state = stat:match(".*%)%s+(%a)")
  return state ~= nil and state ~= "Z" and state ~= "X"
end
M.running = running

function Handle:done()
  return self.result ~= nil or not running(self.pid)
end

function Handle:kill(signal)
  self.svc:request("POST", "/containers/" .. self.name .. "/kill?signal=" .. signal)
end

function Handle:wait(timeout)
  if self.result then return self.result end
  local deadline = timeout and core.now() + timeout
  while running(self.pid) do
    local now = core.now()
    if core.interrupted() and not self.interrupted then
      self.interrupted, self.kill_at = true, now + 5
      self:kill("SIGTERM")
    end
    if self.kill_at and now >= self.kill_at then
      self.kill_at = nil
      self:kill("SIGKILL")
    end
    if deadline and now >= deadline then return nil end
    core.sleep(deadline and math.max(0, math.min(M.HANDLE_POLL, deadline - now)) or M.HANDLE_POLL)
  end
  -- conmon has written the exit code: the service reads it when it looks
  -- at the container (inspect syncs its state from conmon's exit file).
  -- Not `wait`: it waits for the state podman's cleanup gives, which a
  -- conmon without the exit command never runs (M.conmon_dir), 20 s.
  local status, doc = self.svc:request("GET", "/containers/" .. self.name .. "/json")
  local st = status == 200 and type(doc) == "table" and type(doc.State) == "table" and doc.State or nil
  local code = st and (st.Status == "exited" or st.Status == "stopped")
    and math.tointeger(tonumber(st.ExitCode)) or nil
  self.result = { status = code, interrupted = self.interrupted }
  if not code then
    self.result.error = st and ("podman service: container '%s' is %s after its conmon ended")
        :format(self.name, printable.line(tostring(st.Status), 40))
      or status and api_failure("inspect", self.name, status, doc)
      or ("podman service: cannot inspect container '%s': %s"):format(self.name, tostring(doc))
  end
  return self.result
end

function Handle:close() end

local RM_QUERY = "?force=true&timeout=0"
local RM_OK = { [200] = true, [204] = true, [404] = true }

--- svc:rm(name) -> true | nil, err. Force-removes, at once; a missing
--- container is success.
function Service:rm(name)
  local status, doc = self:request("DELETE", "/containers/" .. name .. RM_QUERY)
  if not status then return nil, doc end
  if RM_OK[status] then return true end
  return nil, api_failure("remove", name, status, doc)
end

-- Removals in flight (svc:rm_start).
local Removal = {}
Removal.__index = Removal

--- svc:rm_start(names) -> removal: svc:rm of every one of NAMES
--- (containers that have ended: none is sent SIGKILL first), all in flight
--- together, none awaited; removal:wait() -> true | nil, err (the first
--- failure), once.
function Service:rm_start(names)
  local pending = {}
  for i, name in ipairs(names) do pending[i] = self:request_start("DELETE", "/containers/" .. name .. RM_QUERY) end
  return setmetatable({ pending = pending, names = names }, Removal)
end

function Removal:wait()
  local answers = {}
  for i, p in ipairs(self.pending) do answers[i] = table.pack(p:wait()) end
  self.pending = {}
  local err = wave_failure(answers, "remove", self.names, RM_OK, true)
  if err then return nil, err end
  return true
end

--- svc:rm_waves(waves) -> true | nil, err (the first failure). svc:rm of
--- every name of WAVES (a list of lists of names), a wave's removals in
--- flight together, each wave once the one before has ended (a container
--- that others join goes in a wave after theirs: podman refuses it while
--- they are there). Every wave is tried, whatever failed before. First,
--- every one of them is sent SIGKILL, all in flight together: podman 4.3
--- removes a running container by killing it and then polling its state
--- (about 0.1 s here), wave after wave; one that has ended already is
--- removed at once (issue 26: a run's end, 0.24 s -> 0.07 s). What the
--- kills answer (409 or 500 for one that is not running) is not read:
--- the removals that follow say what failed. A name in the set ENDED (a
--- container known to have ended) is not sent one: podman would ask runc
--- about it for nothing (0.02 to 0.04 CPU-s here).
function Service:rm_waves(waves, ended)
  local err
  local kills = {}
  for _, wave in ipairs(waves) do
    for _, name in ipairs(wave) do
      if not (ended and ended[name]) then
        kills[#kills + 1] = { "POST", "/containers/" .. name .. "/kill?signal=KILL" }
      end
    end
  end
  self:all(kills)
  for _, wave in ipairs(waves) do
    local reqs = {}
    for i, name in ipairs(wave) do reqs[i] = { "DELETE", "/containers/" .. name .. RM_QUERY } end
    err = err or wave_failure(self:all(reqs), "remove", wave, RM_OK, true)
  end
  if err then return nil, err end
  return true
end

return M
