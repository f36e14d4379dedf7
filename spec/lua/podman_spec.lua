-- leakbench.podman and leakbench.clean against a fake podman (a shell script
-- that records its argv and answers from canned files): the flags chosen for
-- rootful and rootless, ulimits, labels, the error format, log following,
-- and which leftovers `clean` removes. Real podman is exercised in
-- spec/e2e/images_spec.lua.
local core = require "leakbench.core"
local podman = require "leakbench.podman"
local clean = require "leakbench.clean"
local images = require "leakbench.images"
local doctor = require "leakbench.doctor"
local sandbox = require "leakbench.sandbox"

local dir, fake, log

local FAKE = [[#!/bin/sh
printf '%%s\n' "$*" >> %s/argv.log
d=%s
case "$*" in
  *"image exists present"*|*"image exists broken-present"*) exit 0 ;;
  *"image exists absent"*) exit 1 ;;
  *"run --rm broken"*) echo "WARN[0000] noise" >&2; echo "Error: runc: boom" >&2; exit 125 ;;
  *"run --rm slow"*) sleep 30 ;;
  *"ps -a --filter label=leakbench=1 --format json"*) cat "$d/ps.json" ;;
  *"network ls --filter label=leakbench=1 --format json"*) cat "$d/net.json" ;;
  *"build"*"npm.Containerfile"*) printf 'STEP 1/3: FROM base\nSTEP 2/3: RUN echo hello\nhello\n--> 397ddc0747c\n'
    printf 'STEP 3/3: RUN echo first >&2; npm install -g x\nfirst\n\n/bin/sh: 1: npm: not found\033[31m\n'
    echo 'Error: building at STEP "RUN echo first >&2; npm install -g x": while running runtime: exit status 127' >&2
    exit 127 ;;
  *"build"*"tls.Containerfile"*) printf 'STEP 1/1: RUN npm install x\nnpm ERR! code SELF_SIGNED_CERT_IN_CHAIN\nnpm ERR! errno SELF_SIGNED_CERT_IN_CHAIN\n'
    echo 'Error: building at STEP "RUN npm install x": while running runtime: exit status 1' >&2; exit 1 ;;
  *"build"*"bad.Containerfile"*) echo "STEP 1/2: FROM x"
    echo "Error: building at STEP \"RUN false\": exit status 1" >&2; exit 1 ;;
  *"version --format"*) echo 4.3.1 ;;
  *"images --filter label=leakbench=1 --format json"*) cat "$d/images.json" ;;
  "rmi busy:1") echo "Error: image used by abc: image is in use by a container" >&2; exit 2 ;;
  "rm -f -i -t 0 joined") : > "$d/joined-gone" ;;
  "rm -f -i -t 0 joinee") [ -e "$d/joined-gone" ] || {
    echo "Error: container joinee has dependent containers which must be removed before it: joined" >&2; exit 125; } ;;
  *"images --format json --filter reference="*)
    [ -e "$d/cni-warning" ] && echo 'time="2026-12-01T12:05:09Z" level=warning msg="Error validating CNI config file /etc/cni/net.d/87-podman-bridge.conflist: failed to find plugin bridge"' >&2
    sep=; printf '['
    for a; do case $a in reference=*) ref=${a#reference=}
      if grep -qxF "$ref" "$d/images.txt" 2>/dev/null; then printf '%%s{"Names":["%%s"]}' "$sep" "$ref"; sep=,; fi ;; esac
    done
    printf ']\n' ;;
  *"images --format"*) cat "$d/images.txt" 2>/dev/null ;;
  "image inspect --format {{.Id}} "*) shift 4; rc=0
    for ref; do
      if grep -qxF "$ref" "$d/images.txt" 2>/dev/null; then echo "id-$ref"
      else echo "Error: inspecting object: $ref: image not known" >&2; rc=125; fi
    done; exit $rc ;;
  *"info --format {{.Host.NetworkBackend}}"*) echo cni ;;
  *"--network container:"*"--entrypoint /bin/bash"*|*"--network ns:"*"--entrypoint /bin/bash"*)
    l='listen 127.0.0.1:1 127.0.0.1:3128 127.0.0.1:53 127.0.0.1:8080 '
    if [ -e "$d/topology-leaks" ]; then printf 'ifaces eth0 lo \nroutes 2\n%%s\nhttp 200\n' "$l"
    else printf 'ifaces lo \nroutes 0\n%%s\nhttp 200\n' "$l"; fi ;;
  *"run --rm --name lb-doctor-"*"--entrypoint true"*) [ -e "$d/trial-fails" ] &&
    { echo "Error: runc: cgroups in hybrid mode not supported" >&2; exit 126; } ;;
  *":/out --label "*) # images.init_copy: lb-init's files, written where /out is
    for a; do case $a in *:/out) o=${a%%:/out}
      mkdir -p "$o/files/usr/local/bin" "$o/files/usr/local/lib/leakbench"
      : > "$o/files/usr/local/bin/lb-init"; : > "$o/files/usr/local/lib/leakbench/lb-nodump.so" ;; esac; done ;;
  *"run -d --name "*) # a detached container's k8s-file log: its servers' ready lines;
    # and what lb-trap writes to the folder mounted at /trap-ca
    for a; do case $a in path=*) for w in lb-net lb-trap lb-proxy; do
      printf '2026-12-01T00:00:00Z stdout F %%s: listening\n' "$w"; done > "${a#path=}" ;;
      *:/trap-ca) echo CA > "${a%%:/trap-ca}/ca.pem"; echo CA > "${a%%:/trap-ca}/bundle.pem" ;; esac; done ;;
esac
exit 0
]]

