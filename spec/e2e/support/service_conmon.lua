-- Run by `leakbench lua` from spec/e2e/service_spec.lua: starts a podman
-- service in arg[1] as a suite does (podman.service_start), starts a
-- container of image arg[2] through it, and prints one JSON document:
-- { argv = its conmon's command line, exe = that conmon's binary,
--   folder = the lb-conmon folder and its mode while the service runs,
--   left = what of it is there once the service stopped }.
-- Removes what it created.
local core = require "leakbench.core"
local podman = require "leakbench.podman"
local cjson = require "cjson"

local dir, image = arg[1], arg[2]
local pm = podman.new()
local svc = assert(podman.service_start(pm, dir))
local name = "lb-conmon-check-" .. core.uuid():sub(1, 8)
local out = {}
local ok, err = pcall(function()
  assert(svc:run(pm, { name = name, image = image, entrypoint = "sleep", command = { "60" }, network = "none",
                       labels = { { "leakbench.test", "service_conmon" } } }))
  local status, doc = svc:request("GET", "/containers/" .. name .. "/json")
  assert(status == 200, cjson.encode(doc))
  local pid = math.tointeger(assert(doc.State and doc.State.ConmonPid, "no ConmonPid"))
  local f = assert(io.open("/proc/" .. pid .. "/cmdline", "rb"))
  local argv = {}
  for a in f:read("a"):gmatch("([^%z]*)%z") do argv[#argv + 1] = a end
  f:close()
  out.argv, out.exe = argv, core.realpath("/proc/" .. pid .. "/exe")
  if svc.conmon_dir then
    local st = core.stat(svc.conmon_dir)
    out.folder = { path = svc.conmon_dir, mode = st and st.mode }
  end
end)
svc:rm(name)
svc:stop()
if out.folder then out.left = core.stat(out.folder.path) and out.folder.path or false end
if not ok then
  io.stderr:write(tostring(err), "\n")
  os.exit(1)
end
print(cjson.encode(out))
