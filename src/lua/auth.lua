-- The host's credential for --live runs, and the dummy that stands in for it
-- inside the sandbox (the seed's host_auth, in the same order).
--
-- The real credential is returned to the caller only to be written into a
-- 0600 file on memory-backed storage for the proxy; it is never logged, and
-- error messages never include it.
local cjson = require "cjson"

local M = {}

local DUMMY_KEY = "sk-ant-bench-dummy-key"
local DUMMY_OAUTH = "bench-dummy-oauth-token"

-- The dummy environment for the claude container, by credential kind.
function M.dummy_env(kind)
  if kind == "oauth" then return { CLAUDE_CODE_OAUTH_TOKEN = DUMMY_OAUTH } end
  return { ANTHROPIC_API_KEY = DUMMY_KEY }
end

-- host() -> auth ("apikey:KEY" or "oauth:TOKEN"), kind, source | nil, err.
-- Order: BENCH_AUTH, ANTHROPIC_API_KEY, CLAUDE_CODE_OAUTH_TOKEN, then the
-- claude.ai access token in ~/.claude/.credentials.json (read only, never
-- refreshed; refused when it expires within 30 minutes).
function M.host(getenv, read_file, now)
  getenv = getenv or os.getenv
  now = now or os.time()
  local v = getenv("BENCH_AUTH")
  if v and v ~= "" then
    local kind = v:match("^(%a+):.")
    if kind ~= "apikey" and kind ~= "oauth" then
      return nil, "BENCH_AUTH must be 'apikey:KEY' or 'oauth:TOKEN'"
    end
    return v, kind, "BENCH_AUTH"
  end
  v = getenv("ANTHROPIC_API_KEY")
  if v and v ~= "" then return "apikey:" .. v, "apikey", "ANTHROPIC_API_KEY" end
  v = getenv("CLAUDE_CODE_OAUTH_TOKEN")
  if v and v ~= "" then return "oauth:" .. v, "oauth", "CLAUDE_CODE_OAUTH_TOKEN" end
  local home = getenv("HOME") or ""
  local path = home .. "/.claude/.credentials.json"
  local text = read_file(path)
  if not text then
    return nil, "no credential: set BENCH_AUTH, ANTHROPIC_API_KEY or CLAUDE_CODE_OAUTH_TOKEN"
  end
  local ok, doc = pcall(cjson.decode, text)
  local oauth = ok and type(doc) == "table" and doc.claudeAiOauth
  if type(oauth) ~= "table" or type(oauth.accessToken) ~= "string" or oauth.accessToken == ""
      or type(oauth.expiresAt) ~= "number" then
    return nil, "cannot use '" .. path .. "': no claudeAiOauth access token in it"
  end
  local left = oauth.expiresAt / 1000 - now
  if left < 30 * 60 then
    return nil, string.format("claude.ai access token expires in %d min: run `claude -p hi` on the "
      .. "host to refresh it, then retry", math.floor(left / 60))
  end
  return "oauth:" .. oauth.accessToken, "oauth", path
end

-- The host's cached feature flags, to seed the sandbox's config: only the
-- two cache keys, no account data, no credentials.
function M.feature_cache(getenv, read_file)
  getenv = getenv or os.getenv
  local dir = getenv("CLAUDE_CONFIG_DIR") or getenv("HOME") or ""
  local text = read_file(dir .. "/.claude.json")
  if not text then return {} end
  local ok, doc = pcall(cjson.decode, text)
  if not ok or type(doc) ~= "table" then return {} end
  local out = {}
  for _, k in ipairs({ "cachedGrowthBookFeatures", "cachedGrowthBookFeaturesAt" }) do
    if doc[k] ~= nil then out[k] = doc[k] end
  end
  return out
end

return M