local function argv_log()
  local lines = {}
  for l in (core.read_file(log) or ""):gmatch("[^\n]+") do lines[#lines + 1] = l end
  return lines
end

setup(function()
  dir = assert(core.tmpdir("lb-podman-spec-"))
  fake = dir .. "/podman"
  log = dir .. "/argv.log"
  assert(core.write_file(fake, FAKE:format(dir, dir), tonumber("755", 8)))
end)

teardown(function() core.rmtree(dir) end)

before_each(function() core.write_file(log, "") end)

describe("podman flags", function()
  it("run Claude Code as uid 1000: --user rootful, keep-id rootless", function()
    local rootful = podman.new { podman = fake, rootful = true, runtime = "" }
    assert.same({ "--user", "1000:1000" }, rootful:user_args())
    local rootless = podman.new { podman = fake, rootful = false, runtime = "" }
    assert.same({ "--userns=keep-id:uid=1000,gid=1000" }, rootless:user_args())
    assert.same({ "--userns=keep-id:uid=1000,gid=1000" }, rootless:run_args())
  end)

  it("pass explicit ulimits rootful when CAP_SYS_RESOURCE is missing", function()
    local pm = podman.new { podman = fake, rootful = true, runtime = "" }
    if podman.has_cap_sys_resource() then
      assert.same({}, pm:ulimit_args())
      return
    end
    local _, nofile = core.getrlimit("nofile")
    local _, nproc = core.getrlimit("nproc")
    nofile = nofile == math.huge and 1048576 or nofile
    nproc = (nproc == math.huge or nproc > 32768) and 32768 or nproc
    assert.same({ "--ulimit", ("nofile=%d:%d"):format(nofile, nofile),
                  "--ulimit", ("nproc=%d:%d"):format(nproc, nproc) }, pm:ulimit_args())
    local ra = pm:run_args()
    assert.equal("--user", ra[5])
    assert.same({}, podman.new { podman = fake, rootful = false, runtime = "" }:ulimit_args())
  end)

  it("pick runc on cgroup v1/hybrid hierarchies, or as told", function()
    assert.same({ "--runtime", "runc" }, podman.new { podman = fake, runtime = "runc" }:args())
    assert.same({}, podman.new { podman = fake, runtime = "" }:args())
    local auto = podman.new { podman = fake }
    if podman.cgroup_mode() == "v1" and podman.find_program("runc") then
      assert.same({ "--runtime", "runc" }, auto:args())
    elseif podman.cgroup_mode() == "v2" then
      assert.same({}, auto:args())
    end
  end)

  it("turn a container spec into one podman run argv, hardening and labels written once", function()
    local spec = { name = "c1", image = "img", entrypoint = "/e", command = { "a", "b" }, detach = true,
      labels = podman.labels { run = "r1", suite = "s1" }, network = "none",
      limits = { memory = "1g", pids = 8, cpus = 1, tmp = "4m", home = "2m" }, ulimits = { fsize = 10 },
      mounts = { { "/h", "/c" }, { "/r", "/ro", ro = true }, { "/opt/x", image = "img2" } },
      env = { B = "2", A = "1" }, workdir = "/w", cap_add = { "NET_ADMIN" },
      sysctls = { { "k", "v" } }, masks = { "/proc/cmdline" }, log = { dir = "/d", name = "c" },
      lifetime = 689.5 }
    local pid = core.getpid()
    local rootful = podman.new { podman = fake, runtime = "", rootful = true, seccomp = "/s/seccomp.json" }
    rootful.ulimits = { nofile = 5, nproc = 6 }
    assert.same({ "run", "-d", "--name", "c1", "--label", "leakbench=1", "--label", "leakbench.run=r1",
      "--label", "leakbench.suite=s1", "--label", "leakbench.pid=" .. pid,
      "--ulimit", "nofile=5:5", "--ulimit", "nproc=6:6", "--ulimit", "fsize=10:10",
      "--user", "1000:1000", "--network", "none",
      "--log-driver", "k8s-file", "--log-opt", "path=/d/c.ctr.log", "--log-opt", "max-size=64m",
      "--conmon-pidfile", "/d/c.conmon.pid",
      "--cap-drop=all", "--security-opt=no-new-privileges", "--security-opt", "seccomp=/s/seccomp.json",
      "--read-only", "--cap-add=NET_ADMIN", "--security-opt", "mask=/proc/cmdline", "--sysctl", "k=v",
      "--memory=1g", "--pids-limit=8", "--cpus=1", "--tmpfs", "/tmp:rw,mode=1777,size=4m",
      "--tmpfs", "/home/bench:rw,mode=1777,size=2m",
      "-v", "/h:/c", "-v", "/r:/ro:ro", "--mount", "type=image,source=img2,destination=/opt/x",
      "-e", "A=1", "-e", "B=2", "-w", "/w", "--entrypoint", "/e", "--timeout", "690", "img", "a", "b" },
      rootful:run_argv(spec))
    -- Joining a sidecar's netns: rootless, its user namespace too; uid 1000 either way.
    local join = { name = "c2", image = "img", join = "side", rm = true }
    rootful.ulimits, rootful.seccomp_path = nil, false
    assert.same({ "run", "--rm", "--name", "c2", "--network", "container:side", "--user", "1000:1000",
      "--cap-drop=all", "--security-opt=no-new-privileges", "--read-only", "img" }, rootful:run_argv(join))
    local rootless = podman.new { podman = fake, runtime = "", rootful = false, seccomp = false }
    rootless.ulimits = nil
    assert.same({ "run", "--rm", "--name", "c2", "--network", "container:side", "--userns", "container:side",
      "--user", "1000:1000", "--cap-drop=all", "--security-opt=no-new-privileges", "--read-only", "img" },
      rootless:run_argv(join))
    assert.same({ "run", "--name", "c3", "--userns=keep-id:uid=1000,gid=1000",
      "--cap-drop=all", "--security-opt=no-new-privileges", "--read-only", "img" },
      rootless:run_argv { name = "c3", image = "img", network = "default" })
    -- a namespace kept at a path (sandbox's make_netns), joined by path
    assert.same({ "run", "--name", "c4", "--user", "1000:1000", "--network", "ns:/v/netns-1-r",
      "--cap-drop=all", "--security-opt=no-new-privileges", "--read-only", "img" },
      rootful:run_argv { name = "c4", image = "img", network = "ns:/v/netns-1-r" })
  end)

  it("turn the same spec into the service's create request, with the same hardening", function()
    local json = require "leakbench.json"
    local spec = { name = "c1", image = "img", entrypoint = "/e", command = { "a" }, detach = true,
      labels = podman.labels { run = "r1" }, network = "none",
      limits = { memory = "1g", pids = 8, cpus = 1.5, tmp = "4m" }, ulimits = { fsize = 10 },
      mounts = { { "/h", "/c" }, { "/r", "/ro", ro = true }, { "/opt/x", image = "img2" } },
      env = { A = "1" }, workdir = "/w", cap_add = { "NET_ADMIN" }, sysctls = { { "k", "v" } },
      masks = { "/proc/cmdline" }, log = { dir = "/d", name = "c" }, lifetime = 690 }
    local rootful = podman.new { podman = fake, runtime = "runc", rootful = true, seccomp = "/s/seccomp.json" }
    rootful.ulimits = { nofile = 5, nproc = 6 }
    local g = rootful:create_spec(spec)
    assert.same({ "all" }, g.cap_drop)
    assert.is_true(g.no_new_privileges)
    assert.equal("/s/seccomp.json", g.seccomp_profile_path)
    assert.is_nil(podman.new({ podman = fake, seccomp = false }):create_spec(spec).seccomp_profile_path)
    assert.is_true(g.read_only_filesystem)
    assert.same({ "NET_ADMIN" }, g.cap_add)
    assert.same({ "/proc/cmdline" }, g.mask)
    assert.same({ k = "v" }, g.sysctl)
    assert.equal("runc", g.oci_runtime)
    assert.equal(690, g.timeout)
    assert.equal("1000:1000", g.user)
    assert.same({ nsmode = "none" }, g.netns)
    assert.is_nil(g.userns)
    assert.same({ { type = "nofile", soft = 5, hard = 5 }, { type = "nproc", soft = 6, hard = 6 },
      { type = "fsize", soft = 10, hard = 10 } }, g.r_limits)
    assert.same({ memory = { limit = 1 << 30 }, pids = { limit = 8 }, cpu = { quota = 150000, period = 100000 } },
      g.resource_limits)
    assert.same({
      { destination = "/tmp", type = "tmpfs", source = "tmpfs", options = { "rw", "mode=1777", "size=4m" } },
      { destination = "/c", type = "bind", source = "/h" },
      { destination = "/ro", type = "bind", source = "/r", options = { "ro" } },
      -- what the CLI's --read-only adds where nothing is mounted
      { destination = "/var/tmp", type = "tmpfs", source = "tmpfs",
        options = { "rw", "rprivate", "nosuid", "nodev", "tmpcopyup" } },
      { destination = "/run", type = "tmpfs", source = "tmpfs",
        options = { "rw", "rprivate", "nosuid", "nodev", "tmpcopyup" } } }, g.mounts)
    assert.same({ { Source = "img2", Destination = "/opt/x", ReadWrite = false } }, g.image_volumes)
    assert.same({ driver = "k8s-file", path = "/d/c.ctr.log", size = 64000000 }, g.log_configuration)
    assert.equal("/d/c.conmon.pid", g.conmon_pid_file)
    assert.same({ leakbench = "1", ["leakbench.run"] = "r1", ["leakbench.pid"] = tostring(core.getpid()) }, g.labels)
    -- rootless: keep-id, or the joined container's user namespace; rlimits a list even when empty
    local rootless = podman.new { podman = fake, runtime = "", rootful = false }
    rootless.ulimits = nil
    g = rootless:create_spec { name = "c2", image = "img", network = "none" }
    assert.same({ nsmode = "keep-id", value = "uid=1000,gid=1000" }, g.userns)
    assert.same({ HostUIDMapping = false, HostGIDMapping = false }, g.idmappings)
    assert.is_nil(g.user)
    assert.truthy(json.encode(g):find('"r_limits":[]', 1, true), json.encode(g))
    g = rootless:create_spec { name = "c3", image = "img", join = "side" }
    assert.same({ nsmode = "container", value = "side" }, g.userns)
    assert.same({ nsmode = "container", value = "side" }, g.netns)
    assert.equal("1000:1000", g.user)
    g = rootful:create_spec { name = "c4", image = "img", network = "ns:/v/netns-1-r" }
    assert.same({ nsmode = "path", value = "/v/netns-1-r" }, g.netns)
    assert.equal("1000:1000", g.user)
  end)

  it("refuse a container spec it cannot read", function()
    local pm = podman.new { podman = fake, runtime = "" }
    assert.has_error(function() pm:run_argv { name = "c", image = "i", network = "none", mount = {} } end,
      "container spec: unknown field 'mount'")
    assert.has_error(function() pm:run_argv { name = "c", image = "i", network = "none", join = "x" } end,
      "container spec 'c': exactly one of 'network' and 'join'")
    for _, n in ipairs({ "bridge", "host", "container:x", "ns:", "ns:rel/path", "ns:/" }) do
      assert.has_error(function() pm:run_argv { name = "c", image = "i", network = n } end,
        ("container spec 'c': network '%s' is none of 'none', 'default' and 'ns:/PATH'"):format(n))
    end
    assert.has_error(function() pm:run_argv { name = "c", image = "i", network = "none", env = "A=1" } end,
      "container spec: field 'env' is a string, expected a table")
  end)

  it("label everything with the run and the owning process", function()
    local pm = podman.new { podman = fake, runtime = "" }
    local pid = core.getpid()
    assert.same({ "--label", "leakbench=1", "--label", "leakbench.pid=" .. pid }, pm:label_args())
    assert.same({ "--label", "leakbench=1", "--label", "leakbench.run=r1",
                  "--label", "leakbench.pid=" .. pid }, pm:label_args("r1"))
  end)
end)

describe("pm:podman", function()
  local pm
  before_each(function() pm = podman.new { podman = fake, runtime = "runc" } end)

  it("puts the global flags before the verb", function()
    assert.truthy(pm:podman { "info" })
    assert.same({ "--runtime runc info" }, argv_log())
  end)

  it("reports failures with the verb, the exit status and the error line", function()
    local r, err, res = pm:podman { "run", "--rm", "broken" }
    assert.is_nil(r)
    assert.equal("podman run failed (exit 125): runc: boom", err)
    assert.equal(125, res.status)
  end)

  it("reports a timeout", function()
    local r, err = pm:podman({ "run", "--rm", "slow" }, { timeout = 0.2 })
    assert.is_nil(r)
    -- The elapsed time, as measured: at least the timeout (a loaded
    -- machine takes longer to notice).
    local secs = tonumber(err:match("^podman run timed out after ([%d.]+) s$"))
    assert.truthy(secs and secs >= 0.2, err)
  end)

  it("reports a missing podman", function()
    local r, err = podman.new { podman = dir .. "/nope", runtime = "" }:podman { "info" }
    assert.is_nil(r)
    assert.equal("cannot run '" .. dir .. "/nope': no such file or directory", err)
  end)

  it("raises on a bad argv", function()
    assert.has_error(function() pm:podman("run") end,
      "pm:podman: argv must be a list starting with the podman verb")
  end)

  it("answers image_exists and version", function()
    assert.is_true(pm:image_exists("present"))
    assert.is_false(pm:image_exists("absent"))
    assert.equal("4.3.1", pm:version())
  end)

  it("builds with ulimits, sorted build args, secrets and labels", function()
    local ok = pm:build { tag = "t:1", containerfile = "/x/good.Containerfile", context = "/ctx",
                          build_args = { B = "2", A = "1" }, secrets = { ca = "/ca.crt" } }
    assert.is_true(ok)
    local line = argv_log()[1]
    local want = "--runtime runc build --pull=never --layers --network host -f /x/good.Containerfile -t t:1 "
      .. table.concat(pm:ulimit_args(), " ") .. (pm.ulimits and " " or "")
      .. "--build-arg A=1 --build-arg B=2 --secret id=ca,src=/ca.crt --label leakbench=1 /ctx"
    assert.equal(want, line)
  end)

  it("names the build log when a build fails", function()
    local ok, err = pm:build { tag = "t:1", containerfile = "/x/bad.Containerfile", context = "/ctx" }
    assert.is_nil(ok)
    local logfile = err:match("%(build log: (.-)%)$")
    assert.equal('podman build failed (exit 1): building at STEP "RUN false": exit status 1'
      .. " (build log: " .. logfile .. ")", err)
    assert.matches("STEP 1/2", core.read_file(logfile))
    core.rmtree(logfile:match("^(.*)/"))
  end)

  it("names the failing step's cause, from its last output, when a build fails", function()
    local ok, err = pm:build { tag = "t:1", containerfile = "/x/npm.Containerfile", context = "/ctx" }
    assert.is_nil(ok)
    local logfile = err:match("%(build log: (.-)%)")
    assert.equal('podman build failed (exit 127): building at STEP "RUN echo first >&2; npm install -g x": '
      .. "while running runtime: exit status 127 (build log: " .. logfile .. "): its last output:\n"
      .. "  first\n  /bin/sh: 1: npm: not found\\x1B[31m", err)
    core.rmtree(logfile:match("^(.*)/"))
  end)

  it("names the CA fix when a build step's TLS fails on an unknown CA, with the bundle it was given", function()
    local cadir = core.tmpdir("lb-ca-")
    core.write_file(cadir .. "/bundle.crt", "-----BEGIN CERTIFICATE-----\n")
    core.write_file(cadir .. "/empty.crt", "")
    local quoted = cadir:gsub("%p", "%%%0")
    local cases = { [cadir .. "/bundle.crt"] = "trusts %(" .. quoted .. "/bundle%.crt%)",
                    [cadir .. "/empty.crt"] = "trusts %(none: this host has no CA bundle leakbench knows%)" }
    for bundle, named in pairs(cases) do
      local ok, err = pm:build { tag = "t:1", containerfile = "/x/tls.Containerfile", context = "/ctx",
                                 secrets = { ca = bundle } }
      assert.is_nil(ok)
      assert.matches("^podman build failed %(exit 1%).*SELF_SIGNED_CERT_IN_CHAIN.*\n"
        .. "TLS failed: the server's certificate chain ends in a CA", err)
      assert.matches(named, err)
      assert.matches("update%-ca%-certificates%), or set LEAKBENCH_CA_BUNDLE to a bundle that holds it%.$", err)
      core.rmtree(err:match("%(build log: (.-)/build%.log"))
    end
    core.rmtree(cadir)
    -- a failure that is not about TLS gets no such hint
    assert.are.equal("", podman.build_hint("npm ERR! code E404\n", cadir .. "/bundle.crt"))
  end)

  it("keeps the last lines of a step's output, and none of an earlier step's", function()
    local text = "STEP 1/2: RUN a\nearlier\nSTEP 2/2: RUN b\n"
    for i = 1, 9 do text = text .. "line " .. i .. "\n" end
    text = text .. "WARN[0001] noise\nError: building at STEP \"RUN b\": exit status 1\n"
    assert.equal("  line 5\n  line 6\n  line 7\n  line 8\n  line 9", podman.build_cause(text))
    assert.is_nil(podman.build_cause("STEP 1/1: RUN true\nError: x\n"))
    assert.is_nil(podman.build_cause("Error: no such file\n"))
  end)
end)

describe("container logs in files (k8s-file)", function()
  it("turns a k8s-file log into the text the container printed", function()
    local raw = "2026-11-29T18:47:18.621501116+00:00 stderr F lb-model: cannot load\n"
      .. "2026-11-29T18:47:18.7+00:00 stdout P a partial \n"
      .. "2026-11-29T18:47:18.8+00:00 stdout F line, ended\n"
      .. "2026-11-29T18:47:18.9+00:00 stdout F \n"
      .. "not a log line\n"
      .. "2026-11-29T18:47:19+00:00 stdout F no newline at the end"
    assert.equal("lb-model: cannot load\na partial line, ended\n\nnot a log line\n",
      podman.k8s_log_text(raw))
  end)

  it("splits a k8s-file log into the container's stdout and stderr (the claude container's)", function()
    local raw = "2026-11-29T18:47:18.6+00:00 stdout P {\"type\": \"a\n"
      .. "2026-11-29T18:47:18.7+00:00 stderr P warn\n"
      .. "2026-11-29T18:47:18.8+00:00 stdout F  b\"}\n"
      .. "2026-11-29T18:47:18.9+00:00 stderr F ing\n"
      .. "2026-11-29T18:47:19+00:00 stdout F\n"
      .. "not a log line\n"
      .. "2026-11-29T18:47:19+00:00 stdout P no newline at the end\n"
    local out, err = podman.k8s_log_streams(raw)
    assert.equal("{\"type\": \"a b\"}\n\nno newline at the end", out)
    assert.equal("warning\nnot a log line\n", err)
  end)

  it("splits the claude container's log into stream.jsonl and stderr.txt a piece at a time", function()
    local d = dir .. "/streams"
    core.mkdir_p(d .. "/containers")
    local sb = setmetatable({ api_claude = true, ctrdir = d .. "/containers", dir = d }, sandbox.Sandbox)
    local lines, want_out, want_err = {}, {}, {}
    for i = 1, 200 do
      local stream = i % 3 == 0 and "stderr" or "stdout"
      local text = ("line %d %s"):format(i, string.rep("x", i % 17))
      lines[#lines + 1] = ("2026-11-29T18:47:18.%d+00:00 %s F %s\n"):format(i, stream, text)
      local w = stream == "stdout" and want_out or want_err
      w[#w + 1] = text .. "\n"
    end
    local text = table.concat(lines)
    local saved = sandbox.STREAMS_CHUNK
    sandbox.STREAMS_CHUNK = 100     -- pieces shorter than the log, cut inside lines
    -- half of it, with a line cut short at its end; then the rest
    core.write_file(d .. "/containers/claude.ctr.log", text:sub(1, #text // 2))
    sb:claude_streams()
    core.write_file(d .. "/containers/claude.ctr.log", text)
    sb:claude_streams(true)
    sandbox.STREAMS_CHUNK = saved
    assert.equal(table.concat(want_out), core.read_file(d .. "/stream.jsonl"))
    assert.equal(table.concat(want_err), core.read_file(d .. "/stderr.txt"))
    core.rmtree(d)
  end)

  it("tells a running process from a zombie (an ended conmon PID 1 has not reaped yet)", function()
    assert.is_true(podman.running(core.getpid()))
    local h = assert(core.start { argv = { "true" } })
    local pid = h:pid()
    local deadline = core.now() + 10
    while podman.running(pid) and core.now() < deadline do core.sleep(0.01) end
    assert.is_false(podman.running(pid), "an ended child, not reaped, counts as running")
    assert.is_true(core.pid_alive(pid), "the child was reaped already")
    h:wait(5)
    h:close()
    assert.is_false(podman.running(999999999))
  end)

  it("waits for the ready line, and stops when the container's conmon is gone", function()
    local d = dir .. "/ctr"
    core.mkdir_p(d)
    core.write_file(d .. "/p.ctr.log", "2026-11-29T00:00:00+00:00 stdout F lb-proxy: listening on 8080\n")
    core.write_file(d .. "/p.conmon.pid", tostring(core.getpid()))
    local ok, text = podman.wait_ready(d, "p", "listening", 5)
    assert.is_true(ok)
    assert.equal("lb-proxy: listening on 8080\n", text)
    core.write_file(d .. "/q.ctr.log", "2026-11-29T00:00:00+00:00 stderr F panic\n")
    core.write_file(d .. "/q.conmon.pid", "999999999")
    local t0 = core.now()
    local why
    ok, text, why = podman.wait_ready(d, "q", "listening", 5)
    assert.is_false(ok)
    assert.equal("panic\n", text)
    assert.equal("exited", why)
    assert.is_true(core.now() - t0 < 4)
    -- a conmon that has ended but is not reaped yet (a zombie: PID 1
    -- reaps late on some machines) has ended too
    local z = assert(core.start { argv = { "true" } })
    local deadline = core.now() + 10
    while podman.running(z:pid()) and core.now() < deadline do core.sleep(0.01) end
    core.write_file(d .. "/z.ctr.log", "2026-11-29T00:00:00+00:00 stderr F gone\n")
    core.write_file(d .. "/z.conmon.pid", tostring(z:pid()))
    ok, text, why = podman.wait_ready(d, "z", "listening", 3)
    assert.is_true(core.pid_alive(z:pid()), "the zombie was reaped already")
    z:wait(5)
    z:close()
    assert.is_false(ok)
    assert.equal("gone\n", text)
    assert.equal("exited", why)   -- not "timeout": it did not wait for the reaping
    ok, text, why = podman.wait_ready(d, "never", "listening", 0.2)
    assert.is_false(ok)
    assert.equal("", text)
    assert.equal("timeout", why)
    core.rmtree(d)
  end)
end)

describe("clean", function()
  local pm
  before_each(function()
    pm = podman.new { podman = fake, runtime = "" }
    local me = core.getpid()
    core.write_file(dir .. "/ps.json", ([[
[ {"Id": "aaa", "Names": ["lb-claude-live"], "State": "running",
   "Labels": {"leakbench": "1", "leakbench.run": "live", "leakbench.pid": "%d"}},
  {"Id": "bbb", "Names": ["lb-claude-dead"], "State": "exited",
   "Labels": {"leakbench": "1", "leakbench.run": "dead", "leakbench.pid": "999999999"}},
  {"Id": "ccc", "Names": ["lb-nopid"], "State": "exited", "Labels": {"leakbench": "1"}},
  {"Id": "ddd", "Names": ["lb-up-deferred"], "State": "exited",
   "Labels": {"leakbench": "1", "leakbench.run": "done", "leakbench.pid": "999999998",
              "leakbench.runner": "%d"}} ]
]]):format(me, me))
    core.write_file(dir .. "/net.json", ([[
[ {"name": "lb-live", "labels": {"leakbench": "1", "leakbench.pid": "%d"}},
  {"name": "lb-dead", "labels": {"leakbench": "1", "leakbench.run": "dead", "leakbench.pid": "1"}} ]
]]):format(me))
  end)

  it("removes what no live leakbench process owns, containers first", function()
    local removed = assert(podman.clean(pm))
    assert.same({ "lb-claude-dead", "lb-nopid" }, removed.containers)
    assert.same({ "lb-dead" }, removed.networks)   -- pid 1 is alive but not leakbench
    assert.equal(3, removed.kept)   -- lb-up-deferred: its run ended, its runner lives
    local calls = argv_log()
    assert.same({
      "ps -a --filter label=leakbench=1 --format json",
      "rm -f -i -t 0 bbb",
      "rm -f -i -t 0 ccc",
      "network ls --filter label=leakbench=1 --format json",
      "network rm -f -t 0 lb-dead",
    }, calls)
  end)

  it("removes a container whose netns another joined after that one (podman refuses it before)", function()
    core.write_file(dir .. "/ps.json", [[
[ {"Id": "joinee", "Names": ["lb-x-net"], "State": "running", "Labels": {"leakbench": "1", "leakbench.pid": "999999999"}},
  {"Id": "joined", "Names": ["lb-x-claude"], "State": "running",
   "Labels": {"leakbench": "1", "leakbench.pid": "999999999"}} ]
]])
    local removed = assert(podman.clean(pm))
    assert.same({ "lb-x-claude", "lb-x-net" }, removed.containers)
  end)

  it("leaves what names no owner to `leakbench clean` when asked (the sweep before a suite)", function()
    local removed = assert(podman.clean(pm, { owned = true }))
    assert.same({ "lb-claude-dead" }, removed.containers)
    assert.same({ "lb-dead" }, removed.networks)
    assert.equal(4, removed.kept)
  end)

  it("says what it removed (leakbench clean)", function()
    local out = dir .. "/out"
    local saved = io.output()
    local f = assert(io.open(out, "w"))
    io.stdout:flush()
    local real = io.stdout
    -- clean.main writes to io.stdout: swap it for a file for the call.
    _G.io.stdout = f
    local shm = dir .. "/shm"
    core.mkdir_p(shm .. "/leakbench-cred-999999999-abc")
    core.write_file(shm .. "/leakbench-cred-999999999-abc/auth", "apikey:sk-ant-left-behind")
    core.mkdir_p(shm .. "/leakbench-cred-" .. core.getpid() .. "-def")
    core.mkdir_p(shm .. "/unrelated-999999999-x")
    local ok, status = pcall(clean.main, {}, pm, { shm }, dir .. "/hide")
    _G.io.stdout = real
    f:close()
    io.output(saved)
    assert.is_true(ok, status)
    assert.equal(0, status)
    assert.equal("removed container lb-claude-dead (run dead)\n"
      .. "removed container lb-nopid (run ?)\n"
      .. "removed network lb-dead (run dead)\n"
      .. "removed credential file " .. shm .. "/leakbench-cred-999999999-abc (process 999999999 is gone)\n"
      .. "removed 2 container(s), 1 network(s), 1 credential file(s) and 0 copy(ies) of lb-init, kept 3 of live runs\n",
      core.read_file(out))
    assert.same({ "leakbench-cred-" .. core.getpid() .. "-def", "unrelated-999999999-x" },
      core.listdir(shm))
  end)

  it("rejects unknown arguments", function()
    assert.equal(2, clean.main({ "--bogus" }, pm))
  end)

  it("prunes images but the kept ones and each subject's newest", function()
    core.write_file(dir .. "/images.json", [[
[ {"Id": "i1", "Names": ["localhost/leakbench-claude:new"], "Size": 100, "Created": 5},
  {"Id": "i2", "Names": ["localhost/leakbench-claude:old", "localhost/leakbench-claude:older"],
   "Size": 200, "Created": 3},
  {"Id": "i2", "Names": ["localhost/leakbench-claude:old", "localhost/leakbench-claude:older"],
   "Size": 200, "Created": 3},
  {"Id": "i3", "Names": null, "Size": 300, "Created": 2, "Dangling": true},
  {"Id": "i4", "Names": ["localhost/leakbench-subject-redactor:b"], "Size": 10, "Created": 9},
  {"Id": "i5", "Names": ["localhost/leakbench-subject-redactor:a"], "Size": 10, "Created": 4},
  {"Id": "i6", "Names": ["busy:1"], "Size": 50, "Created": 1},
  {"Id": "i7", "Names": ["localhost/leakbench-proxy:cur", "localhost/leakbench-proxy:stale"],
   "Size": 70, "Created": 6} ]
]])
    core.write_file(log, "")
    local lines = {}
    local got = assert(clean.prune_images(pm, { ["localhost/leakbench-claude:new"] = true,
      ["localhost/leakbench-proxy:cur"] = true }, function(l) lines[#lines + 1] = l end))
    assert.same({
      "images --filter label=leakbench=1 --format json",
      "rmi localhost/leakbench-claude:old", "rmi localhost/leakbench-claude:older",
      "rmi i3", "rmi localhost/leakbench-subject-redactor:a", "rmi busy:1",
      "rmi localhost/leakbench-proxy:stale",
    }, argv_log())
    assert.equal(5, got.removed)                   -- busy:1 is kept
    assert.equal(1, got.skipped)
    assert.matches("^kept image busy:1: podman rmi failed", lines[5])
    core.rmtree(dir .. "/images.json")
  end)

  it("removes lb-init's copies a killed run left unfinished or whose image is gone", function()
    pm.rootful = true
    local base = dir .. "/initbase"
    local cache = base .. "/init"
    local me = core.getpid()
    local names = {
      "extract-999999999-abcdef",                        -- its process is gone
      "extract-" .. me .. "-ghijkl",                     -- a live extraction
      "extract-mnopqr", "extract-stuvwx",                -- named by no process: by age
      "localhost_leakbench-proxy_cur",                   -- its image is there
      "localhost_leakbench-proxy_gone",                  -- its image is not
      "localhost_leakbench-proxy_mine",                  -- the suite's own (keep)
    }
    for _, n in ipairs(names) do
      core.mkdir_p(cache .. "/" .. n .. "/files")
      core.write_file(cache .. "/" .. n .. "/files/lb-init", "x")
    end
    os.execute("touch -d '2 hours ago' " .. cache .. "/extract-mnopqr")
    core.write_file(dir .. "/images.json", [[
[ {"Id": "i7", "Names": ["localhost/leakbench-proxy:cur"], "Size": 70, "Created": 6} ]
]])
    core.write_file(log, "")
    local lines = {}
    local n = clean.sweep_init(pm, function(l) lines[#lines + 1] = l end,
      { ["localhost/leakbench-proxy:mine"] = true }, base)
    assert.equal(3, n)
    assert.same({ ".images-checked", "extract-" .. me .. "-ghijkl", "extract-stuvwx",
      "localhost_leakbench-proxy_cur", "localhost_leakbench-proxy_mine" }, core.listdir(cache))
    assert.same({ "images --filter label=leakbench=1 --format json" }, argv_log())
    table.sort(lines)
    assert.same({
      "removed lb-init's copy " .. cache .. "/localhost_leakbench-proxy_gone (its image is gone)",
      "removed lb-init's unfinished copy " .. cache .. "/extract-999999999-abcdef (process 999999999 is gone)",
      "removed lb-init's unfinished copy " .. cache .. "/extract-mnopqr (older than 3600 s)",
    }, lines)
    -- asked again within EVERY seconds of the last time: podman is not
    core.write_file(log, "")
    assert.equal(0, clean.sweep_init(pm, nil, {}, base, 3600))
    assert.same({}, argv_log())
    os.execute("touch -d '2 hours ago' " .. cache .. "/.images-checked")
    assert.equal(0, clean.sweep_init(pm, nil, { ["localhost/leakbench-proxy:mine"] = true }, base, 3600))
    assert.same({ "images --filter label=leakbench=1 --format json" }, argv_log())
    -- with only the suite's own copy and live extractions there, podman is not asked
    core.rmtree(cache .. "/localhost_leakbench-proxy_cur")
    core.write_file(log, "")
    assert.equal(0, clean.sweep_init(pm, nil, { ["localhost/leakbench-proxy:mine"] = true }, base))
    assert.same({}, argv_log())
    -- a podman that cannot list its images: no copy is removed
    core.mkdir_p(cache .. "/localhost_leakbench-proxy_other")
    core.write_file(dir .. "/images.json", "Error: database is locked\n")
    assert.equal(0, clean.sweep_init(pm, nil, {}, base))
    assert.truthy(core.stat(cache .. "/localhost_leakbench-proxy_other"))
    core.rmtree(dir .. "/images.json")
    core.rmtree(base)
  end)
end)

-- Runs f with io.stdout writing to a file; returns f's result and the text.
local function capture_stdout(f, ...)
  local path = dir .. "/stdout"
  local file = assert(io.open(path, "w"))
  local real = io.stdout
  _G.io.stdout = file
  local ok, res = pcall(f, ...)
  _G.io.stdout = real
  file:close()
  assert(ok, res)
  return res, core.read_file(path)
end

describe("images", function()
  it("computes tags from the tree without building", function()
    local root = assert(images.root())
    local t = assert(images.tags { root = root, base = "debootstrap", claude_version = "2.1.332" })
    assert.matches("^localhost/leakbench%-claude:2%.1%.332%-%x+$", t.claude)
    assert.equal(t.base, (images.base_tag()))
    local again = assert(images.tags_for(root, t.base, "2.1.332"))
    assert.same({ t.claude, t.proxy }, { again.claude, again.proxy })
    local files = images.proxy_files(root)
    assert.equal("Makefile", files[1])
    for _, f in ipairs(files) do assert.not_matches("^src/lua/", f) end
    local bad, err = images.tags_for(root, "B", "1.0; rm -rf /")
    assert.is_nil(bad)
    assert.equal("claude version '1.0; rm -rf /' is not a version", err)
  end)

  it("finds the host's CA bundle for npm", function()
    if core.stat("/etc/ssl/certs/ca-certificates.crt") then
      assert.is_string(images.ca_bundle())
    end
  end)

  it("rejects bad build arguments", function()
    local pm = podman.new { podman = fake, runtime = "" }
    assert.equal(2, images.main({ "--bogus" }, pm))
    assert.equal(2, images.main({ "--base" }, pm))
    local status, text = capture_stdout(images.main, { "--help" }, pm)
    assert.equal(0, status)
    assert.matches("^usage: leakbench build", text)
  end)

  it("builds nothing when every image is present", function()
    local pm = podman.new { podman = fake, runtime = "" }
    local t = assert(images.tags { pm = pm, base = "debootstrap" })
    core.write_file(dir .. "/images.txt", t.claude .. "\n" .. t.proxy .. "\n" .. t.base .. "\n")
    core.write_file(log, "")
    local got = assert(images.ensure(pm, { base = "debootstrap", progress = false }))
    assert.same({}, got.built)
    assert.same({ "images --format json --filter reference=" .. t.base .. " --filter reference=" .. t.claude
      .. " --filter reference=" .. t.proxy }, argv_log())
    core.rmtree(dir .. "/images.txt")
  end)

  it("tells present from missing images in one podman call", function()
    local pm = podman.new { podman = fake, runtime = "" }
    core.write_file(dir .. "/images.txt", "a:1\nc:3\n")
    core.write_file(log, "")
    assert.same({ ["a:1"] = true, ["c:3"] = true }, assert(images.present(pm, { "a:1", "b:2", "c:3" })))
    assert.equal(1, #argv_log())
    core.write_file(dir .. "/images.txt", "")
    assert.same({}, assert(images.present(pm, { "a:1" })))
    core.rmtree(dir .. "/images.txt")
  end)

  it("reads a warning on stderr as a warning: a new store's CNI message is no failure", function()
    local pm = podman.new { podman = fake, runtime = "" }
    core.write_file(dir .. "/images.txt", "a:1\n")
    core.write_file(dir .. "/cni-warning", "")
    assert.same({ ["a:1"] = true }, assert(images.present(pm, { "a:1", "b:2" })))
    core.rmtree(dir .. "/cni-warning")
    core.rmtree(dir .. "/images.txt")
  end)

  it("picks the bootstrapped base when the registry's is absent, and builds nothing", function()
    local pm = podman.new { podman = fake, runtime = "" }
    local t = assert(images.tags { pm = pm, base = "debootstrap" })
    core.write_file(dir .. "/images.txt", t.claude .. "\n" .. t.proxy .. "\n" .. t.base .. "\n")
    core.write_file(log, "")
    local got = assert(images.ensure(pm, { progress = false }))
    assert.equal(t.claude, got.claude)
    assert.equal(t.base, got.base)
    assert.same({}, got.built)
    assert.equal(1, #argv_log())
    core.rmtree(dir .. "/images.txt")
  end)
end)

describe("doctor", function()
  -- the trial's copy of lb-init (images.init_copy), from the fake podman:
  -- in this spec's folder, never where real runs find theirs
  local hide_base = sandbox.HIDE_BASE
  before_each(function() sandbox.HIDE_BASE = dir .. "/hide" end)
  after_each(function()
    sandbox.HIDE_BASE = hide_base
    core.rmtree(dir .. "/images.txt")
    core.rmtree(dir .. "/trial-fails")
  end)

  it("names each problem with its fix, and fails", function()
    local pm = podman.new { podman = fake, rootful = true, runtime = "runc" }
    local status, text = capture_stdout(doctor.main, {}, pm)
    assert.equal(1, status)
    assert.matches("ok    podman 4%.3%.1 %(rootful%)\n", text)
    assert.matches("FAIL  image localhost/leakbench%-claude:[^\n]* is missing\n      fix: leakbench build\n", text)
    assert.matches("note  trial container: skipped, no image yet\n", text)
    assert.matches("%d problem%(s%)\n$", text)
  end)

  it("runs a trial container and passes when all is there", function()
    local pm = podman.new { podman = fake, rootful = true, runtime = "runc", seccomp = "/s/seccomp.json" }
    local t = assert(images.tags { pm = pm })
    core.write_file(dir .. "/images.txt", t.claude .. "\n" .. t.proxy .. "\n" .. t.base .. "\n")
    local checks = doctor.check(pm)
    local fails = {}
    for _, c in ipairs(checks) do
      if c.status == "FAIL" and not c.what:match("^credential") then fails[#fails + 1] = c.what end
    end
    assert.same({}, fails)
    local trial = table.concat(argv_log(), "\n")
    assert.matches("run %-%-rm %-%-name lb%-doctor%-%x+ [^\n]*%-%-user 1000:1000 %-%-network none "
      .. "%-%-cap%-drop=all %-%-security%-opt=no%-new%-privileges %-%-security%-opt seccomp=/s/seccomp.json "
      .. "%-%-read%-only [^\n]*%-%-entrypoint true ", trial)
    -- The topology: the run's own (sandbox's trial mode): the upstream on
    -- a socket, the sidecar's bridge, a probe in the claude container.
    assert.matches("run %-d %-%-name lb%-[%x%-]+%-up [^\n]*%-%-network none [^\n]*/sock/up:/sock/up "
      .. "[^\n]* lb%-net %-%- lb%-model [^\n]* %-%-once unix:/tmp/model.sock lb%-proxy ", trial)
    assert.matches("lb%-net %-%-bridge tcp:127.0.0.1:8080=unix:/sock/up/api.sock %-%-sim 1 %-%- lb%-trap ", trial)
    if core.getuid() == 0 then
      -- rootful, as root: claude and its sidecar in the run's own namespace, by path
      local ns = trial:match("run %-d %-%-name lb%-[%x%-]+%-net [^\n]*%-%-user 1000:1000 "
        .. "%-%-network ns:(/%S+/netns%-%d+%-[%x%-]+) ")
      assert.truthy(ns, trial)
      assert.matches("run %-%-rm %-%-name lb%-[%x%-]+%-claude [^\n]*%-%-user 1000:1000 %-%-network ns:"
        .. ns:gsub("%p", "%%%0") .. " [^\n]*%-%-cap%-drop=all [^\n]*%-%-entrypoint /bin/bash ", trial)
      assert.is_nil(core.stat(ns))
    else
      assert.matches("run %-%-rm %-%-name lb%-[%x%-]+%-claude [^\n]*%-%-network container:lb%-[%x%-]+%-net "
        .. "%-%-user 1000:1000 [^\n]*%-%-cap%-drop=all [^\n]*%-%-entrypoint /bin/bash ", trial)
    end
    assert.matches("rm %-f %-i %-t 0 lb%-[%x%-]+%-net lb%-[%x%-]+%-up lb%-[%x%-]+%-claude", trial)
    local ok = false
    for _, c in ipairs(checks) do
      if c.status == "ok" and c.what:match("^trial topology: a request through a socket bridge") then ok = true end
    end
    assert.truthy(ok, "no trial topology line")
  end)

  it("fails when the trial's sandbox has more than loopback", function()
    local pm = podman.new { podman = fake, rootful = true, runtime = "runc" }
    local t = assert(images.tags { pm = pm })
    core.write_file(dir .. "/images.txt", t.claude .. "\n" .. t.proxy .. "\n" .. t.base .. "\n")
    core.write_file(dir .. "/topology-leaks", "")
    local status, text = capture_stdout(doctor.main, {}, pm)
    core.rmtree(dir .. "/topology-leaks")
    assert.equal(1, status)
    assert.matches("FAIL  trial topology: the sandbox has interfaces 'eth0 lo ' and 2 routes; "
      .. "only lo and none expected\n      fix: ", text)
  end)

  it("explains a runtime failure", function()
    local pm = podman.new { podman = fake, rootful = true, runtime = "" }
    local t = assert(images.tags { pm = pm })
    core.write_file(dir .. "/images.txt", t.base .. "\n")
    core.write_file(dir .. "/trial-fails", "")
    local status, text = capture_stdout(doctor.main, {}, pm)
    assert.equal(1, status)
    assert.matches("FAIL  trial container %(%-%-network none%): podman run failed %(exit 126%): "
      .. "runc: cgroups in hybrid mode not supported\n      fix: apt%-get install runc", text)
  end)

  it("names the credential's source, never the credential", function()
    local source = doctor.credential_source()
    local _, text = capture_stdout(doctor.main, {}, podman.new { podman = fake, runtime = "" })
    for _, name in ipairs { "BENCH_AUTH", "ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN" } do
      local v = os.getenv(name)
      if v and #v >= 8 then assert.is_nil(text:find(v, 1, true)) end
    end
    if source then
      assert.truthy(text:find("credential for --live: ", 1, true))
    else
      assert.truthy(text:find("note  credential for --live: none", 1, true))
    end
  end)
end)

describe("core.uhttp", function()
  local lb = require "leakbench"
  local model = os.getenv("LB_MODEL")

  it("sends a request over a Unix socket and returns the status and the body", function()
    if not model then pending("LB_MODEL is not set (run through spec/run)") return end
    local sock = dir .. "/m.sock"
    assert(core.write_file(dir .. "/s.json", lb.script_json(lb.script { lb.say("hello") })))
    local h = assert(core.start { argv = { model, "--script", dir .. "/s.json", "--listen", "unix:" .. sock },
      stdout = dir .. "/m.log", stderr = dir .. "/m.log" })
    local ok, err = pcall(function()
      local deadline = core.now() + 10
      -- its ready line, printed once it listens (the socket's file is
      -- there from its bind on, when a connection is still refused)
      while not (core.read_file(dir .. "/m.log") or ""):find("lb-model: listening", 1, true)
          and core.now() < deadline do
        core.sleep(0.02)
      end
      local status, body = core.uhttp(sock, "POST", "/v1/messages",
        '{"model":"m","max_tokens":8,"messages":[{"role":"user","content":"hi"}]}', 10)
      assert.equal(200, status, body)
      assert.truthy(body:find('"type":"message"', 1, true), body)
      status = core.uhttp(sock, "GET", "/nothing/here")
      assert.equal(404, status)
    end)
    h:kill("SIGTERM")
    h:wait(5)
    h:close()
    assert(ok, err)
  end)

  it("returns nil, msg when nothing listens, and raises on misuse", function()
    local status, msg = core.uhttp(dir .. "/none.sock", "GET", "/_ping", nil, 5)
    assert.is_nil(status)
    assert.matches("^cannot request '/_ping' on '.*/none%.sock': ", msg)
    assert.has_error(function() core.uhttp(dir .. "/none.sock", "GET", 3) end,
      'core.uhttp: wrong parameter "path": expected string, got number')
    assert.has_error(function() core.uhttp("s", "GET", "/", {}) end,
      'core.uhttp: wrong parameter "body": expected string, got table')
    assert.has_error(function() core.uhttp("s", "GET", "/", nil, -1) end,
      'core.uhttp: wrong parameter "timeout": expected 0 < seconds <= 86400')
  end)
end)

-- The service's client against a fake service (spec/fixtures/podman-service.py:
-- slow creates and removals, answered from a thread per connection, each
-- logged with its start and end).
describe("the podman service's client", function()
  local sdir, sock, slog, h, svc, pm

  -- The fake's log: a list of { ev, name, t0, t1 }, in the order answered.
  local function events()
    local out = {}
    for l in (core.read_file(slog) or ""):gmatch("[^\n]+") do out[#out + 1] = require("cjson").decode(l) end
    return out
  end

  local function spec_of(name, fields)
    local s = { name = name, image = "img", network = "none", detach = true,
                log = { dir = sdir, name = name } }
    for k, v in pairs(fields or {}) do s[k] = v end
    if s.join then s.network = nil end
    return s
  end

  setup(function()
    sdir = assert(core.tmpdir("lb-svc-spec-"))
    sock, slog = sdir .. "/podman.sock", sdir .. "/service.jsonl"
    h = assert(core.start { argv = { "python3", "spec/fixtures/podman-service.py", sock, slog },
      stdout = sdir .. "/out.txt", stderr = sdir .. "/out.txt" })
    local deadline = core.now() + 10
    while core.now() < deadline and core.uhttp(sock, "GET", podman.API .. "/_ping", nil, 1) ~= 200 do
      core.sleep(0.02)
    end
    svc = podman.client(sock)
    pm = podman.new { podman = fake, rootful = true, runtime = "" }
  end)

  teardown(function()
    h:kill("SIGTERM")
    h:wait(5)
    h:close()
    core.rmtree(sdir)
  end)

  before_each(function() core.write_file(slog, "") end)

  it("core.uhttp_start: requests in flight together, each awaited once", function()
    local t0 = core.now()
    local jobs = {}
    for i = 1, 3 do
      jobs[i] = assert(core.uhttp_start(sock, "POST", podman.API .. "/containers/create",
        ('{"name":"u%d"}'):format(i), 10))
    end
    assert.is_false(jobs[1]:done())
    for i = 1, 3 do
      local status, body = jobs[i]:wait()
      assert.equal(201, status)
      assert.equal(('{"Id": "id-u%d", "Warnings": []}'):format(i), body)
    end
    -- three creates of 0.3 s each, side by side
    assert.truthy(core.now() - t0 < 0.75, core.now() - t0)
    assert.has_error(function() jobs[1]:wait() end, "job:wait: the job was waited for or closed")
    jobs[2]:close()
    jobs[2]:close()
    local done = assert(core.uhttp_start(sock, "GET", podman.API .. "/_ping"))
    local deadline = core.now() + 5
    while not done:done() and core.now() < deadline do core.sleep(0.01) end
    assert.is_true(done:done())
    assert.equal(200, (done:wait()))
    for _, n in ipairs({ "u1", "u2", "u3" }) do assert(svc:rm(n)) end
  end)

  it("core.uhttp_start: nil, msg from wait when nothing listens; raises on misuse", function()
    local job = assert(core.uhttp_start(sdir .. "/none.sock", "GET", "/_ping", nil, 5))
    local status, msg = job:wait()
    assert.is_nil(status)
    assert.matches("^cannot request '/_ping' on '.*/none%.sock': ", msg)
    assert.has_error(function() core.uhttp_start(sock, "GET", 3) end,
      'core.uhttp_start: wrong parameter "path": expected string, got number')
    assert.has_error(function() core.uhttp_start(sock, "GET", "/", nil, 0) end,
      'core.uhttp_start: wrong parameter "timeout": expected 0 < seconds <= 86400')
  end)

  it("images.present and pm:image_exists ask the service, every image at once, and the CLI when it fails", function()
    local cli = podman.new { podman = fake, rootful = true, runtime = "" }
    cli:use_service(svc)
    core.write_file(log, "")
    local refs = { "localhost/leakbench-claude:1", "localhost/leakbench-proxy:2",
                   "docker.io/library/debian:bookworm-slim" }
    local t0 = core.now()
    assert.same({ [refs[1]] = true, [refs[3]] = true }, assert(images.present(cli, refs)))
    -- three lookups of 0.2 s each, side by side, and no podman process
    assert.truthy(core.now() - t0 < 0.5, core.now() - t0)
    assert.same({}, argv_log())
    local asked = {}
    for _, e in ipairs(events()) do asked[#asked + 1] = e.ev .. " " .. e.name end
    table.sort(asked)
    assert.same({ "exists " .. refs[3], "exists " .. refs[1], "exists " .. refs[2] }, asked)
    assert.is_true(cli:image_exists(refs[1]))
    assert.is_false(cli:image_exists(refs[2]))
    assert.same({}, argv_log())
    -- a lookup the service cannot answer: the CLI decides
    assert.is_true(cli:image_exists("broken-present"))
    assert.same({ "image exists broken-present" }, argv_log())
    core.write_file(log, "")
    core.write_file(dir .. "/images.txt", "broken:1\n")
    assert.same({ ["broken:1"] = true }, assert(images.present(cli, { "a:1", "broken:1" })))
    assert.same({ "images --format json --filter reference=a:1 --filter reference=broken:1" }, argv_log())
    core.rmtree(dir .. "/images.txt")
  end)

  it("svc:run_all creates the containers side by side, then starts them side by side", function()
    local specs = { spec_of("lb-t-net"), spec_of("lb-t-up"), spec_of("lb-t-icpnet") }
    local t0 = core.now()
    assert(svc:run_all(pm, specs))
    local took = core.now() - t0
    local creates, starts = {}, {}
    for _, e in ipairs(events()) do
      if e.ev == "create" then creates[#creates + 1] = e elseif e.ev == "start" then starts[#starts + 1] = e end
    end
    assert.equal(3, #creates)
    assert.equal(3, #starts)
    local last_create_end, first_create_end, last_create_start = 0, math.huge, 0
    for _, e in ipairs(creates) do
      last_create_end = math.max(last_create_end, e.t1)
      first_create_end = math.min(first_create_end, e.t1)
      last_create_start = math.max(last_create_start, e.t0)
    end
    -- every create began before any ended: all three were in flight together
    assert.truthy(last_create_start < first_create_end)
    -- and no start began before every create had ended
    for _, e in ipairs(starts) do assert.truthy(e.t0 >= last_create_end) end
    -- one create's time and one start's, not three of each
    assert.truthy(took < 0.3 * 2 + 0.05 * 3, took)
    -- a handle on a container it started: its conmon's pid (the fake's)
    local hd = assert(svc:handle(specs[1]))
    assert.equal(h:pid(), hd.pid)
    for _, s in ipairs(specs) do assert(svc:rm(s.name)) end
  end)

  it("svc:run_all: a container that joins another of the wave is created once that one is, "
    .. "and started once that one is", function()
    -- the joiner first: the order of SPECS is not the order of its requests
    local specs = { spec_of("lb-t-claude", { join = "lb-t-net" }), spec_of("lb-t-net"), spec_of("lb-t-up") }
    assert(svc:run_all(pm, specs))
    local ev = {}
    for _, e in ipairs(events()) do
      ev[e.ev .. " " .. e.name] = e
      assert.falsy(e.ev:match("failed"), e.ev .. " " .. e.name)
    end
    local create, start = ev["create lb-t-claude"], ev["start lb-t-claude"]
    assert.truthy(create.t0 >= ev["create lb-t-net"].t1)
    assert.truthy(start.t0 >= ev["start lb-t-net"].t1)
    -- the others, side by side
    assert.truthy(ev["create lb-t-up"].t0 < ev["create lb-t-net"].t1)
    assert.truthy(ev["start lb-t-up"].t0 < ev["start lb-t-net"].t1)
    -- a joinee that fails to create: the joiner is neither created nor
    -- started, and the failure named is the joinee's
    core.write_file(slog, "")
    local ok, err = svc:run_all(pm, { spec_of("lb-t-claude2", { join = "lb-t-bad" }), spec_of("lb-t-bad") })
    assert.is_nil(ok)
    assert.matches("cannot create container 'lb%-t%-bad'", err)
    for _, e in ipairs(events()) do assert.equal("lb-t-bad", e.name) end
    assert.equal(1, #events())
    core.write_file(slog, "")
    assert(svc:rm_waves { { "lb-t-claude", "lb-t-up" }, { "lb-t-net" } })
  end)

  it("svc:run_all(pm, specs, during): DURING runs while the starts are in flight, and what it raises "
    .. "comes once they are answered; not at all when a create failed", function()
    local specs = { spec_of("lb-t-d1"), spec_of("lb-t-d2") }
    local ran
    assert(svc:run_all(pm, specs, function() ran = core.now() end))
    local starts, creates = {}, {}
    for _, e in ipairs(events()) do
      if e.ev == "start" then starts[#starts + 1] = e elseif e.ev == "create" then creates[#creates + 1] = e end
    end
    assert.equal(2, #starts)
    assert.truthy(ran, "DURING was not called")
    -- after every create was answered, before any start was
    for _, e in ipairs(creates) do assert.truthy(ran > e.t1, "DURING ran before a create was answered") end
    for _, e in ipairs(starts) do assert.truthy(ran < e.t1, "DURING ran after a start was answered") end
    assert(svc:rm_waves { { "lb-t-d1", "lb-t-d2" } })
    core.write_file(slog, "")
    -- a raise: the same error object, once both starts have been answered
    local boom = { run_error = true, msg = "no pool" }
    local ok, err = pcall(svc.run_all, svc, pm, specs, function() error(boom) end)
    assert.is_false(ok)
    assert.equal(boom, err)
    local answered = 0
    for _, e in ipairs(events()) do if e.ev == "start" then answered = answered + 1 end end
    assert.equal(2, answered)
    assert(svc:rm_waves { { "lb-t-d1", "lb-t-d2" } })
    core.write_file(slog, "")
    ran = nil
    assert.is_nil((svc:run_all(pm, { spec_of("lb-t-bad") }, function() ran = true end)))
    assert.is_nil(ran)
    core.write_file(slog, "")
  end)

  it("a run whose suite's upstream is not there starts its own, on the run's folder of the pool", function()
    -- a pool folder whose container could not start (runner.lua's
    -- check_pool wrote why): no socket answers
    local pool = sdir .. "/pool-1-x"
    assert(core.mkdir_p(pool .. "/runs", 493))
    core.write_file(pool .. "/failed", "cannot start the suite's upstream container", 384)
    local rundir = sdir .. "/run-fb"
    assert(core.mkdir_p(rundir .. "/records", 493))
    assert(core.mkdir_p(rundir .. "/upstream-logs", 493))
    assert(core.write_file(rundir .. "/script.json", "{}", 420))
    local sb = sandbox.new { dir = rundir, run_id = "0123456789ab-fallback", suite_id = "s", timeout = 30,
      scenario = { name = "x" }, images = { proxy = "img-proxy" } }
    sb.pm, sb.api, sb.pool, sb.started, sb.topo = pm, svc, pool, {}, {}
    sb.ctrdir, sb.records, sb.uplogs = rundir, rundir .. "/records", rundir .. "/upstream-logs"
    sb:stage_pool()
    local t0 = core.now()
    sb:pool_start()
    assert.truthy(core.now() - t0 < 1, "it waited for a pool that said it failed")
    assert.is_true(sb.pool_fell_back)
    -- its own upstream container, on the pool's folders, which the
    -- sidecar mounts already and which are moved into the run folder after
    local created
    for _, e in ipairs(events()) do
      if e.ev == "create" then created = e.name end
    end
    assert.equal("lb-0123456789ab-up", created)
    local spec = sb.topo.up
    local mounts = {}
    for _, m in ipairs(spec.mounts) do mounts[m[2]] = m[1] end
    local p = pool .. "/runs/0123456789ab-fallback"
    assert.equal(p .. "/records", mounts["/records"])
    assert.equal(p .. "/sock", mounts["/sock/up"])
    assert.equal(p .. "/logs", mounts["/logs"])
    assert.equal(p .. "/sock", sb:sock_dir("up"))
    assert.same({ name = "lb-0123456789ab-up", short = "up", log = "proxy.log" }, sb.started[1])
    -- what it recorded reaches the run folder
    core.write_file(p .. "/records/wire.jsonl", "{}\n", 420)
    sb:pool_done()
    assert.equal("{}\n", core.read_file(rundir .. "/records/wire.jsonl"))
    assert.is_nil(core.stat(rundir .. "/upstream-logs"))
    assert(svc:rm("lb-0123456789ab-up"))
  end)

  it("a run holding its sockets whose suite's upstream is not there starts the sidecar after all", function()
    if core.getuid() ~= 0 then return pending("needs root (CAP_SYS_ADMIN)") end
    if not os.execute("command -v nft >/dev/null") then return pending("needs nft (nftables) on the host") end
    local pool = sdir .. "/pool-2-x"
    assert(core.mkdir_p(pool .. "/runs", 493))
    core.write_file(pool .. "/failed", "cannot start the suite's upstream container", 384)
    local rundir = sdir .. "/run-held"
    for _, sub in ipairs({ "records", "upstream-logs", "trap-keep", "egress", "sock" }) do
      assert(core.mkdir_p(rundir .. "/" .. sub, 493))
    end
    assert(core.write_file(rundir .. "/script.json", "{}", 420))
    assert(core.write_file(rundir .. "/trap-keep/secrets.hex", "\n", 384))
    local sb = sandbox.new { dir = rundir, run_id = "0123456789ab-held", suite_id = "s", timeout = 30,
      scenario = { name = "x" }, images = { proxy = "img-proxy" } }
    sb.pm, sb.api, sb.pool, sb.started, sb.topo = pm, svc, pool, {}, {}
    sb.pm.rootful = true
    sb.ctrdir, sb.records, sb.uplogs = rundir, rundir .. "/records", rundir .. "/upstream-logs"
    sb.trapkeep, sb.trapca, sb.egress, sb.sock = rundir .. "/trap-keep", rundir .. "/trap-ca", rundir .. "/egress",
      rundir .. "/sock"
    sb.netns = sdir .. "/ns"
    finally(function()
      if sb.held then sb.held:close() end
      core.netns_drop(sdir .. "/ns")
      sb.pm.rootful = nil
    end)
    assert(core.netns_make(sb.netns))
    sb:stage_pool()
    sb:hold_sockets()
    assert.truthy(sb.held, sb.sidecar_why)
    assert.is_nil(core.stat(rundir .. "/trap-ca"))
    sb:pool_start()
    assert.is_true(sb.pool_fell_back)
    assert.is_nil(sb.held)
    -- the sockets it held are closed, for the sidecar to bind
    assert.is_nil(core.netns_read(sb.netns, { "tcp" }).tcp:match("0100007F:1F90 %x+:%x+ 0A"))
    local created = {}
    for _, e in ipairs(events()) do
      if e.ev == "create" then created[#created + 1] = e.name end
    end
    table.sort(created)
    assert.same({ "lb-0123456789ab-net", "lb-0123456789ab-up" }, created)
    assert.equal("ns:" .. sb.netns, sb.topo.net.network)
    -- its trap writes its CA to the run folder again, as a sidecar's does
    assert.equal(rundir .. "/trap-ca", sb.trapca)
    assert.truthy(core.stat(sb.trapca))
    assert(svc:rm("lb-0123456789ab-net"))
    assert(svc:rm("lb-0123456789ab-up"))
  end)

  it("svc:rm_waves removes a wave side by side, and a joined container only after its joiners", function()
    local specs = { spec_of("lb-t-net"), spec_of("lb-t-up"),
                    spec_of("lb-t-claude", { join = "lb-t-net" }) }
    assert(svc:run_all(pm, specs))
    core.write_file(slog, "")
    local sb = setmetatable({ topo = specs }, sandbox.Sandbox)
    local waves = sb:removal_waves { "lb-t-net", "lb-t-up", "lb-t-claude" }
    assert.same({ { "lb-t-up", "lb-t-claude" }, { "lb-t-net" } }, waves)
    local t0 = core.now()
    assert(svc:rm_waves(waves))
    local took = core.now() - t0
    local ev, killed = {}, {}
    for _, e in ipairs(events()) do
      if e.ev == "kill" then killed[#killed + 1] = e.name else ev[e.name] = e; assert.equal("rm", e.ev) end
    end
    -- every one of them sent SIGKILL first
    table.sort(killed)
    assert.same({ "lb-t-claude", "lb-t-net", "lb-t-up" }, killed)
    -- the first wave's two removals were in flight together ...
    assert.truthy(math.max(ev["lb-t-up"].t0, ev["lb-t-claude"].t0)
      < math.min(ev["lb-t-up"].t1, ev["lb-t-claude"].t1))
    -- ... and the sidecar's began once both had ended
    assert.truthy(ev["lb-t-net"].t0 >= math.max(ev["lb-t-up"].t1, ev["lb-t-claude"].t1))
    -- two removals' time, not three
    assert.truthy(took < 0.4 * 3 - 0.1, took)
  end)

  it("svc:rm_waves(waves, ended): no SIGKILL for a container known to have ended; all are removed", function()
    local specs = { spec_of("lb-t-net"), spec_of("lb-t-claude", { join = "lb-t-net" }) }
    assert(svc:run_all(pm, specs))
    core.write_file(slog, "")
    assert(svc:rm_waves({ { "lb-t-claude" }, { "lb-t-net" } }, { ["lb-t-claude"] = true }))
    local seen = {}
    for _, e in ipairs(events()) do seen[#seen + 1] = e.ev .. " " .. e.name end
    table.sort(seen)
    assert.same({ "kill lb-t-net", "rm lb-t-claude", "rm lb-t-net" }, seen)
    core.write_file(slog, "")
  end)

  it("svc:rm_waves: a joined container in its joiner's wave is refused, whichever thread runs first", function()
    -- the fake's removal is slow, as podman's: the sidecar's request
    -- always arrives while its joiner is still there
    local specs = { spec_of("lb-t-net"), spec_of("lb-t-claude", { join = "lb-t-net" }) }
    assert(svc:run_all(pm, specs))
    local ok, err = svc:rm_waves { { "lb-t-claude", "lb-t-net" } }
    assert.is_nil(ok)
    assert.matches("^podman service: cannot remove container 'lb%-t%-net' %(HTTP 409%): container lb%-t%-net "
      .. "has dependent containers", err)
    -- every wave is tried, whatever failed before it
    assert(svc:rm("lb-t-net"))
    ok, err = svc:rm_waves { { "lb-t-gone" }, { "lb-t-gone-too" } }
    assert.is_true(ok, err)
  end)

  it("defer_rm and take_deferred keep the waves, those that ended, and only the run's own names", function()
    local run_id = "0123456789ab-rest"
    assert(podman.defer_rm(sdir, { { "lb-0123456789ab-up", "lb-0123456789ab-claude" }, { "lb-0123456789ab-net" } },
      { ["lb-0123456789ab-claude"] = true, ["lb-0123456789ab-other"] = true }))
    local text = core.read_file(sdir .. "/" .. podman.DEFERRED_RM)
    assert.equal("lb-0123456789ab-up\nlb-0123456789ab-claude ended\n-\nlb-0123456789ab-net\n-\n", text)
    core.write_file(sdir .. "/" .. podman.DEFERRED_RM, text .. "lb-other000000-up\n$(rm -rf)\n-\nlb-0123456789ab-icp\n"
      .. "lb-other000000-x ended\nlb-0123456789ab-y endedx\nlb-0123456789ab-z  ended\n")
    local waves, ended = podman.take_deferred(sdir, run_id)
    assert.same({ { "lb-0123456789ab-up", "lb-0123456789ab-claude" }, { "lb-0123456789ab-net" },
      { "lb-0123456789ab-icp" } }, waves)
    assert.same({ ["lb-0123456789ab-claude"] = true }, ended)
    assert.is_nil(core.stat(sdir .. "/" .. podman.DEFERRED_RM))
    waves, ended = podman.take_deferred(sdir, run_id)
    assert.same({}, waves)
    assert.same({}, ended)
    assert.same({ { "a", "b", "c" }, { "d", "e" } },
      podman.merge_waves { { { "a", "b" }, { "d" } }, {}, { { "c" }, { "e" } } })
  end)

  it("service_spawn starts the service without waiting; svc:await waits for its answer", function()
    local prog = sdir .. "/svc-podman"
    -- `podman [--conmon PATH] system service --time=0 unix://SOCK`: the fake service on SOCK
    assert(core.write_file(prog, "#!/bin/sh\nfor a; do case $a in unix://*) s=${a#unix://} ;; esac; done\n"
      .. "sleep 0.3\nexec python3 spec/fixtures/podman-service.py \"$s\" " .. sdir .. "/spawned.jsonl\n",
      tonumber("755", 8)))
    local spm = podman.new { podman = prog, runtime = "", rootful = true }
    core.mkdir_p(sdir .. "/sp", 448)
    local t0 = core.now()
    local early = assert(podman.service_spawn(spm, sdir .. "/sp"))
    assert.truthy(core.now() - t0 < 0.2, "spawning waited")
    assert.equal(early, assert(early:await()))
    assert.truthy(core.now() - t0 >= 0.3)
    assert.equal(200, (early:request("GET", "/_ping")))
    early:stop()
    early:stop()
    assert.is_nil(core.stat(sdir .. "/sp/podman.sock"))
  end)

  it("conmon_dir writes lb-conmon in a 0700 folder: a program of its own, libc only, that runs conmon",
    function()
    if os.getenv("LEAKBENCH_PODMAN_CLEANUP") == "1" or not core.conmon_real() then
      pending("no conmon here, or LEAKBENCH_PODMAN_CLEANUP=1")
      return
    end
    local d = assert(podman.conmon_dir(sdir))
    assert.equal(tonumber("700", 8), assert(core.stat(d)).mode % 4096)
    -- in this user's base, named by this process: a killed suite's is swept
    local base = assert(podman.conmon_base())
    assert.equal(("/var/tmp/leakbench-%d"):format(core.getuid()), base)
    assert.matches("^" .. base:gsub("%-", "%%-") .. ("/conmon%%-%d%%-%%w+$"):format(core.getpid()), d)
    local prog = d .. "/lb-conmon"
    local bytes = assert(core.read_file(prog))
    assert.equal("\127ELF", bytes:sub(1, 4))
    assert.are_not.equal(core.read_file(core.exe_path()), bytes)
    -- what it loads: libc, and no library of leakbench's (libcurl, Lua)
    local r = assert(core.run { argv = { "ldd", prog }, timeout = 10 })
    assert.equal(0, r.status, r.stderr)
    local n = 0
    for lib in r.stdout:gmatch("([^%s/]+%.so[%.%d]*)") do
      n = n + 1
      assert.truthy(lib:match("^libc%.so") or lib:match("^linux%-vdso") or lib:match("^ld%-linux"), lib)
    end
    assert.truthy(n >= 2, r.stdout)
    -- it execs the real conmon (its version), the exit command dropped
    r = assert(core.run { argv = { prog, "--exit-command", "/nonexistent", "--exit-delay=1", "--version" },
      timeout = 10 })
    assert.equal(0, r.status, r.stderr)
    assert.matches("^conmon version", r.stdout)
    core.rmtree(d)
  end)

  it("clean.sweep_conmon removes the lb-conmon folders of dead suites, and no other", function()
    local base = sdir .. "/base"
    core.mkdir_p(base, 448)
    local live = ("conmon-%d-cccccc"):format(core.getpid())
    for _, name in ipairs({ "conmon-4194999-aaaaaa", "conmon-4194998-bbbbbb", live, "conmon-x-dddddd", "4194999-run",
      "lb-conmon-eeeeee" }) do
      core.mkdir_p(base .. "/" .. name, 448)
      core.write_file(base .. "/" .. name .. "/lb-conmon", "x", 448)
    end
    local said = {}
    assert.equal(2, clean.sweep_conmon(function(l) said[#said + 1] = l end, base))
    assert.are.same({ "4194999-run", live, "conmon-x-dddddd", "lb-conmon-eeeeee" }, core.listdir(base))
    table.sort(said)
    assert.are.same({
      "removed the podman service's lb-conmon folder " .. base .. "/conmon-4194998-bbbbbb (process 4194998 is gone)",
      "removed the podman service's lb-conmon folder " .. base .. "/conmon-4194999-aaaaaa (process 4194999 is gone)",
    }, said)
  end)

  it("clean.sweep_seccomp removes the half-written profiles of dead processes, and no other file", function()
    local base = sdir .. "/sbase"
    core.mkdir_p(base, 448)
    local hash = ("%016x"):format(0xabc)
    local live = ("seccomp-%s.json.%d.tmp"):format(hash, core.getpid())
    local names = { "seccomp-" .. hash .. ".json", ("seccomp-%s.json.4194999.tmp"):format(hash), live,
      "seccomp-" .. hash .. ".json.x.tmp", "seccomp-" .. hash .. ".json.4194999.tmp.keep",
      "other-" .. hash .. ".json.4194998.tmp", ("seccomp-%s.json.4194998.tmp"):format(("%016x"):format(7)) }
    for _, name in ipairs(names) do core.write_file(base .. "/" .. name, "{}", 384) end
    local said = {}
    assert.equal(2, clean.sweep_seccomp(function(l) said[#said + 1] = l end, base))
    local left = core.listdir(base)
    table.sort(left)
    local want = { names[1], live, names[4], names[5], names[6] }
    table.sort(want)
    assert.are.same(want, left)
    table.sort(said)
    assert.are.same({
      ("removed a half-written seccomp profile %s/%s (process 4194998 is gone)"):format(base, names[7]),
      ("removed a half-written seccomp profile %s/%s (process 4194999 is gone)"):format(base, names[2]),
    }, said)
    -- nothing to sweep where there is no folder
    assert.equal(0, clean.sweep_seccomp(nil, sdir .. "/none"))
  end)

  it("svc:run_all says which create failed, and starts nothing then", function()
    local ok, err = svc:run_all(pm, { spec_of("lb-t-fine"), spec_of("lb-t-bad") })
    assert.is_nil(ok)
    assert.equal("podman service: cannot create container 'lb-t-bad' (HTTP 500): cannot create lb-t-bad", err)
    for _, e in ipairs(events()) do assert.not_equal("start", e.ev) end
    assert(svc:rm("lb-t-fine"))
  end)
end)

-- The seccomp profile (podman.seccomp_profile): podman's own, with the
-- native system-call interface alone in its archMap, every other byte
-- as it was.
describe("the seccomp profile", function()
  local cjson = require "cjson"
  local sdir
  before_each(function() sdir = core.tmpdir("lb-seccomp-spec-", "/tmp") end)
  after_each(function() core.rmtree(sdir) end)

  local ARCHES = { "SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32", "SCMP_ARCH_AARCH64", "SCMP_ARCH_ARM",
    "SCMP_ARCH_RISCV64", "SCMP_ARCH_S390X" }
  -- podman's kinds of rule; the socket ones are replaced
  local KEPT = { '{ "names": ["read", "keyctl", "write"], "action": "SCMP_ACT_ALLOW", "args": [], '
    .. '"comment": "] [ \\" archMap? {no}", "includes": {}, "excludes": {} }',
    '{ "names": ["personality"], "action": "SCMP_ACT_ALLOW", "args": [ { "index": 0, "value": 0, '
    .. '"op": "SCMP_CMP_EQ" } ], "includes": { "arches": ["x86", "s390x"] }, "excludes": {} }' }
  local SOCKET = { '{ "names": ["socket"], "action": "SCMP_ACT_ALLOW", "args": [ { "index": 0, "value": 16, '
    .. '"op": "SCMP_CMP_NE" } ], "comment": "", "includes": {}, "excludes": {} }',
    '{"names":["socket"],"action":"SCMP_ACT_ALLOW","args":[],"includes":{"caps":["CAP_AUDIT_WRITE"]}}' }
  -- a rule of calls no rule may let through (podman.DENIED_CALLS) goes
  local DENIED = '{ "names": ["add_key", "request_key"], "action": "SCMP_ACT_ALLOW", "args": [] }'
  local RULES = '"syscalls": [ ' .. KEPT[1] .. ", " .. SOCKET[1] .. ",\n " .. KEPT[2] .. ", " .. DENIED .. ", "
    .. SOCKET[2] .. " ]"
  -- KEPT[1] as narrowed: keyctl taken out of its names
  local KEPT1 = KEPT[1]:gsub('"keyctl", ', "")

  -- A profile in podman's format, drawn from RNG: its archMap's entries,
  -- sub-architectures, spacing and place among the other keys.
  local function profile(rng, native)
    local entries, has = {}, false
    for _ = 1, rng(1, 4) do
      local a = ARCHES[rng(1, #ARCHES)]
      has = has or a == native
      local subs = {}
      for _ = 1, rng(0, 2) do subs[#subs + 1] = '"' .. ARCHES[rng(1, #ARCHES)] .. '"' end
      local sp = (" "):rep(rng(0, 3))
      entries[#entries + 1] = ('{%s"architecture":%s"%s",%s"subArchitectures": [%s]}'):format(sp, sp, a,
        ("\n"):rep(rng(0, 1)), table.concat(subs, ", "))
    end
    if rng(0, 1) == 1 or not has then table.insert(entries, rng(1, #entries + 1), '{"architecture": "' .. native
      .. '", "subArchitectures": ["SCMP_ARCH_X86"]}') end
    local keys = { '"defaultAction": "SCMP_ACT_ERRNO"', '"defaultErrnoRet": 38',
      '"archMap":' .. (" "):rep(rng(0, 2)) .. "[" .. table.concat(entries, "," .. ("\n  "):rep(rng(0, 1))) .. "]",
      RULES }
    for i = #keys, 2, -1 do
      local j = rng(1, i)
      keys[i], keys[j] = keys[j], keys[i]
    end
    return "{\n  " .. table.concat(keys, ",\n  ") .. "\n}\n"
  end

  it("keeps the native interface alone and every other byte, on generated profiles", function()
    local seed = os.time()
    math.randomseed(seed)
    for i = 1, 300 do
      local native = ARCHES[math.random(1, #ARCHES)]
      local text = profile(math.random, native)
      local out, why = podman.narrow_seccomp(text, native)
      local where = ("seed %d, case %d:\n%s"):format(seed, i, text)
      assert.is_string(out, tostring(why) .. " " .. where)
      local doc = cjson.decode(out)
      assert.same({ { architecture = native, subArchitectures = {} } }, doc.archMap, where)
      assert.equal("SCMP_ACT_ERRNO", doc.defaultAction, where)
      -- the rules: podman's but socket's, in their order and byte for
      -- byte, then leakbench's socket rules
      local want = { cjson.decode(KEPT1), cjson.decode(KEPT[2]) }
      for _, r in ipairs(podman.SOCKET_RULES) do want[#want + 1] = cjson.decode(r) end
      assert.same(want, doc.syscalls, where)
      local k1, k2 = out:find(KEPT1, 1, true), out:find(KEPT[2], 1, true)
      assert.truthy(k1 and k2 and k1 < k2, where)
      for _, r in ipairs(SOCKET) do assert.is_nil(out:find(r, 1, true), where) end
      for _, name in ipairs({ "keyctl", "add_key", "request_key" }) do
        assert.is_nil(out:find('"' .. name .. '"', 1, true), where)
      end
      -- what is outside the two lists, byte for byte
      -- (the rules' strings hold brackets: skipped over, as JSON's)
      local function cut(t, key)
        local at = t:find('"' .. key .. '"', 1, true)
        local j, depth = t:find("[", at, true), 0
        repeat
          local c = t:sub(j, j)
          if c == '"' then
            j = j + 1
            while t:sub(j, j) ~= '"' do j = j + (t:sub(j, j) == "\\" and 2 or 1) end
          elseif c == "[" then
            depth = depth + 1
          elseif c == "]" then
            depth = depth - 1
          end
          j = j + 1
        until depth == 0
        return t:sub(1, at - 1) .. key .. t:sub(j)
      end
      local function outside(t) return cut(cut(t, "archMap"), "syscalls") end
      assert.equal(outside(text), outside(out), where)
      assert.truthy(out:find('"subArchitectures":[]}]', 1, true), where)
    end
  end)

  it("is refused when it cannot be narrowed for sure", function()
    local ok = '{"archMap": [{"architecture": "SCMP_ARCH_X86_64", "subArchitectures": []}], ' .. RULES .. "}"
    local shared = ok:gsub('%["socket"%], "action": "SCMP_ACT_ALLOW", "args": %[ {', '["socket", "bind"], '
      .. '"action": "SCMP_ACT_ALLOW", "args": [ {')
    assert.is_string((podman.narrow_seccomp(ok, "SCMP_ARCH_X86_64")))
    local cases = {
      { "SCMP_ARCH_AARCH64", ok, "lacks SCMP_ARCH_AARCH64" },
      { "SCMP_ARCH_X86_64", "{", "not a profile" },
      { "SCMP_ARCH_X86_64", '{"syscalls": []}', "not a profile" },
      { "SCMP_ARCH_X86_64", '{"archMap": {"architecture": "SCMP_ARCH_X86_64"}, "syscalls": []}', "lacks" },
      -- the key twice: which one podman reads is not sure
      { "SCMP_ARCH_X86_64", ok:gsub("^{", '{"archMap": [{"architecture": "SCMP_ARCH_X86"}], '), "twice" },
      { "SCMP_ARCH_X86_64", ok:gsub("^{", '{"syscalls": [], '), "names syscalls twice" },
      -- socket in a rule with other calls: leakbench's rules would not be its only ones
      { "SCMP_ARCH_X86_64", shared, "socket with other calls" },
      { "SCMP_ARCH_X86_64", ok:gsub('"syscalls": %[ {', '"syscalls": [ 7, {'), "not a rule" },
    }
    for _, c in ipairs(cases) do
      local out, why = podman.narrow_seccomp(c[2], c[1])
      assert.is_nil(out, c[2])
      assert.matches(c[3], why, 1, true)
    end
  end)

  it("is written once, to a folder of this user's alone, and read from there after", function()
    local src = sdir .. "/podman.json"
    local text = profile(function(a) return a end, "SCMP_ARCH_X86_64")
    assert(core.write_file(src, text))
    local base = sdir .. "/base"
    core.mkdir_p(base, 448)
    local path = assert(podman.seccomp_profile({ sdir .. "/missing.json", src }, base, "SCMP_ARCH_X86_64"))
    assert.matches("^" .. base:gsub("%p", "%%%0") .. "/seccomp%-%x+%.json$", path)
    local st = core.stat(path)
    assert.equal(384, st.mode & 511)
    assert.equal(podman.narrow_seccomp(text, "SCMP_ARCH_X86_64"), core.read_file(path))
    assert.equal(path, podman.seccomp_profile({ src }, base, "SCMP_ARCH_X86_64"))
    assert.equal(st.ino, core.stat(path).ino)
    -- bytes that are not the profile's, at its name: written over
    assert(core.write_file(path, '{"defaultAction": "SCMP_ACT_ALLOW"}'))
    assert.equal(path, podman.seccomp_profile({ src }, base, "SCMP_ARCH_X86_64"))
    assert.equal(podman.narrow_seccomp(text, "SCMP_ARCH_X86_64"), core.read_file(path))
    local files = core.listdir(base)
    assert.equal(1, #files, table.concat(files, " "))
    -- nothing to narrow: podman's default, and why
    local none, why = podman.seccomp_profile({ sdir .. "/missing.json" }, base, "SCMP_ARCH_X86_64")
    assert.is_nil(none)
    assert.matches("no seccomp profile of podman's at " .. sdir .. "/missing.json", why, 1, true)
    none, why = podman.seccomp_profile({ src }, base, "SCMP_ARCH_S390X")
    assert.is_nil(none)
    assert.matches("lacks SCMP_ARCH_S390X", why, 1, true)
    -- told to keep podman's default (tests; LEAKBENCH_SECCOMP=podman)
    assert.is_nil(podman.new({ podman = fake, seccomp = false }):seccomp())
    assert.equal("/s.json", podman.new({ podman = fake, seccomp = "/s.json" }):seccomp())
  end)

  it("hands a run the runner's profile only when it is one it wrote", function()
    local src = sdir .. "/podman.json"
    -- a profile this machine would not make: its runs would make their own
    local text = profile(function(a) return a end, "SCMP_ARCH_X86_64"):gsub("SCMP_ACT_ERRNO", "SCMP_ACT_KILL", 1)
    assert(core.write_file(src, text))
    local base = sdir .. "/base"
    core.mkdir_p(base, 448)
    local path = assert(podman.seccomp_profile({ src }, base, "SCMP_ARCH_X86_64"))
    assert.equal(path, podman.made_profile(path, base))
    -- elsewhere, another name, changed bytes, nothing: not one it wrote
    local other = sdir .. "/" .. path:match("[^/]+$")
    assert(core.write_file(other, core.read_file(path)))
    assert.is_nil(podman.made_profile(other, base))
    local short = path:gsub("(%x)%.json$", ".json")
    assert(core.write_file(short, core.read_file(path)))
    assert.is_nil(podman.made_profile(short, base))
    local changed = core.read_file(path):gsub("SCMP_ACT_KILL", "SCMP_ACT_ALLOW", 1)
    assert(core.write_file(path, changed))
    assert.is_nil(podman.made_profile(path, base))
    assert(core.write_file(path, podman.narrow_seccomp(text, "SCMP_ARCH_X86_64")))
    assert.is_nil(podman.made_profile(nil, base))
    assert.is_nil(podman.made_profile(base .. "/../base/" .. path:match("[^/]+$"), base))
    -- a run's process (a fresh one, in this user's own folder): the
    -- runner's profile from the environment, else one of its own
    local bin = assert(os.getenv("LEAKBENCH"), "LEAKBENCH is not set")
    local real = assert(podman.conmon_base())
    local mine = assert(podman.seccomp_profile({ src }, real, podman.native_arch()))
    local script = sdir .. "/sees.lua"
    assert(core.write_file(script, 'print(((require "leakbench.podman").new():seccomp()))'))
    local function run_sees(env)
      local p = assert(io.popen(("%s %s lua %s 2>&1"):format(env, bin, script)))
      local out = p:read("a")
      p:close()
      return (out:gsub("%s+$", ""))
    end
    local ok, err = pcall(function()
      assert.equal(mine, run_sees(podman.SECCOMP_PATH_ENV .. "=" .. mine))
      local own = run_sees(podman.SECCOMP_PATH_ENV .. "=")
      assert.matches("^" .. real:gsub("%p", "%%%0") .. "/seccomp%-%x+%.json$", own)
      assert.not_equal(mine, own)
      assert.equal(own, run_sees(podman.SECCOMP_PATH_ENV .. "=" .. other))
      assert.equal("nil", run_sees(podman.SECCOMP_ENV .. "=podman " .. podman.SECCOMP_PATH_ENV .. "=" .. mine))
    end)
    os.remove(mine)
    assert(ok, err)
  end)

  it("names the interface from the ELF header", function()
    local function elf(data_byte, machine_le)
      local h = "\127ELF\2" .. string.char(data_byte) .. ("\0"):rep(12)
      local lo, hi = machine_le & 255, machine_le >> 8
      h = h .. (data_byte == 2 and string.char(hi, lo) or string.char(lo, hi))
      assert(core.write_file(sdir .. "/elf", h .. ("\0"):rep(40)))
      return podman.native_arch(sdir .. "/elf")
    end
    assert.equal("SCMP_ARCH_X86_64", elf(1, 62))
    assert.equal("SCMP_ARCH_AARCH64", elf(1, 183))
    assert.equal("SCMP_ARCH_AARCH64", elf(2, 183))
    assert.is_nil(elf(1, 3)) -- i386: not one it knows
    assert(core.write_file(sdir .. "/elf", "#!/bin/sh\nexit 0\n"))
    assert.is_nil(podman.native_arch(sdir .. "/elf"))
    assert.is_nil(podman.native_arch(sdir .. "/none"))
    assert.is_string(podman.native_arch())
  end)

  it("narrows this machine's own profile of podman's, when there is one", function()
    for _, p in ipairs(podman.SECCOMP_SOURCES) do
      local text = core.read_file(p)
      if text then
        local arch = assert(podman.native_arch())
        local out = assert(podman.narrow_seccomp(text, arch))
        local a, b = cjson.decode(text), cjson.decode(out)
        local others = {}
        for _, r in ipairs(a.syscalls) do
          local socket, names = false, {}
          for _, n in ipairs(r.names) do
            socket = socket or n == "socket"
            if not podman.DENIED_CALLS[n] then names[#names + 1] = n end
          end
          r.names = names
          if not socket and #names > 0 then others[#others + 1] = r end
        end
        for _, r in ipairs(podman.SOCKET_RULES) do others[#others + 1] = cjson.decode(r) end
        assert.same(others, b.syscalls)
        assert.same({ { architecture = arch, subArchitectures = {} } }, b.archMap)
        return
      end
    end
    pending("no seccomp profile of podman's on this machine")
  end)
end)
