-- End-to-end tests of the lb-proxy binary ($LB_PROXY): its command line,
-- start-up errors and exit statuses, the ready line, settings from the
-- environment, forwarding to an HTTPS upstream (openssl s_server with a CA
-- made here by the openssl CLI) with curl as the client, the records, and
-- SIGTERM. Forwarding itself is covered in depth by spec/unit/test_proxy.c.
--
-- Plain Lua has no process API, so commands go through /bin/sh, every
-- argument single-quoted by q(). All traffic stays on 127.0.0.1.
package.path = "spec/e2e/support/?.lua;" .. package.path
local sh = require "sh"
local PROXY = assert(os.getenv("LB_PROXY"), "LB_PROXY is not set (run via spec/run)")
local cjson = require "cjson"
local q, read = sh.quote, sh.read

local function argv_string(argv)
  local t = {}
  for i, a in ipairs(argv) do t[i] = q(a) end
  return table.concat(t, " ")
end

local function write(path, s, mode)
  sh.write(path, s)
  if mode then os.execute("chmod " .. mode .. " " .. q(path)) end
end

local function mkdtemp()
  local p = io.popen("mktemp -d /tmp/lb-proxy-e2e.XXXXXX")
  local d = p:read("l")
  p:close()
  return d
end

-- Runs argv (with env, a table of NAME=value) to completion: status, stdout, stderr.
local function run(dir, argv, env)
  local pre = ""
  for k, v in pairs(env or {}) do pre = pre .. k .. "=" .. q(v) .. " " end
  local cmd = pre .. argv_string(argv) .. " >" .. q(dir .. "/run.out") ..
      " 2>" .. q(dir .. "/run.err") .. " </dev/null"
  local _, _, code = os.execute(cmd)
  return code, read(dir .. "/run.out"), read(dir .. "/run.err")
end


