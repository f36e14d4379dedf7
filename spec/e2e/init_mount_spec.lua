-- What the claude container runs lb-init from (/opt/leakbench) does not
-- depend on podman's image mounts: on podman 4.3.1 every cleanup or
-- removal of a container already cleaned up takes one more off an image's
-- shared mount count, and at zero the image's merged dir is unmounted and
-- removed under whichever container is about to mount it ("error mounting
-- ... to rootfs at /opt/leakbench: no such file or directory": 4 of 559
-- runs with the podman service on). Here the servers image is unmounted
-- all the while a run's claude container starts, again and again; with an
-- image mount of it, 7 of 8 starts failed so. Each start also checks what
-- the agent finds there: root's, read-only, not the agent's to change.
-- Rootful, and rootless (the user .ci/rootless-setup makes).
package.path = "spec/e2e/support/?.lua;" .. package.path
local sh = require "sh"
local pq = require "podman"
local cjson = require "cjson"
local must, read = sh.must, sh.read

local STARTS = 8

local function results(out)
  return cjson.decode(must(read(out .. "/results.json"), "no results.json in " .. out))
end

local function all_ok(stdout)
  local lines = {}
  for line in stdout:gmatch("[^\n]+") do lines[#lines + 1] = line end
  assert.are.equal(STARTS, #lines, stdout)
  for i, line in ipairs(lines) do assert.are.equal("ok", line, "start " .. i .. ": " .. line) end
end

describe("lb-init's files in the claude container", function()
  local dir = sh.tmpdir()
  local imgs
  teardown(function() sh.rmtree(dir) end)

  setup(function()
    local out = dir .. "/images"
    local r = sh.leakbench({ "run", "spec/fixtures/e2e/three-turns.lua", "--out", out, "--jobs", "1" })
    local doc = results(out)
    assert.are.equal("pass", doc.runs[1].verdict, tostring(doc.runs[1].reason) .. "\n" .. r.stderr)
    imgs = doc.images
  end)

  it("stay there, root's and read-only, while the servers image is unmounted under it", function()
    local scratch = dir .. "/attack"
    os.execute("mkdir -p " .. sh.quote(scratch))
    local r = sh.leakbench({ "lua", "spec/e2e/support/init_mount.lua", scratch, imgs.claude, imgs.proxy,
      tostring(STARTS) })
    assert.are.equal(0, r.status, r.stderr)
    all_ok(r.stdout)
  end)

  it("rootless: the same, and a run through the service", function()
    local rdir, as_user = pq.rootless_tree("lbrootless", { imgs.claude, imgs.proxy }, "lb-rootless-init", "attack")
    if not rdir then pending(as_user) return end
    finally(function() sh.rmtree(rdir) end)
    local r = as_user("LEAKBENCH_PODMAN_SERVICE=1 ./leakbench run spec/fixtures/e2e/three-turns.lua --out "
      .. sh.quote(rdir .. "/out"))
    local doc = results(rdir .. "/out")
    assert.are.equal("pass", doc.runs[1].verdict, tostring(doc.runs[1].reason) .. "\n" .. r.stderr)
    local c = as_user("./leakbench lua spec/e2e/support/init_mount.lua " .. sh.quote(rdir .. "/attack") .. " "
      .. sh.quote(imgs.claude) .. " " .. sh.quote(imgs.proxy) .. " " .. STARTS)
    assert.are.equal(0, c.status, c.stderr)
    all_ok(c.stdout)
  end)
end)
