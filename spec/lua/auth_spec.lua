-- The host credential for --live: the seed's order, the expiry check, and
-- messages that never hold the credential.
local auth = require "leakbench.auth"

local function env(t) return function(k) return t[k] end end
local function files(t) return function(p) return t[p] end end

describe("auth.host", function()
  it("takes BENCH_AUTH first, then ANTHROPIC_API_KEY, then CLAUDE_CODE_OAUTH_TOKEN", function()
    local all = { BENCH_AUTH = "oauth:tok-1", ANTHROPIC_API_KEY = "key-2",
      CLAUDE_CODE_OAUTH_TOKEN = "tok-3", HOME = "/h" }
    assert.are.same({ "oauth:tok-1", "oauth", "BENCH_AUTH" }, { auth.host(env(all), files({})) })
    all.BENCH_AUTH = nil
    assert.are.same({ "apikey:key-2", "apikey", "ANTHROPIC_API_KEY" }, { auth.host(env(all), files({})) })
    all.ANTHROPIC_API_KEY = nil
    assert.are.same({ "oauth:tok-3", "oauth", "CLAUDE_CODE_OAUTH_TOKEN" }, { auth.host(env(all), files({})) })
  end)

  it("rejects a BENCH_AUTH of an unknown kind without echoing it", function()
    local a, err = auth.host(env({ BENCH_AUTH = "bearer:sekrit-value" }), files({}))
    assert.is_nil(a)
    assert.are.equal("BENCH_AUTH must be 'apikey:KEY' or 'oauth:TOKEN'", err)
  end)

  it("reads the claude.ai login and refuses one that expires within 30 minutes", function()
    local now = 1800000000
    local creds = '{"claudeAiOauth":{"accessToken":"sk-ant-oat01-x","expiresAt":%d}}'
    local fs = { ["/h/.claude/.credentials.json"] = creds:format((now + 3600) * 1000) }
    assert.are.same({ "oauth:sk-ant-oat01-x", "oauth", "/h/.claude/.credentials.json" },
      { auth.host(env({ HOME = "/h" }), files(fs), now) })
    fs["/h/.claude/.credentials.json"] = creds:format((now + 600) * 1000)
    local a, err = auth.host(env({ HOME = "/h" }), files(fs), now)
    assert.is_nil(a)
    assert.are.equal("claude.ai access token expires in 10 min: run `claude -p hi` on the host to "
      .. "refresh it, then retry", err)
  end)

  it("says what to set when there is no credential at all", function()
    local a, err = auth.host(env({ HOME = "/h" }), files({}))
    assert.is_nil(a)
    assert.are.equal("no credential: set BENCH_AUTH, ANTHROPIC_API_KEY or CLAUDE_CODE_OAUTH_TOKEN", err)
  end)

  it("gives a dummy of the matching kind", function()
    assert.are.same({ CLAUDE_CODE_OAUTH_TOKEN = "bench-dummy-oauth-token" }, auth.dummy_env("oauth"))
    assert.are.same({ ANTHROPIC_API_KEY = "sk-ant-bench-dummy-key" }, auth.dummy_env("apikey"))
  end)
end)

describe("auth.feature_cache", function()
  it("copies the two flag-cache keys and nothing else", function()
    local fs = { ["/h/.claude.json"] = '{"cachedGrowthBookFeatures":{"a":1},"cachedGrowthBookFeaturesAt":5,'
      .. '"oauthAccount":{"email":"x"},"userID":"u"}' }
    local c = auth.feature_cache(env({ HOME = "/h" }), files(fs))
    assert.are.same({ cachedGrowthBookFeatures = { a = 1 }, cachedGrowthBookFeaturesAt = 5 }, c)
    assert.are.same({}, auth.feature_cache(env({ HOME = "/h" }), files({ ["/h/.claude.json"] = "not json" })))
  end)
end)
