-- N containers created at once through one podman service, each by a
-- process of its own, as the runs of a suite create theirs (issue 26's
-- service): rootless, podman 4.3's service crashed on such creates
-- (libsubid is not thread-safe) until svc:create took a lock.
--   leakbench lua service_creates.lua DIR IMAGE N ROUNDS
-- starts the service in DIR, then ROUNDS times N processes at once, each
--   leakbench lua service_creates.lua --one SOCK IMAGE NAME GO
-- which says it is ready (GO-NAME), waits for the file GO, so that the N
-- requests are sent within a millisecond or so, creates a container
-- named NAME and prints "NAME STATUS". Prints "service alive" or "service
-- dead" (its /_ping) at the end; removes what it made.
local core = require "leakbench.core"
local podman = require "leakbench.podman"

local function spec(image, name)
  return { name = name, role = "probe", image = image, network = "none", entrypoint = "true",
           labels = { { "leakbench", "1" } } }
end

if arg[1] == "--one" then
  local pm = podman.new()
  assert(core.write_file(arg[5] .. "-" .. arg[4], "", 420))
  while not core.stat(arg[5]) do core.sleep(0.001) end
  local status, doc = podman.client(arg[2]):create(pm, spec(arg[3], arg[4]))
  io.write(arg[4], " ", tostring(status or doc), "\n")
  return
end

local dir, image, n, rounds = arg[1], arg[2], math.tointeger(tonumber(arg[3])), math.tointeger(tonumber(arg[4]))
local pm = podman.new()
local svc <close> = assert(podman.service_start(pm, dir))
local exe, script = assert(core.exe_path()), debug.getinfo(1, "S").source:sub(2)
local names = {}
local function round(r)
  local hs, go, first = {}, dir .. "/go-" .. r, #names + 1
  for i = first, first + n - 1 do
    names[i] = ("lb-creates-%d-%d"):format(core.getpid(), i)
    hs[i] = assert(core.start { argv = { exe, "lua", script, "--one", svc.sock, image, names[i], go },
                                stdout = dir .. "/one-" .. i .. ".txt", stderr = dir .. "/one-" .. i .. ".err" })
  end
  local deadline = core.now() + 60
  for i = first, #names do
    while not core.stat(go .. "-" .. names[i]) and not hs[i]:done() and core.now() < deadline do core.sleep(0.005) end
  end
  assert(core.write_file(go, "", 420))
  for i = first, #names do
    hs[i]:wait(120)
    hs[i]:close()
    local out = core.read_file(dir .. "/one-" .. i .. ".txt") or ""
    if out == "" then
      local err = core.read_file(dir .. "/one-" .. i .. ".err") or ""
      out = names[i] .. " failed: " .. (err:match("[^\n]+") or "?") .. "\n"
    end
    io.write(out)
  end
end
for r = 1, rounds do round(r) end
io.write(core.uhttp(svc.sock, "GET", podman.API .. "/_ping", nil, 5) == 200 and "service alive\n" or "service dead\n")
local rm = { "rm", "-f", "-i", "-t", "0" }
for _, name in ipairs(names) do rm[#rm + 1] = name end
pm:podman(rm)
