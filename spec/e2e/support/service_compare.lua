-- Run by `leakbench lua` from spec/e2e/service_spec.lua: one run's
-- topology (a staged Sandbox's, the same table a run starts), each
-- container created twice, once by the podman CLI (pm:run_argv, as
-- `create`) and once through a podman service (pm:create_spec), then
-- `podman inspect` of both reduced to what isolates it. Prints one JSON
-- document: { containers = { role = { cli = facts, api = facts } } }.
-- Removes what it created. arg[1]: a scratch folder; arg[2], arg[3]: the
-- claude and proxy images.
local core = require "leakbench.core"
local podman = require "leakbench.podman"
local sandbox = require "leakbench.sandbox"
local lb = require "leakbench"
local cjson = require "cjson"

local dir, claude, proxy = arg[1], arg[2], arg[3]
local pm = podman.new()
local svc = assert(podman.service_start(pm, dir))
local scenario = { name = "compare", prompt = "hi", files = {}, home = {}, env = {}, settings = {},
                   secrets = {}, setup = {}, model = lb.script { lb.say("ok") } }
local sb = sandbox.new { scenario = scenario, dir = dir .. "/run", pm = pm, run_id = core.uuid(),
                         images = { proxy = proxy, claude = claude }, model = "m", timeout = 60 }
assert(core.mkdir_p(dir .. "/run", 493))
-- the claude container as a run through the service creates it
sb.api_claude = true
sb:stage()
-- what the trap writes when it starts (the claude container mounts it)
assert(core.write_file(sb.cadir .. "/bundle.pem", "", 420))
local topo = sb:topology()

local made = {}
local function copy(spec, suffix, names)
  local s = {}
  for k, v in pairs(spec) do s[k] = v end
  s.name = spec.name .. suffix
  if s.join then s.join = names[s.join] end
  if s.log then s.log = { dir = s.log.dir, name = s.log.name .. suffix, max = s.log.max } end
  return s
end
local names = { cli = {}, api = {} }
local function main()
for _, spec in ipairs(topo) do
  names.cli[spec.name], names.api[spec.name] = spec.name .. "-cli", spec.name .. "-api"
end
for _, spec in ipairs(topo) do
  local c = copy(spec, "-cli", names.cli)
  local argv = pm:run_argv(c)
  argv[1] = "create"
  if argv[2] == "-d" then table.remove(argv, 2) end
  made[#made + 1] = c.name
  assert(pm:podman(argv))
  local a = copy(spec, "-api", names.api)
  made[#made + 1] = a.name
  local status, doc = svc:request("POST", "/containers/create", pm:create_spec(a))
  assert(status == 201, cjson.encode(doc))
end

end
local ok, err = pcall(main)
if not ok then
  for i = #made, 1, -1 do pm:rm(made[i]) end
  svc:stop()
  error(err, 0)
end

-- What isolates a container, from its inspect, with the names and ids of
-- the other containers replaced by their role.
local ids = {}
local function facts(name, role_of)
  local r = assert(pm:podman { "inspect", name })
  local c = cjson.decode(r.stdout)[1]
  local hc, cfg = c.HostConfig, c.Config
  local function ns(v)
    local id = tostring(v):match("^container:(%x+)$")
    return id and ("container:" .. (role_of[ids[id]] or id)) or v
  end
  local mounts = {}
  for _, m in ipairs(c.Mounts or {}) do
    mounts[#mounts + 1] = { type = m.Type, source = m.Source, destination = m.Destination, rw = m.RW,
                            options = m.Options or cjson.empty_array, name = m.Name }
  end
  table.sort(mounts, function(x, y) return x.destination < y.destination end)
  local labels = {}
  for k, v in pairs(cfg.Labels or {}) do labels[#labels + 1] = k .. "=" .. v end
  table.sort(labels)
  local env = {}
  for _, e in ipairs(cfg.Env or {}) do env[#env + 1] = e end
  table.sort(env)
  return {
    cap_add = hc.CapAdd, cap_drop = hc.CapDrop, effective_caps = c.EffectiveCaps,
    bounding_caps = c.BoundingCaps, security_opt = hc.SecurityOpt, readonly = hc.ReadonlyRootfs,
    ulimits = hc.Ulimits, pids = hc.PidsLimit, memory = hc.Memory, cpu_quota = hc.CpuQuota,
    cpu_period = hc.CpuPeriod, nano_cpus = hc.NanoCpus, userns = ns(hc.UsernsMode),
    netns = ns(hc.NetworkMode), ipcns = ns(hc.IpcMode), pidns = ns(hc.PidMode), utsns = ns(hc.UTSMode),
    cgroupns = hc.CgroupnsMode, tmpfs = hc.Tmpfs, mounts = mounts, user = cfg.User, env = env,
    sysctls = hc.Sysctls, log = hc.LogConfig, privileged = hc.Privileged, devices = hc.Devices,
    entrypoint = cfg.Entrypoint, cmd = cfg.Cmd, workdir = cfg.WorkingDir, image = c.ImageName,
    labels = labels, masked = hc.MaskedPaths, readonly_paths = hc.ReadonlyPaths,
    oci_runtime = c.OCIRuntime, shm = hc.ShmSize,
  }
end
-- the seccomp profile both were given (podman.seccomp_profile), or nil
local out = { containers = {}, seccomp = pm:seccomp() }
for _, which in ipairs({ "cli", "api" }) do
  local role_of = {}
  for _, spec in ipairs(topo) do
    local n = names[which][spec.name]
    local r = assert(pm:podman { "inspect", "--format", "{{.Id}}", n })
    ids[r.stdout:match("%x+")] = n
    role_of[n] = spec.role
  end
  for _, spec in ipairs(topo) do
    out.containers[spec.role] = out.containers[spec.role] or {}
    out.containers[spec.role][which] = facts(names[which][spec.name], role_of)
  end
end
for i = #made, 1, -1 do
  local removed, e = pm:rm(made[i])
  if not removed then io.stderr:write(e, "\n") end
end
svc:stop()
io.write(cjson.encode(out), "\n")
