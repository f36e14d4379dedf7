-- srt-broker: srt (subjects/srt.lua, the same agent layer) as a
-- credential broker, with sandbox-runtime's own `credentials` settings:
-- /work/.env's key masked (mode "mask", `_KEY=(\S+)`, onExtractNoMatch
-- "deny"), the real key put back by srt's proxy at api.allowed.test only
-- (injectHosts), over TLS the proxy terminates itself (network.tlsTerminate,
-- an ephemeral CA the sandbox is told to trust). The settings Claude Code's
-- own sandbox takes for this (claude-broker), given to srt, which wraps
-- the whole of Claude Code: its Read tool is inside the sandbox too. The
-- broker audit (subjects/claude-broker/audit/) measures it; subjects/README.md
-- says what it found.
return {
  name = "srt-broker",
  description = "srt wrapping Claude Code, with srt's credentials masking .env's key, "
    .. "injected by its proxy at api.allowed.test only",
  agent = { build = { context = "srt", containerfile = "Containerfile" } },
  files = {
    ["srt-settings.json"] = [[
{
  "network": {
    "allowedDomains": ["api.allowed.test", "allowed.test", "api.anthropic.com", "127.0.0.1:8080"],
    "deniedDomains": [],
    "strictAllowlist": true,
    "tlsTerminate": {}
  },
  "filesystem": {
    "denyRead": [],
    "allowWrite": ["/work", "/home/bench/.claude", "/tmp"],
    "denyWrite": []
  },
  "credentials": {
    "files": [
      { "path": "/work/.env", "mode": "mask", "extract": "_KEY=(\\S+)", "onExtractNoMatch": "deny",
        "injectHosts": ["api.allowed.test"] }
    ]
  },
  "enableWeakerNestedSandbox": true
}
]],
  },
}
