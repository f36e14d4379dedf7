-- Run by `leakbench lua` from spec/e2e/init_mount_spec.lua: the claude
-- container of one run's topology (a staged Sandbox's, the table a run
-- starts), started again and again while the servers image it takes
-- lb-init from is unmounted from under it, as another run's cleanup does
-- on podman 4.3.1 (each cleanup or removal of a container already cleaned
-- up takes one more off the image's shared mount count: at zero, the
-- image's merged dir is unmounted and removed, whoever is about to mount
-- it). The servers image is a layer of this script's own on top of ARG[3],
-- so that no other run's image is touched. Prints one line per start:
-- "ok" when lb-init and lb-nodump.so were at their paths, root's and
-- read-only, else what was wrong or podman's first error line. arg[1]: a scratch folder; arg[2], arg[3]: the claude
-- and proxy images; arg[4]: how many starts.
local core = require "leakbench.core"
local podman = require "leakbench.podman"
local sandbox = require "leakbench.sandbox"
local images = require "leakbench.images"
local lb = require "leakbench"

local dir, claude, proxy, n = arg[1], arg[2], arg[3], tonumber(arg[4] or "8")
local pm = podman.new()
local tag = "localhost/leakbench-test-init-mount:" .. core.uuid():sub(1, 12)
assert(core.mkdir_p(dir .. "/ctx", 493))
assert(core.write_file(dir .. "/ctx/Containerfile", ("FROM %s\nRUN true\nLABEL leakbench.test=%s\n")
  :format(proxy, tag), 420))
assert(pm:podman({ "build", "--label", "leakbench=1", "-t", tag, dir .. "/ctx" }, { timeout = 600 }))

-- What lb-init runs from, as the agent finds it: there, owned by root,
-- read-only (the mount, not only the modes), and not the agent's to
-- change.
local CHECK = ([[
set -u
for f in %s %s; do
  test -f "$f" || { echo "missing $f"; exit 0; }
  test "$(stat -c %%u "$f")" = 0 || { echo "$f is not root's"; exit 0; }
  chmod 0777 "$f" 2>/dev/null && { echo "chmod of $f worked"; exit 0; }
done
touch /opt/leakbench/x 2>/dev/null && { echo "wrote /opt/leakbench/x"; exit 0; }
mv /opt/leakbench/usr /opt/leakbench/u 2>/dev/null && { echo "renamed in /opt/leakbench"; exit 0; }
grep -q ' /opt/leakbench ro[, ]' /proc/self/mountinfo || { echo "/opt/leakbench is not mounted read-only"; exit 0; }
test -x %s && echo ok
]]):format(sandbox.INIT, sandbox.NODUMP, sandbox.INIT)

local names, unmounter = {}, nil
local function main()
  local scenario = { name = "init-mount", prompt = "hi", files = {}, home = {}, env = {}, settings = {},
                     secrets = {}, setup = {}, model = lb.script { lb.say("ok") } }
  local sb = sandbox.new { scenario = scenario, dir = dir .. "/run", pm = pm, run_id = core.uuid(),
                           images = { proxy = tag, claude = claude }, model = "m", timeout = 60 }
  assert(core.mkdir_p(dir .. "/run", 493))
  sb:stage()
  assert(core.write_file(sb.cadir .. "/bundle.pem", "", 420))
  local spec
  for _, s in ipairs(sb:topology()) do
    if s.role == "claude" then spec = s end
  end
  -- the image, unmounted whenever it is mounted, all along
  unmounter = assert(core.start { argv = { "sh", "-c",
    'while :; do "$0" image unmount --force "$1" >/dev/null 2>&1; done', pm.program, tag },
    stdout = "/dev/null", stderr = "/dev/null" })
  for i = 1, n do
    -- the run's own claude container, alone (no sidecar to join), and in
    -- place of lb-init at the gate, a look at what lb-init runs from
    local s = {}
    for k, v in pairs(spec) do s[k] = v end
    s.name, s.join, s.network, s.log, s.rm = spec.name .. "-" .. i, nil, "none", nil, false
    s.entrypoint, s.command = "/bin/sh", { "-c", CHECK }
    names[#names + 1] = s.name
    local r, err = pm:podman(pm:run_argv(s), { timeout = 120 })
    io.write(r and r.stdout:gsub("\n$", "") or podman.first_error_line(tostring(err)), "\n")
  end
end
local ok, err = pcall(main)
if unmounter then unmounter:kill("SIGKILL") unmounter:wait(5) unmounter:close() end
for _, name in ipairs(names) do pm:rm(name) end
pm:podman({ "image", "unmount", "--force", tag })
pm:podman({ "rmi", "-f", tag })
-- the image's copy of lb-init, when the run made one
local copy = sandbox.hide_base() .. "/init/" .. tag:gsub("[^%w._-]", "_")
if core.stat(copy) then images.rm_init_tmp(pm, copy) end
if not ok then error(err, 0) end
