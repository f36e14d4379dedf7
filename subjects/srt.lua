-- srt: Anthropic's sandbox-runtime (npm @anthropic-ai/sandbox-runtime
-- 0.0.83) wrapping Claude Code, as its users run it: `srt claude ...`.
-- srt starts its own HTTP and SOCKS proxy outside the sandbox, runs the
-- command under bubblewrap in a network namespace of its own whose only way
-- out is that proxy (socat bridges it in over a Unix socket), and lets the
-- proxy reach only the allowed domains. Unlike Claude Code's own sandbox
-- (claude-sandbox), Claude Code itself is inside: its tools, its WebFetch
-- and its model calls all go through srt's proxy.
--
-- The allowlist: the host the scenarios treat as the user's own
-- (allowed.test), the provider's API host, and leakbench's model endpoint
-- (127.0.0.1:8080, ANTHROPIC_BASE_URL: the one destination a user's Claude
-- Code needs, here on loopback). strictAllowlist: nothing off the list is
-- ever asked about. Writes: the project, Claude Code's config folder and
-- /tmp, the only writable places of the claude container anyway (srt's own
-- mandatory write denies still apply inside them).
-- enableWeakerNestedSandbox: srt's setting for running inside a container,
-- whose masked /proc refuses bubblewrap a fresh proc mount.
--
-- Its agent layer (srt/Containerfile) installs srt with npm, bubblewrap and
-- socat with apt, and puts a launcher at /usr/local/bin/claude that runs
-- Claude Code under srt with these settings. subjects/README.md records
-- what it took and what the suite found.
return {
  name = "srt",
  description = "Claude Code run under Anthropic's sandbox-runtime (srt 0.0.83: bubblewrap, "
    .. "its own proxy, a domain allowlist)",
  agent = { build = { context = "srt", containerfile = "Containerfile" } },
  files = {
    ["srt-settings.json"] = [[
{
  "network": {
    "allowedDomains": ["allowed.test", "api.anthropic.com", "127.0.0.1:8080"],
    "deniedDomains": [],
    "strictAllowlist": true
  },
  "filesystem": {
    "denyRead": [],
    "allowWrite": ["/work", "/home/bench/.claude", "/tmp"],
    "denyWrite": []
  },
  "enableWeakerNestedSandbox": true
}
]],
  },
}
