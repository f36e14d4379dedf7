-- images.init_copy against a fake podman (a shell script that records its
-- argv and, as the container would, writes lb-init's files into the
-- folder mounted at /out): how the files are copied (root in a container
-- run as the claude container is: rootless, keep-id), once per tag, into
-- a base of ours alone, and what a failed or damaged copy says. The copy
-- bound into a real run's claude container: spec/e2e/init_mount_spec.lua.
local core = require "leakbench.core"
local podman = require "leakbench.podman"
local images = require "leakbench.images"

local dir, log

local FAKE = [[#!/bin/sh
printf '%%s\n' "$*" >> %s/argv.log
case "$*" in *broken-image*) echo "Error: runc: boom" >&2; exit 125 ;; esac
out=
prev=
for a; do
  if [ "$prev" = -v ]; then out=${a%%:/out}; fi
  prev=$a
done
[ -n "$out" ] || exit 0
mkdir -p "$out/files/usr/local/bin" "$out/files/usr/local/lib/leakbench" "$out/files/opt"
echo init > "$out/files/usr/local/bin/lb-init"
case "$*" in *no-nodump*) ;; *) echo nodump > "$out/files/usr/local/lib/leakbench/lb-nodump.so" ;; esac
ln -s /opt/leakbench "$out/files/opt/leakbench"
exit 0
]]

local function argv_log()
  local lines = {}
  for l in (core.read_file(log) or ""):gmatch("[^\n]+") do lines[#lines + 1] = l end
  return lines
end

local function fresh_base(name)
  local base = dir .. "/" .. name
  assert(core.mkdir_p(base, 448))
  return base
end

setup(function()
  dir = assert(core.tmpdir("lb-init-copy-spec-"))
  log = dir .. "/argv.log"
  assert(core.write_file(dir .. "/podman", FAKE:format(dir), tonumber("755", 8)))
end)

teardown(function() core.rmtree(dir) end)

before_each(function() os.remove(log) end)

describe("images.init_copy", function()
  it("copies lb-init's files once per tag, as root in a container of the tag, rootful", function()
    local pm = podman.new { podman = dir .. "/podman", rootful = true, runtime = "" }
    local base = fresh_base("rootful")
    local got = assert(images.init_copy(pm, "localhost/leakbench-proxy:abc", base))
    assert.equal(base .. "/init/localhost_leakbench-proxy_abc/files", got)
    assert.equal("init\n", core.read_file(got .. "/usr/local/bin/lb-init"))
    assert.equal("nodump\n", core.read_file(got .. "/usr/local/lib/leakbench/lb-nodump.so"))
    local calls = argv_log()
    assert.equal(1, #calls)
    local a = calls[1]
    for _, want in ipairs({ "run --rm --network none --cap-drop all --cap-add DAC_OVERRIDE ", " --user 0:0 -v ",
                            ":/out ", " --label leakbench=1 ",
                            " --entrypoint /bin/sh localhost/leakbench-proxy:abc -c " }) do
      assert.truthy(a:find(want, 1, true), want .. " not in: " .. a)
    end
    assert.is_nil(a:find("keep-id", 1, true))
    -- the same tag again: no podman at all, and no extraction left behind
    os.remove(log)
    assert.equal(got, (images.init_copy(pm, "localhost/leakbench-proxy:abc", base)))
    assert.same({}, argv_log())
    assert.same({ "localhost_leakbench-proxy_abc" }, core.listdir(base .. "/init"))
  end)

  it("rootless: in the claude container's user namespace (keep-id), so that there the files are root's", function()
    local pm = podman.new { podman = dir .. "/podman", rootful = false, runtime = "" }
    assert(images.init_copy(pm, "localhost/leakbench-proxy:def", fresh_base("rootless")))
    local a = argv_log()[1]
    assert.truthy(a:find(" --userns=keep-id:uid=1000,gid=1000 ", 1, true), a)
    assert.truthy(a:find(" --user 0:0 ", 1, true), a)
  end)

  it("refuses a base that is not ours alone, naming it, before any podman", function()
    local pm = podman.new { podman = dir .. "/podman", rootful = true, runtime = "" }
    local base = fresh_base("shared")
    assert(core.chmod(base, tonumber("755", 8)))
    local got, err = images.init_copy(pm, "localhost/leakbench-proxy:abc", base)
    assert.is_nil(got)
    assert.equal("cannot copy lb-init out of image 'localhost/leakbench-proxy:abc': '" .. base
      .. "' is not a directory of ours alone (mode 0700)", err)
    assert.same({}, argv_log())
  end)

  it("says why a copy failed, and leaves no half copy", function()
    local pm = podman.new { podman = dir .. "/podman", rootful = true, runtime = "" }
    local base = fresh_base("broken")
    local got, err = images.init_copy(pm, "localhost/broken-image:1", base)
    assert.is_nil(got)
    assert.matches("^cannot copy lb%-init out of image 'localhost/broken%-image:1': .*boom", err)
    assert.same({}, core.listdir(base .. "/init"))
  end)

  it("puts no copy in place from an image that lacks a file", function()
    local pm = podman.new { podman = dir .. "/podman", rootful = true, runtime = "" }
    local base = fresh_base("lacking")
    local got, err = images.init_copy(pm, "localhost/no-nodump:1", base)
    assert.is_nil(got)
    assert.equal("cannot copy lb-init out of image 'localhost/no-nodump:1': the image has no "
      .. "/usr/local/lib/leakbench/lb-nodump.so", err)
    assert.same({}, core.listdir(base .. "/init"))
  end)

  it("names the folder of a copy that lacks a file", function()
    local pm = podman.new { podman = dir .. "/podman", rootful = true, runtime = "" }
    local base = fresh_base("damaged")
    local got = assert(images.init_copy(pm, "localhost/leakbench-proxy:abc", base))
    assert(os.remove(got .. "/usr/local/lib/leakbench/lb-nodump.so"))
    local again, err = images.init_copy(pm, "localhost/leakbench-proxy:abc", base)
    assert.is_nil(again)
    assert.equal("lb-init's copy in '" .. base .. "/init/localhost_leakbench-proxy_abc' lacks "
      .. "usr/local/lib/leakbench/lb-nodump.so: remove the folder, and the next run copies it again", err)
  end)
end)
