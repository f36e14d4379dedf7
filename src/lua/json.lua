-- A JSON encoder for what leakbench writes (results.json, result.json,
-- the model's script, settings): keys sorted so the output is stable, and
-- empty lists written as [] when marked with json.array (Debian's
-- lua-cjson has no array metatable, and writes every empty table as {}).
-- Strings that are not valid UTF-8 get U+FFFD for each bad byte
-- (printable.utf8, the one such repair), so the output is always valid
-- JSON. Strings are escaped in the one dialect of the C side's records
-- (src/common/jsonw.h): \b \f \n \r \t short, every other control byte
-- and DEL as \u00xx in lowercase (spec/lua/json_spec.lua and
-- spec/unit/test_common.c pin the same bytes). Decoding stays with cjson.
local printable = require "leakbench.printable"

local M = {}

local ARRAY = { __jsontype = "array" }

-- json.array(t) -> t, marked to be written as a list even when empty.
function M.array(t)
  return setmetatable(t or {}, ARRAY)
end

local ESC = { ['"'] = '\\"', ["\\"] = "\\\\", ["\b"] = "\\b", ["\f"] = "\\f",
  ["\n"] = "\\n", ["\r"] = "\\r", ["\t"] = "\\t" }

local function str(s)
  s = printable.utf8(s)
  return '"' .. s:gsub('[%c"\\]', function(c)
    return ESC[c] or string.format("\\u%04x", c:byte())
  end) .. '"'
end

local function is_array(t)
  if getmetatable(t) == ARRAY then return true end
  local n = #t
  if n == 0 then return false end
  local count = 0
  for _ in pairs(t) do count = count + 1 end
  return count == n
end

local encode

local function encode_table(t, out, depth)
  if depth > 100 then error("json: nesting too deep", 0) end
  if is_array(t) then
    out[#out + 1] = "["
    for i = 1, #t do
      if i > 1 then out[#out + 1] = "," end
      encode(t[i], out, depth + 1)
    end
    out[#out + 1] = "]"
    return
  end
  local keys = {}
  for k in pairs(t) do
    if type(k) ~= "string" and type(k) ~= "number" then
      error("json: a key of type " .. type(k) .. " cannot be written", 0)
    end
    keys[#keys + 1] = tostring(k)
  end
  table.sort(keys)
  out[#out + 1] = "{"
  for i, k in ipairs(keys) do
    if i > 1 then out[#out + 1] = "," end
    out[#out + 1] = str(k)
    out[#out + 1] = ":"
    local v = t[k]
    if v == nil then v = t[tonumber(k)] end
    encode(v, out, depth + 1)
  end
  out[#out + 1] = "}"
end

function encode(v, out, depth)
  local t = type(v)
  if t == "string" then out[#out + 1] = str(v)
  elseif t == "number" then
    if v ~= v or v == math.huge or v == -math.huge then out[#out + 1] = "null"
    elseif math.type(v) == "integer" then out[#out + 1] = string.format("%d", v)
    else
      -- The shortest form that reads back as the same number.
      local text
      for digits = 15, 17 do
        text = string.format("%." .. digits .. "g", v)
        if tonumber(text) == v then break end
      end
      out[#out + 1] = text
    end
  elseif t == "boolean" then out[#out + 1] = tostring(v)
  elseif v == nil then out[#out + 1] = "null"
  elseif t == "table" then encode_table(v, out, depth)
  elseif t == "userdata" and v == (package.loaded.cjson or {}).null then out[#out + 1] = "null"
  else error("json: a " .. t .. " cannot be written", 0) end
end

-- json.encode(v) -> text. Raises on functions, threads and cycles.
function M.encode(v)
  local out = {}
  encode(v, out, 0)
  return table.concat(out)
end

return M
