-- A bind mount's source is resolved on the host, as root in rootful mode:
-- a link there mounts whatever it names. So no container's mount source
-- may lie inside a folder that a container writes (a read-write mount),
-- where a process of that container could have left a link in its place.
-- The egress trap's CA is the case that was there: lb-trap writes
-- trap-ca/, and the claude container mounted trap-ca/bundle.pem as its
-- system CAs. The harness now copies it (Sandbox:take_trap_ca, read
-- beneath: no link followed) into ca/, which only it writes.
local sandbox = require "leakbench.sandbox"
local core = require "leakbench.core"
local lb = require "leakbench"

local HOST_SECRET = "HOST-ONLY-7be21c"

-- A run's sandbox with its folders named as stage() names them, without
-- staging (no podman): enough for its topology and its CA copy.
local function new_run(top, subject)
  local scenario = { name = "ca", prompt = "hi", files = {}, env = {}, settings = {},
                     secrets = {}, setup = {}, model = lb.script { lb.say("ok") },
                     home = { [".netrc"] = "machine x" } }
  local sb = sandbox.new { scenario = scenario, subject = subject, dir = top .. "/run",
                           run_id = "0123456789ab-run", images = { proxy = "p", claude = "c", subject = "s" },
                           model = "m", timeout = 60 }
  for k, v in pairs { project = "project", config = "claude-config", subject_dir = "subject",
                      gate = "gate", etc = "etc", trapca = "trap-ca", cadir = "ca", init_dir = "init",
                      ctrdir = "containers", records = "records", sock = "sock",
                      uplogs = "upstream-logs", egress = "egress", trapkeep = "trap-keep",
                      home_dir = "home" } do
    sb[k] = sb.dir .. "/" .. v
    assert(core.mkdir_p(sb[k], 493))
  end
  return sb
end

local INTERCEPTOR = { name = "icp", interceptor = { port = 9999, env = {}, upstream_env = "UPSTREAM_URL",
                                                      argv = { "icp" }, ready = "listening" } }

describe("the mounts of a run's containers", function()
  local top
  before_each(function() top = assert(core.tmpdir("lb-trapca")) end)
  after_each(function() core.rmtree(top) end)

  for what, subject in pairs { ["without an interceptor"] = false, ["with an interceptor"] = INTERCEPTOR } do
    it("never take a source from inside a folder a container writes, " .. what, function()
      local sb = new_run(top, subject or nil)
      local topo = sb:topology()
      local written = {}
      for _, spec in ipairs(topo) do
        for _, m in ipairs(spec.mounts or {}) do
          if not m.ro then written[#written + 1] = { spec.role, m[1] } end
        end
      end
      assert.is_true(#written >= 4)
      local checked = 0
      for _, spec in ipairs(topo) do
        for _, m in ipairs(spec.mounts or {}) do
          for _, w in ipairs(written) do
            local inside = m[1]:sub(1, #w[2] + 1) == w[2] .. "/"
            assert.is_false(inside, ("%s mounts %s, inside %s, which %s writes"):format(spec.role, m[1], w[2], w[1]))
          end
          checked = checked + 1
        end
      end
      assert.is_true(checked >= 15)
    end)
  end
end)

describe("the trap's CA, copied for the claude container", function()
  local top, host_file
  before_each(function()
    top = assert(core.tmpdir("lb-trapca"))
    host_file = top .. "/host-file"
    assert(core.write_file(host_file, HOST_SECRET .. "\n", 384))
  end)
  after_each(function() core.rmtree(top) end)

  it("is what the trap wrote, byte for byte, in the harness's own folder", function()
    local sb = new_run(top)
    assert(core.write_file(sb.trapca .. "/ca.pem", "CA\n", 420))
    assert(core.write_file(sb.trapca .. "/bundle.pem", "SYSTEM\nCA\n", 420))
    sb:take_trap_ca()
    assert.are.equal("CA\n", core.read_file(sb.cadir .. "/ca.pem"))
    assert.are.equal("SYSTEM\nCA\n", core.read_file(sb.cadir .. "/bundle.pem"))
  end)

  local PLANTS = {
    ["a link to a host file"] = function(path) assert(core.symlink(host_file, path)) end,
    ["a relative link out"] = function(path) assert(core.symlink("../../host-file", path)) end,
    ["a link to a host folder"] = function(path) assert(core.symlink(top, path)) end,
    ["a folder"] = function(path) assert(core.mkdir_p(path, 493)) end,
    ["missing"] = function() end,
    ["too large"] = function(path)
      assert(core.write_file(path, ("x"):rep(sandbox.CA_FILE_CAP + 1), 420))
    end,
  }
  for _, name in ipairs { "ca.pem", "bundle.pem" } do
    for what, plant in pairs(PLANTS) do
      it(name .. " as " .. what .. " fails the run, and nothing of the host is copied", function()
        local sb = new_run(top)
        for _, other in ipairs { "ca.pem", "bundle.pem" } do
          if other ~= name then assert(core.write_file(sb.trapca .. "/" .. other, "CA\n", 420)) end
        end
        plant(sb.trapca .. "/" .. name)
        local ok, err = pcall(sb.take_trap_ca, sb)
        assert.is_false(ok)
        assert.is_true(type(err) == "table" and err.run_error, tostring(err))
        assert.is_truthy(err.msg:find("egress trap's " .. name, 1, true), err.msg)
        assert.is_falsy(err.msg:find(HOST_SECRET, 1, true))
        local copy = core.read_file(sb.cadir .. "/" .. name) or ""
        assert.is_falsy(copy:find(HOST_SECRET, 1, true))
      end)
    end
  end
end)
