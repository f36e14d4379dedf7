-- The simulated internet, end to end: a client that ignores the proxy
-- variables, or speaks no HTTP, still reaches the trap, through names that
-- resolve into 198.18.0.0/15 inside the run's own sealed namespace. One
-- protocol path per case (spec/fixtures/e2e/simnet.lua), each record
-- compared exactly, each carrying the run's canary, each found by
-- run:leaks as egress. Only *.test names are used; every address is a
-- simulated one, local to the run.
package.path = "spec/e2e/support/?.lua;" .. package.path
local sh = require "sh"
local cjson = require "cjson"
local tmpdir, read, must = sh.tmpdir, sh.read, sh.must

local function records(dir)
  local t = {}
  for line in (read(dir .. "/egress/egress.jsonl") or ""):gmatch("[^\n]+") do
    local rec = cjson.decode(line)
    rec.t = nil
    t[#t + 1] = rec
  end
  return t
end

local function tool_output(dir)
  for line in (read(dir .. "/stream.jsonl") or ""):gmatch("[^\n]+") do
    local ok, ev = pcall(cjson.decode, line)
    if ok and ev.type == "user" then
      for _, c in ipairs(ev.message.content) do
        if type(c.content) == "string" then return c.content end
      end
    end
  end
  return ""
end

-- The one record of KIND whose field FIELD is VALUE.
local function find(recs, kind, field, value)
  local found
  for _, r in ipairs(recs) do
    if r.kind == kind and r[field] == value then
      assert.is_nil(found, "two " .. kind .. " records with " .. field .. " " .. tostring(value))
      found = r
    end
  end
  assert.truthy(found, "no " .. kind .. " record with " .. field .. " " .. tostring(value))
  return found
end

describe("the simulated internet", function()
  local out = tmpdir()
  local r, run, recs, key, addr

  setup(function()
    r = sh.leakbench({ "run", "spec/fixtures/e2e/simnet.lua", "--out", out })
    local doc = cjson.decode(must(read(out .. "/results.json"), "no results.json in " .. r.stderr))
    run = doc.runs[1]
    recs = records(run.dir)
    key = must(read(run.dir .. "/project/.env"), "no .env"):match("API_KEY=(%S+)")
    -- Each name's address, from the trap's DNS answers.
    addr = {}
    for _, x in ipairs(recs) do
      if x.kind == "dns" and x.type == "A" then
        assert.truthy(addr[x.name] == nil or addr[x.name] == x.answer,
          x.name .. " got two addresses: " .. tostring(addr[x.name]) .. ", " .. tostring(x.answer))
        addr[x.name] = x.answer
      end
    end
  end)

  teardown(function() sh.rmtree(out) end)

  it("lets the run pass, and every client got an answer", function()
    assert.are.equal("pass", run.verdict, tostring(run.reason) .. r.stderr)
    local o = tool_output(run.dir)
    for _, line in ipairs({ "plain 403", "tls 403", "nc 0", "udp 0", "smtp 0", "literal 403", "ftp 0" }) do
      assert.matches(line .. "\n", o .. "\n", 1, true)
    end
  end)

  it("gives each name its own address in 198.18.0.0/15, the same every time", function()
    local seen, n = {}, 0
    for name, a in pairs(addr) do
      local x, y = a:match("^198%.(1[89])%.(%d+)%.%d+$")
      assert.truthy(x and y, name .. " -> " .. a)
      assert.is_nil(seen[a], a .. " given to " .. name .. " and " .. tostring(seen[a]))
      seen[a], n = name, n + 1
    end
    assert.are.equal(6, n, cjson.encode(addr))
    local o = tool_output(run.dir)
    assert.matches(addr["web.sim.test"] .. " +web%.sim%.test\n" .. addr["web.sim.test"]:gsub("%.", "%%.")
      .. " +web%.sim%.test\n", o)
  end)

  it("records HTTP that ignores the proxy variables, with the name it was for", function()
    local x = find(recs, "http", "name", "web.sim.test")
    assert.are.same({ kind = "http", method = "GET", target = "/plain?k=" .. key, version = "HTTP/1.1",
      headers = { { "Host", "web.sim.test:8081" }, { "User-Agent", x.headers[2][2] }, { "Accept", "*/*" } },
      head = "GET /plain?k=" .. key .. " HTTP/1.1\r\nHost: web.sim.test:8081\r\nUser-Agent: "
        .. x.headers[2][2] .. "\r\nAccept: */*\r\n\r\n",
      body = "", body_bytes = 0, truncated = false,
      name = "web.sim.test", addr = addr["web.sim.test"], port = 8081, tls = false }, x)
    assert.matches("^curl/", x.headers[2][2])
  end)

  it("records an address of the range that no name was given, with no name", function()
    local x = find(recs, "http", "addr", "198.18.200.1")
    assert.are.equal(cjson.null, x.name)
    assert.are.equal(8082, x.port)
    assert.are.equal("/lit?k=" .. key, x.target)
  end)

  it("terminates HTTPS to a name with a leaf for it, and records the request inside", function()
    local x = find(recs, "http", "name", "secure.sim.test")
    assert.are.equal("POST", x.method)
    assert.are.equal("/post", x.target)
    assert.are.equal("body=" .. key, x.body)
    assert.are.equal(#("body=" .. key), x.body_bytes)
    assert.are.equal(true, x.tls)
    assert.are.equal("secure.sim.test", x.sni)
    assert.are.equal(addr["secure.sim.test"], x.addr)
    assert.are.equal(443, x.port)
    assert.is_nil(x.connect)
  end)

  it("records raw TCP (nc) on any port, byte for byte", function()
    assert.are.same({ kind = "tcp", name = "raw.sim.test", addr = addr["raw.sim.test"], port = 9999,
      tls = false, proto = "raw", data = "raw " .. key .. "\n", data_bytes = #key + 5,
      truncated = false }, find(recs, "tcp", "name", "raw.sim.test"))
  end)

  it("records a UDP datagram with where it was sent", function()
    assert.are.same({ kind = "udp", name = "udp.sim.test", addr = addr["udp.sim.test"], port = 5353,
      data = "udp " .. key, data_bytes = #key + 4, truncated = false },
      find(recs, "udp", "name", "udp.sim.test"))
  end)

  it("speaks SMTP and records the whole session, message and all", function()
    local mail = "Subject: hi\r\n\r\nmail " .. key .. "\r\n"
    local data = "EHLO mail.txt\r\nMAIL FROM:<a@sim.test> SIZE=" .. #mail .. "\r\nRCPT TO:<b@sim.test>\r\n"
      .. "DATA\r\n" .. mail .. ".\r\nQUIT\r\n"
    assert.are.same({ kind = "tcp", name = "mail.sim.test", addr = addr["mail.sim.test"], port = 25,
      tls = false, proto = "smtp", data = data, data_bytes = #data, truncated = false },
      find(recs, "tcp", "name", "mail.sim.test"))
  end)

  it("speaks FTP and records the control session and the upload's data connection", function()
    local ctl, up
    for _, x in ipairs(recs) do
      if x.kind == "tcp" and x.name == "files.sim.test" then
        if x.port == 21 then ctl = x elseif x.port == 2121 then up = x end
      end
    end
    local data = "USER anonymous\r\nPASS ftp@example.com\r\nPWD\r\nEPSV\r\nTYPE I\r\nSTOR up.txt\r\nQUIT\r\n"
    assert.are.same({ kind = "tcp", name = "files.sim.test", addr = addr["files.sim.test"], port = 21,
      tls = false, proto = "ftp", data = data, data_bytes = #data, truncated = false }, ctl)
    assert.are.same({ kind = "tcp", name = "files.sim.test", addr = addr["files.sim.test"], port = 2121,
      tls = false, proto = "raw", data = "file " .. key .. "\n", data_bytes = #key + 6,
      truncated = false }, up)
  end)

  it("was set up by the harness, and served by a trap without a capability", function()
    local log = must(read(run.dir .. "/net.log"), "no net.log")
    -- rootful, the harness made it in the run's namespace (sandbox.lua's
    -- hold_sockets): no sidecar, so no lb-net there to drop its capabilities
    assert.is_nil(log:find("lb-net: simulated internet", 1, true))
    -- lb-trap refuses to serve the simulated internet with a capability
    -- (spec/unit/test_trap_bin.c), and it did serve it.
    assert.matches("lb-trap: listening dns 127.0.0.1:53 http 127.0.0.1:3128 sim 198.18.0.0/15\n", log, 1, true)
  end)

  it("finds the secret in every path, as egress", function()
    local e = run.leaks[1].channels.egress
    assert.truthy(e.leaked)
    local parts = {}
    for _, l in ipairs(e.locations) do parts[#parts + 1] = l.part .. "@" .. l.record end
    assert.are.equal(7, e.count, table.concat(parts, " "))
  end)
end)

describe("the simulated internet, flooded", function()
  local out = tmpdir()
  teardown(function() sh.rmtree(out) end)

  it("still records what arrives while idle connections hold every slot", function()
    local r = sh.leakbench({ "run", "spec/fixtures/e2e/simnet-flood.lua", "--out", out })
    local doc = cjson.decode(must(read(out .. "/results.json"), "no results.json in " .. r.stderr))
    local run = doc.runs[1]
    assert.are.equal("pass", run.verdict, tostring(run.reason) .. r.stderr)
    local key = must(read(run.dir .. "/project/.env"), "no .env"):match("API_KEY=(%S+)")
    local busy, idle = nil, 0
    for _, x in ipairs(records(run.dir)) do
      if x.kind == "busy" and x.name == "exfil.sim.test" then busy = x end
      if x.kind == "tcp" and type(x.name) == "string" and x.name:match("^idle%d+%.sim%.test$") then
        idle = idle + 1
      end
    end
    assert.truthy(idle >= 60, "only " .. idle .. " idle connections were served")
    assert.truthy(busy, "the connection over the cap left no record with its name")
    assert.are.equal(64, busy.max_conns)
    assert.are.equal(9444, busy.port)
    assert.are.equal("flood " .. key .. "\n", busy.data)
    assert.truthy(run.leaks[1].channels.egress.leaked)
  end)
end)

-- A flood with the key behind it (spec/fixtures/e2e/simnet-udp-flood.lua,
-- sandbox.settle_egress): every datagram sent is recorded or counted
-- lost, and a loss makes the egress channel say it is incomplete; the
-- key is recorded, or said to be possibly missing: never a quiet,
-- complete pass.
describe("the simulated internet, flooded with datagrams", function()
  local out = tmpdir()
  teardown(function() sh.rmtree(out) end)

  it("records each datagram or counts it lost, and says so", function()
    local r = sh.leakbench({ "run", "spec/fixtures/e2e/simnet-udp-flood.lua", "--out", out })
    local doc = cjson.decode(must(read(out .. "/results.json"), "no results.json in " .. r.stderr))
    local run = doc.runs[1]
    assert.are.equal("pass", run.verdict, tostring(run.reason) .. r.stderr)
    local settle = cjson.decode(must(read(run.dir .. "/egress-settle.json"), "no egress-settle.json"))
    assert.is_true(settle.settled, cjson.encode(settle))
    local junk, last = 0, false
    for _, x in ipairs(records(run.dir)) do
      if x.kind == "udp" and type(x.data) == "string" and x.data:match("^junk ") then junk = junk + 1 end
      if x.kind == "udp" and type(x.data) == "string" and x.data:match("^last ") then last = true end
    end
    -- 3001 sent (the check): each recorded, or dropped by a full socket
    -- queue, or by loopback before it
    local lost = settle.lost + settle.lo_drops
    assert.are.equal(3001, junk + (last and 1 or 0) + lost, cjson.encode(settle))
    local said = {}
    for _, x in ipairs(run.incomplete or {}) do
      if x.channel == "egress" then said[#said + 1] = x.reason end
    end
    if lost > 0 then
      assert.truthy(#said > 0, lost .. " datagrams were lost and the egress channel is called complete")
    else
      assert.are.same({}, said)
    end
    local egress_leak = run.leaks[1] and run.leaks[1].channels.egress.leaked
    assert.are.equal(last, egress_leak == true)
    assert.truthy(last or #said > 0, "the key is neither recorded nor said to be possibly missing")
  end)
end)

-- A ping into the simulated internet is answered by the kernel, and the
-- trap records the request, data and all (lb-net's raw ICMP socket): the
-- key sent as a ping's data is found in the egress channel, and only
-- there.
describe("the simulated internet, pinged", function()
  local out = tmpdir()
  teardown(function() sh.rmtree(out) end)

  it("records each echo request with its data, and finds the key in it", function()
    local r = sh.leakbench({ "run", "spec/fixtures/e2e/simnet-ping.lua", "--out", out })
    local doc = cjson.decode(must(read(out .. "/results.json"), "no results.json in " .. r.stderr))
    local run = doc.runs[1]
    assert.are.equal("pass", run.verdict, tostring(run.reason) .. r.stderr)
    local key = must(read(run.dir .. "/project/.env"), "no .env"):match("API_KEY=(%S+)")
    local recs = records(run.dir)
    local named = find(recs, "icmp", "name", "exfil.sim.test")
    assert.are.equal(8, named.type)
    -- ping's data: a timestamp, then the pattern; as text (data) when
    -- the timestamp's bytes happen to be text, else as data_base64
    local b64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    local bits = (named.data_base64 or ""):gsub("=", ""):gsub(".", function(c)
      local v = b64:find(c, 1, true) - 1
      local t = {}
      for i = 5, 0, -1 do t[#t + 1] = (v >> i) & 1 end
      return table.concat(t)
    end)
    local data = named.data or bits:gsub("%d%d%d%d%d%d%d%d", function(b) return string.char(tonumber(b, 2)) end)
    assert.is_true((named.data == nil) ~= (named.data_base64 == nil), cjson.encode(named))
    assert.are.equal(56, named.data_bytes)
    assert.truthy(data:find(key:sub(1, 16), 1, true), cjson.encode(named))
    local own = find(recs, "icmp", "addr", "198.18.0.77")
    assert.are.equal(cjson.null, own.name)
    assert.are.equal(key, own.data)
    assert.are.equal(#key, own.data_bytes)
    local leak = run.leaks[1]
    assert.truthy(leak.channels.egress.leaked, cjson.encode(leak))
    for ch, v in pairs(leak.channels) do
      if ch ~= "egress" then assert.is_false(v.leaked, ch .. " " .. cjson.encode(v)) end
    end
  end)
end)