-- Starts argv in the background: returns a handle with pid, out, err and
-- status (a file that gets the exit status once it ends).
local spawned = 0
local live = {}      -- every handle spawn() made and after_each has not stopped
local function spawn(dir, name, argv, env)
  spawned = spawned + 1
  name = name .. spawned
  local h = { out = dir .. "/" .. name .. ".out", err = dir .. "/" .. name .. ".err",
    status = dir .. "/" .. name .. ".status", pidfile = dir .. "/" .. name .. ".pid" }
  local pre = ""
  for k, v in pairs(env or {}) do pre = pre .. k .. "=" .. q(v) .. " " end
  local inner = pre .. argv_string(argv) .. " >" .. q(h.out) .. " 2>" .. q(h.err) ..
      " </dev/null & echo $! >" .. q(h.pidfile) .. "; wait $!; echo $? >" .. q(h.status)
  os.execute("sh -c " .. q(inner) .. " >/dev/null 2>&1 &")
  h.pid = sh.retry(5, function()
    local s = read(h.pidfile)
    return s and s:match("%d+")
  end)
  live[#live + 1] = h
  return h
end

local function kill(h, sig)
  if h and h.pid then os.execute("kill -" .. (sig or "TERM") .. " " .. h.pid .. " 2>/dev/null") end
end

local function exit_status(h, secs)
  local s = sh.retry(secs or 5, function() return read(h.status) end)
  return s and tonumber(s:match("%d+"))
end

-- Stops a spawned process and waits until it is gone.
local function stop(h)
  kill(h)
  if h and h.pid then exit_status(h) end
end

-- Nothing a test starts outlives it: whatever the test stopped itself or
-- not (busted keeps one finally per test, so a second one replaced the
-- first, and a proxy once ran on for 44 minutes after make test). What a
-- describe's setup started (an upstream its tests share) is its
-- teardown's to stop, and nothing started is left at the end of the file.
local mark = 0
before_each(function() mark = #live end)
after_each(function()
  for i = #live, mark + 1, -1 do
    local h = table.remove(live, i)
    if not read(h.status) then stop(h) end
  end
end)
teardown(function()
  for i = #live, 1, -1 do
    local h = table.remove(live, i)
    if not read(h.status) then stop(h) end
  end
end)

-- Starts lb-proxy; waits for its ready line; returns handle, port.
local function start_proxy(dir, args, env)
  local argv = { PROXY }
  for _, a in ipairs(args) do argv[#argv + 1] = a end
  local h = spawn(dir, "proxy", argv, env)
  local port = sh.retry(10, function()
    local s = read(h.out) or ""
    return s:match("^lb%-proxy: listening on 127%.0%.0%.1:(%d+) upstream ")
  end)
  return h, port
end

-- curl to the proxy: status code, body file's content.
local function curl(dir, url, extra)
  local argv = { "curl", "-sS", "--noproxy", "*", "-o", dir .. "/curl.body",
    "-w", "%{http_code}", "-H", "Expect:" }
  for _, a in ipairs(extra or {}) do argv[#argv + 1] = a end
  argv[#argv + 1] = url
  local _, out = run(dir, argv)
  return tonumber(out), read(dir .. "/curl.body")
end

local function records(dir)
  local t = {}
  for line in (read(dir .. "/wire.jsonl") or ""):gmatch("[^\n]+") do
    t[#t + 1] = cjson.decode(line)
  end
  return t
end

local function b64decode(s)
  local b = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
  s = s:gsub("[^" .. b .. "=]", "")
  return (s:gsub(".", function(x)
    if x == "=" then return "" end
    local r, f = "", (b:find(x) - 1)
    for i = 6, 1, -1 do r = r .. (f % 2 ^ i - f % 2 ^ (i - 1) > 0 and "1" or "0") end
    return r
  end):gsub("%d%d%d?%d?%d?%d?%d?%d?", function(x)
    if #x ~= 8 then return "" end
    local c = 0
    for i = 1, 8 do c = c + (x:sub(i, i) == "1" and 2 ^ (8 - i) or 0) end
    return string.char(c)
  end))
end

local function rm_rf(dir)
  if dir and dir:match("^/tmp/lb%-proxy%-e2e%.") then sh.rmtree(dir) end
end

-- A port nobody listens on (bound by lb-proxy itself, then released).
local function closed_port(dir)
  local h, port = start_proxy(dir, { "--listen", "127.0.0.1:0", "--upstream",
    "http://127.0.0.1:9", "--records", dir .. "/scratch" })
  stop(h)
  return port
end

describe("lb-proxy command line", function()
  local dir
  before_each(function() dir = mkdtemp() end)
  after_each(function() rm_rf(dir) end)

  it("prints its usage with --help", function()
    local code, out = run(dir, { PROXY, "--help" })
    assert.are.equal(0, code)
    for _, opt in ipairs({ "--listen", "--upstream", "--credential-file", "--records",
      "--ca-file", "--upstream-timeout", "--max-connections", "--max-records",
      "--max-record-bytes", "LB_PROXY_LISTEN", "LB_UPSTREAM",
      "LB_CREDENTIAL_FILE", "LB_RECORDS", "LB_CA_FILE" }) do
      assert.truthy(out:find(opt, 1, true), "usage mentions " .. opt)
    end
  end)

  it("exits 2 on bad usage, saying what is wrong", function()
    local cases = {
      { { "--bogus" }, "lb-proxy: unknown option '--bogus' (try 'lb-proxy --help')\n" },
      { { "--listen" }, "lb-proxy: option '--listen' needs a value (try 'lb-proxy --help')\n" },
      { { "stray" }, "lb-proxy: unexpected argument 'stray' (try 'lb-proxy --help')\n" },
      { { "--upstream-timeout", "soon" },
        "lb-proxy: cannot use --upstream-timeout 'soon': expected a number of seconds " ..
        "(try 'lb-proxy --help')\n" },
      { { "--max-connections", "0" },
        "lb-proxy: cannot use --max-connections '0': expected a whole number from 1 to 100000 " ..
        "(try 'lb-proxy --help')\n" },
      { { "--max-records", "-1" },
        "lb-proxy: cannot use --max-records '-1': expected a whole number from 1 to 1000000000 " ..
        "(try 'lb-proxy --help')\n" },
      { { "--max-record-bytes", "1T" },
        "lb-proxy: cannot use --max-record-bytes '1T': expected a number of bytes, K, M or G " ..
        "after it (try 'lb-proxy --help')\n" },
      { { "--upstream", "ftp://127.0.0.1/" },
        "lb-proxy: cannot use upstream 'ftp://127.0.0.1/': expected an http:// or https:// URL\n" },
    }
    for _, c in ipairs(cases) do
      local argv = { PROXY }
      for _, a in ipairs(c[1]) do argv[#argv + 1] = a end
      local code, out, err = run(dir, argv)
      assert.are.equal(2, code, table.concat(c[1], " "))
      assert.are.equal(c[2], err)
      assert.are.equal("", out)
    end
  end)

  it("exits 1 on a missing or malformed credential file, never quoting it", function()
    local code, out, err = run(dir, { PROXY, "--listen", "127.0.0.1:0",
      "--credential-file", dir .. "/none", "--records", dir .. "/rec" })
    assert.are.equal(1, code)
    assert.are.equal("lb-proxy: cannot read credential file '" .. dir ..
      "/none': no such file or directory\n", err)
    assert.are.equal("", out)
    for _, content in ipairs({ "", "sk-ant-SECRET-1\n", "apikey:sk-ant SECRET-2\n",
      "token:SECRET-3", "apikey:SECRET-4\n\n", ("apikey:" .. ("SECRET-5"):rep(600)) }) do
      write(dir .. "/cred", content, "600")
      code, out, err = run(dir, { PROXY, "--listen", "127.0.0.1:0",
        "--credential-file", dir .. "/cred", "--records", dir .. "/rec" })
      assert.are.equal(1, code)
      assert.truthy(err:find("^lb%-proxy: cannot use credential file '" .. dir:gsub("%p", "%%%0") ..
        "/cred': "), err)
      assert.falsy(err:find("SECRET", 1, true), "the error quotes the file")
      assert.falsy(out:find("SECRET", 1, true))
    end
  end)

  it("exits 1 when it cannot listen or write its records", function()
    local h, port = start_proxy(dir, { "--listen", "127.0.0.1:0", "--upstream",
      "http://127.0.0.1:9", "--records", dir .. "/rec" })
    finally(function() stop(h) end)
    assert.truthy(port)
    local code, _, err = run(dir, { PROXY, "--listen", "127.0.0.1:" .. port,
      "--records", dir .. "/rec2" })
    assert.are.equal(1, code)
    assert.are.equal("lb-proxy: cannot listen on '127.0.0.1:" .. port ..
      "': Address already in use\n", err)
    write(dir .. "/file", "x")
    code, _, err = run(dir, { PROXY, "--listen", "127.0.0.1:0", "--records", dir .. "/file" })
    assert.are.equal(1, code)
    assert.are.equal("lb-proxy: cannot create records directory '" .. dir ..
      "/file': not a directory\n", err)
  end)

  it("takes its settings from the environment, flags winning", function()
    local h, port = start_proxy(dir, { "--upstream", "http://127.0.0.1:7/base/" }, {
      LB_PROXY_LISTEN = "127.0.0.1:0", LB_UPSTREAM = "http://127.0.0.1:8",
      LB_RECORDS = dir .. "/env-records" })
    finally(function() stop(h) end)
    assert.truthy(port, read(h.err))
    assert.are.equal("lb-proxy: listening on 127.0.0.1:" .. port ..
      " upstream http://127.0.0.1:7/base\n", read(h.out))
    assert.truthy(read(dir .. "/env-records/wire.jsonl"), "records dir from LB_RECORDS")
  end)
end)

describe("lb-proxy forwarding", function()
  local dir, server
  local KEY = "sk-ant-api03-E2EREALKEY-5a5a5a5a5a5a"

  setup(function()
    dir = mkdtemp()
    -- A CA and a server certificate for 127.0.0.1, made here.
    local function ssl(argv)
      local code, _, err = run(dir, argv)
      assert.are.equal(0, code, err)
    end
    ssl({ "openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
      "-nodes", "-keyout", dir .. "/ca.key", "-out", dir .. "/ca.pem", "-days", "2",
      "-subj", "/CN=leakbench e2e CA" })
    ssl({ "openssl", "req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
      "-nodes", "-keyout", dir .. "/srv.key", "-out", dir .. "/srv.csr", "-subj", "/CN=127.0.0.1" })
    write(dir .. "/ext.cnf", "subjectAltName=IP:127.0.0.1\n")
    ssl({ "openssl", "x509", "-req", "-in", dir .. "/srv.csr", "-CA", dir .. "/ca.pem",
      "-CAkey", dir .. "/ca.key", "-CAcreateserial", "-out", dir .. "/srv.pem", "-days", "2",
      "-extfile", dir .. "/ext.cnf" })
    os.execute("mkdir -p " .. q(dir .. "/www"))
    write(dir .. "/www/hello.txt", "hello over TLS\n")
    -- openssl s_server -WWW serves files from its working directory.
    server = spawn(dir, "tls", { "sh", "-c", "cd " .. q(dir .. "/www") ..
      " && exec openssl s_server -accept 127.0.0.1:0 -cert ../srv.pem -key ../srv.key -WWW" })
    server.port = sh.retry(10, function()
      return (read(server.out) or ""):match("ACCEPT 127%.0%.0%.1:(%d+)")
    end)
    assert.truthy(server.port, read(server.err))
  end)

  teardown(function()
    stop(server)
    rm_rf(dir)
  end)

  it("forwards to an https upstream trusted with --ca-file", function()
    local rec = dir .. "/rec-tls"
    local h, port = start_proxy(dir, { "--listen", "127.0.0.1:0", "--upstream",
      "https://127.0.0.1:" .. server.port, "--ca-file", dir .. "/ca.pem",
      "--records", rec })
    finally(function() stop(h) end)
    assert.truthy(port, read(h.err))
    local code, body = curl(dir, "http://127.0.0.1:" .. port .. "/hello.txt",
      { "-H", "x-api-key: sk-ant-dummy-e2e" })
    assert.are.equal(200, code)
    assert.are.equal("hello over TLS\n", body)
    local r = records(rec)
    assert.are.equal(1, #r)
    assert.are.equal("GET", r[1].method)
    assert.are.equal("/hello.txt", r[1].target)
    assert.are.equal(200, r[1].status)
    assert.are.equal("", r[1].body)
    local saw
    for _, hd in ipairs(r[1].headers) do
      if hd[1]:lower() == "x-api-key" then saw = hd[2] end
    end
    assert.are.equal("[removed]", saw)
    assert.are.equal("hello over TLS\n", read(rec .. "/" .. r[1].response_file))
    -- One log line for the request.
    local out = read(h.out)
    assert.truthy(out:find("\nlb%-proxy: 1 GET /hello%.txt 200 0 15 [%d.]+ms\n"), out)
    -- Without the CA the same upstream is refused.
    local h2, port2 = start_proxy(dir, { "--listen", "127.0.0.1:0", "--upstream",
      "https://127.0.0.1:" .. server.port, "--records", dir .. "/rec-noca" })
    finally(function() stop(h2) end)
    code, body = curl(dir, "http://127.0.0.1:" .. port2 .. "/hello.txt")
    assert.are.equal(502, code)
    local e = cjson.decode(body)
    assert.are.equal("error", e.type)
    assert.are.equal("api_error", e.error.type)
    assert.truthy(e.error.message:find("certificate"), e.error.message)
  end)

  it("sends the key only with the Messages API: other paths get 403, recorded", function()
    write(dir .. "/cred", "apikey:" .. KEY .. "\n", "600")
    local rec = dir .. "/rec-key"
    local h, port = start_proxy(dir, { "--listen", "127.0.0.1:0", "--upstream",
      "https://127.0.0.1:" .. server.port, "--credential-file", dir .. "/cred",
      "--ca-file", dir .. "/ca.pem", "--records", rec })
    finally(function() stop(h) end)
    assert.truthy(port, read(h.err))
    local code, body = curl(dir, "http://127.0.0.1:" .. port .. "/hello.txt",
      { "-H", "x-api-key: sk-ant-dummy-e2e" })
    assert.are.equal(403, code)
    local e = cjson.decode(body)
    assert.are.equal("permission_error", e.error.type)
    assert.are.equal("lb-proxy: cannot forward 'GET /hello.txt' with the credential: " ..
      "only POST /v1/messages and POST /v1/messages/count_tokens are", e.error.message)
    local r = records(rec)
    assert.are.equal(1, #r)
    assert.are.equal("/hello.txt", r[1].target)
    assert.are.equal(403, r[1].status)
    assert.are.equal(e.error.message, r[1].error)
    local out = read(h.out)
    assert.truthy(out:find("\nlb%-proxy: 1 GET /hello%.txt 403 0 %d+ [%d.]+ms lb%-proxy: " ..
      "cannot forward 'GET /hello%.txt' with the credential"), out)
    -- The key is nowhere: not in records, responses, stdout or stderr.
    kill(h)
    exit_status(h)
    local _, found = run(dir, { "grep", "-rlF", KEY, rec, h.out, h.err })
    assert.are.equal("", found)
  end)

  it("answers 502 when the upstream is down and records the exact body", function()
    local down = closed_port(dir)
    local rec = dir .. "/rec-down"
    local h, port = start_proxy(dir, { "--listen", "127.0.0.1:0", "--upstream",
      "http://127.0.0.1:" .. down, "--records", rec })
    finally(function() stop(h) end)
    local bytes = "\0\1\2\255\254 not utf-8 \192\175 {\"a\":1}\n"
    write(dir .. "/body.bin", bytes)
    local code, body = curl(dir, "http://127.0.0.1:" .. port .. "/v1/messages?beta=true",
      { "--data-binary", "@" .. dir .. "/body.bin", "-H", "content-type: application/json" })
    assert.are.equal(502, code)
    assert.are.equal("api_error", cjson.decode(body).error.type)
    local r = records(rec)
    assert.are.equal(1, #r)
    assert.are.equal(502, r[1].status)
    assert.are.equal("/v1/messages", r[1].path)
    assert.are.equal(false, r[1].body_utf8)
    assert.are.equal(bytes, b64decode(r[1].body_base64))
    assert.truthy(r[1].error:find("^lb%-proxy: cannot reach upstream 'http://127%.0%.0%.1:" .. down .. "'"))
    -- Still serving.
    code = curl(dir, "http://127.0.0.1:" .. port .. "/again")
    assert.are.equal(502, code)
  end)

  it("records control bytes and DEL in the one JSON dialect, which cjson reads back", function()
    local down = closed_port(dir)
    local rec = dir .. "/rec-dialect"
    local h, port = start_proxy(dir, { "--listen", "127.0.0.1:0", "--upstream",
      "http://127.0.0.1:" .. down, "--records", rec })
    finally(function() stop(h) end)
    local bytes = "a\bb\fc\127d\1e\"f\\g\n"
    write(dir .. "/body.txt", bytes)
    curl(dir, "http://127.0.0.1:" .. port .. "/v1/messages", { "--data-binary", "@" .. dir .. "/body.txt" })
    local line = assert(read(rec .. "/wire.jsonl"))
    -- src/common/jsonw.h: short escapes, \u00xx in lowercase for the rest and DEL.
    assert.truthy(line:find('"body":"a\\bb\\fc\\u007fd\\u0001e\\"f\\\\g\\n"', 1, true), line)
    assert.falsy(line:sub(1, -2):find("[%c\127]"), "a control byte in the line")
    assert.are.equal(bytes, records(rec)[1].body)
  end)

  it("exits promptly on SIGTERM with every finished request recorded", function()
    local rec = dir .. "/rec-term"
    local h, port = start_proxy(dir, { "--listen", "127.0.0.1:0", "--upstream",
      "https://127.0.0.1:" .. server.port, "--ca-file", dir .. "/ca.pem", "--records", rec })
    for i = 1, 3 do
      assert.are.equal(200, (curl(dir, "http://127.0.0.1:" .. port .. "/hello.txt?n=" .. i)))
    end
    local t0 = os.time()
    kill(h, "TERM")
    assert.are.equal(0, exit_status(h, 5))
    assert.truthy(os.time() - t0 <= 2)
    local r = records(rec)
    assert.are.equal(3, #r)
    assert.are.equal("/hello.txt?n=3", r[3].target)
  end)
end)
