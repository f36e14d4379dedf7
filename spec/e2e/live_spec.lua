-- --live against an HTTPS upstream made at test time: the scripted model on
-- the host behind a TLS terminator (socat) with a test CA, and a real-looking
-- API key in BENCH_AUTH. The upstream must receive the real key; the claude
-- container (env, files, podman inspect) and every artifact hold only the
-- dummy; the credential reaches the proxy on its standard input and is in
-- no file, no env and no podman inspect of the upstream either.
package.path = "spec/e2e/support/?.lua;" .. package.path
local sh = require "sh"
local pq = require "podman"
local cjson = require "cjson"
local read, must = sh.read, sh.must

describe("leakbench run --live", function()
  local dir = os.tmpname()
  os.remove(dir)
  assert(os.execute("mkdir -p " .. dir))
  local pids = {}

  teardown(function()
    for _, p in ipairs(pids) do os.execute("kill " .. p .. " 2>/dev/null") end
    sh.rmtree(dir)
  end)

  local function background(argv, name)
    local q = {}
    for i, a in ipairs(argv) do q[i] = sh.quote(a) end
    os.execute("sh -c " .. sh.quote(table.concat(q, " ") .. " >" .. dir .. "/" .. name .. ".out 2>"
      .. dir .. "/" .. name .. ".err & echo $! >" .. dir .. "/" .. name .. ".pid"))
    local pid = sh.retry(5, function() return (read(dir .. "/" .. name .. ".pid") or ""):match("%d+") end)
    pids[#pids + 1] = pid
    return pid
  end

  it("swaps in the real key at the proxy and keeps it out of the sandbox and the artifacts", function()
    local real = "sk-ant-api03-REALTESTKEY-" .. tostring(os.time()) .. "-" .. math.random(100000, 999999)
    local host = sh.run({ "hostname", "-I" }).stdout:match("[%d.]+")
    assert.truthy(host)
    -- A test CA and a server certificate for the host's address.
    local ssl = function(args)
      local r = sh.run(args, { cwd = dir })
      assert.are.equal(0, r.status, r.stderr)
    end
    ssl({ "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=leakbench test CA",
      "-keyout", "ca.key", "-out", "ca.pem", "-addext", "basicConstraints=critical,CA:TRUE",
      "-addext", "keyUsage=critical,keyCertSign" })
    ssl({ "openssl", "req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=" .. host, "-keyout", "srv.key",
      "-out", "srv.csr" })
    local ext = assert(io.open(dir .. "/ext.cnf", "w"))
    ext:write("subjectAltName=IP:" .. host .. "\nextendedKeyUsage=serverAuth\n")
    ext:close()
    ssl({ "openssl", "x509", "-req", "-in", "srv.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
      "-days", "1", "-out", "srv.pem", "-extfile", "ext.cnf" })
    os.execute("cat " .. dir .. "/srv.pem " .. dir .. "/srv.key > " .. dir .. "/srv.both")
    -- The scripted model on loopback, TLS in front of it on the host's address.
    local mport = tostring(21000 + math.random(0, 999))
    local tport = tostring(22000 + math.random(0, 999))
    background({ os.getenv("LB_MODEL"), "--script", "spec/fixtures/e2e/live-script.json",
      "--listen", "127.0.0.1:" .. mport }, "model")
    assert.truthy(sh.retry(10, function() return (read(dir .. "/model.out") or ""):find("listening") end))
    background({ "socat", "-v", "OPENSSL-LISTEN:" .. tport .. ",bind=" .. host
      .. ",reuseaddr,fork,verify=0,cert=" .. dir .. "/srv.both",
      "TCP:127.0.0.1:" .. mport }, "tls")
    -- The run; while Claude Code sleeps in its Bash call, inspect its container.
    local out = dir .. "/res"
    local run_pid = background({ "env", "BENCH_AUTH=apikey:" .. real,
      "LEAKBENCH_UPSTREAM=https://" .. host .. ":" .. tport, "LEAKBENCH_UPSTREAM_CA=" .. dir .. "/ca.pem",
      os.getenv("LEAKBENCH"), "run", "spec/fixtures/e2e/live.lua", "--live", "--out", out }, "run")
    local inspect = sh.retry(120, function()
      local names = pq.running(out)
      local claude = names:match("(lb%-[%w-]+%-claude)")
      if not claude then return nil end
      local r = sh.run({ "podman", "inspect", claude })
      return r.status == 0 and r.stdout or nil
    end)
    assert.truthy(inspect, "never saw the claude container")
    assert.is_nil(inspect:find(real, 1, true))
    assert.truthy(inspect:find("sk-ant-bench-dummy-key", 1, true))
    -- The proxy got it on its standard input: it is not in the upstream
    -- container's configuration either (env, argv, mounts).
    local names = pq.running(out)
    local up = must(names:match("(lb%-[%w-]+%-up)"), "no upstream container: " .. names)
    local up_inspect = sh.run({ "podman", "inspect", up })
    assert.are.equal(0, up_inspect.status, up_inspect.stderr)
    assert.is_nil(up_inspect.stdout:find(real, 1, true), "the credential is in podman inspect of " .. up)
    assert.truthy(up_inspect.stdout:find("/dev/stdin", 1, true))
    -- No file anywhere holds it while the run goes on (the Bash call
    -- sleeps 8 s): not in /dev/shm, the runtime dir or the run's folder.
    local creds = "ls -d /dev/shm/leakbench-cred-* ${XDG_RUNTIME_DIR:-/nonexistent}/leakbench-cred-* 2>/dev/null"
    assert.are.equal("", sh.run({ "sh", "-c", creds }).stdout)
    assert.are.equal(1, sh.run({ "grep", "-rqF", real, "/dev/shm", out }).status)
    assert.truthy(os.execute("kill -0 " .. run_pid .. " 2>/dev/null"), "the run ended too soon to tell")
    -- Wait for the run to end.
    assert.truthy(sh.retry(180, function() return not os.execute("kill -0 " .. run_pid .. " 2>/dev/null") end))
    local doc = cjson.decode(must(read(out .. "/results.json"), read(dir .. "/run.err")))
    local run = doc.runs[1]
    assert.are.equal("pass", run.verdict, tostring(run.reason) .. "\n" .. tostring(read(dir .. "/run.err")))
    assert.are.equal("live", doc.mode)
    -- The upstream saw the real key (socat -v dumps the decrypted requests).
    local seen = read(dir .. "/tls.err") or ""
    assert.truthy(seen:find("x-api-key: " .. real, 1, true), "the upstream did not get the real key")
    -- (The dummy is in a request body, in the env the Bash call printed,
    -- but never in a credential header.)
    assert.is_nil(seen:lower():find("x-api-key: sk-ant-bench-dummy-key", 1, true))
    -- No artifact holds it, in any form.
    local scan = sh.leakbench({ "scan", "--secret", real, out })
    assert.are.equal(0, scan.status, scan.stdout)
    -- The credential file is gone.
    local left = sh.run({ "sh", "-c",
      "ls -d /dev/shm/leakbench-* ${XDG_RUNTIME_DIR:-/nonexistent}/leakbench-* 2>/dev/null" })
    assert.are.equal("", left.stdout)
    assert.are.same({}, pq.containers("leakbench.suite=" .. doc.suite_id))
  end)
end)
