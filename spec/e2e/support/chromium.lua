-- Debian's headless Chromium for end-to-end specs of report.html: a DOM
-- dump and a screenshot, each with a fresh profile, no network of its own
-- (the flags ENVIRONMENT.md and the machine notes give; --no-sandbox as
-- root), and a PNG check that needs no image library.
local sh = require "sh"

local M = {}

M.BIN = "/usr/bin/chromium"

local FLAGS = { "--headless", "--disable-gpu", "--disable-quic", "--no-first-run",
  "--disable-background-networking", "--disable-component-update", "--disable-sync",
  "--disable-extensions", "--hide-scrollbars", "--window-size=1280,800" }

local function run(extra, url)
  local profile = sh.tmpdir()
  local argv = { "timeout", "90", M.BIN }
  for _, f in ipairs(FLAGS) do argv[#argv + 1] = f end
  argv[#argv + 1] = "--user-data-dir=" .. profile
  local uid = sh.run({ "id", "-u" }).stdout:match("%d+")
  if uid == "0" then argv[#argv + 1] = "--no-sandbox" end
  for _, a in ipairs(extra) do argv[#argv + 1] = a end
  argv[#argv + 1] = url
  local r = sh.run(argv)
  sh.rmtree(profile)
  return r
end

-- The DOM of URL after its scripts ran, as HTML text.
function M.dump_dom(url)
  local r = run({ "--dump-dom", "--virtual-time-budget=2000" }, url)
  assert(r.status == 0, "chromium --dump-dom failed: " .. r.stderr:sub(-2000))
  return r.stdout
end

-- A 1280x800 screenshot of URL into PATH.
function M.screenshot(url, path)
  local r = run({ "--screenshot=" .. path, "--virtual-time-budget=2000" }, url)
  assert(r.status == 0, "chromium --screenshot failed: " .. r.stderr:sub(-2000))
  return path
end

-- { width=, height=, colors= } of the PNG at PATH: colors is how many
-- distinct pixel values it has (1 for a blank page), decoded with
-- python3's zlib (8-bit RGB or RGBA, as Chromium writes them).
function M.png_info(path)
  local r = sh.run({ "/usr/bin/python3", "-c", [[
import struct, sys, zlib
data = open(sys.argv[1], 'rb').read()
assert data[:8] == b'\x89PNG\r\n\x1a\n', 'not a PNG'
pos, idat = 8, b''
while pos < len(data):
    n, kind = struct.unpack('>I4s', data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + n]
    if kind == b'IHDR':
        w, h, depth, ctype = struct.unpack('>IIBB', body[:10])
    elif kind == b'IDAT':
        idat += body
    pos += 12 + n
assert depth == 8 and ctype in (2, 6), 'unexpected PNG type %d/%d' % (depth, ctype)
bpp = 3 if ctype == 2 else 4
raw, stride = zlib.decompress(idat), w * bpp
prev, colors, i = bytearray(stride), set(), 0
for _ in range(h):
    f, line = raw[i], bytearray(raw[i + 1:i + 1 + stride])
    i += 1 + stride
    for x in range(stride):
        a = line[x - bpp] if x >= bpp else 0
        b, c = prev[x], (prev[x - bpp] if x >= bpp else 0)
        if f == 1: line[x] = (line[x] + a) & 255
        elif f == 2: line[x] = (line[x] + b) & 255
        elif f == 3: line[x] = (line[x] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    for x in range(0, stride, bpp * 7):
        colors.add(bytes(line[x:x + bpp]))
    prev = line
print(w, h, len(colors))
]], path })
  assert(r.status == 0, "cannot decode " .. path .. ": " .. r.stderr)
  local w, h, n = r.stdout:match("(%d+) (%d+) (%d+)")
  return { width = tonumber(w), height = tonumber(h), colors = tonumber(n) }
end

function M.available()
  return sh.run({ "test", "-x", M.BIN }).status == 0
end

return M
