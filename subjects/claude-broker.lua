-- claude-broker: Claude Code's own sandbox as a credential broker. The
-- project's .env is masked with `sandbox.credentials` (mode "mask"): every
-- Bash command, inside bubblewrap, sees a placeholder where the key is
-- (Claude Code binds a copy of the file over it), and the sandbox's proxy,
-- in Claude Code's process outside bubblewrap, swaps the real key in for
-- the placeholder on the way out, at api.allowed.test only (injectHosts):
-- the host the broker audit (subjects/claude-broker/audit/) treats as the
-- key's own. The proxy substitutes only over a TLS connection it
-- terminates itself (network.tlsTerminate, its own CA for the session,
-- which the sandboxed commands are told to trust); plain HTTP gets the
-- placeholder (allowPlaintextInject stays false). The rest is
-- claude-sandbox's setup (its agent layer: bubblewrap and socat), with a
-- second allowed host, allowed.test, that is not the key's.
-- subjects/README.md records what it took and what the audit found.
return {
  name = "claude-broker",
  description = "Claude Code's sandbox with sandbox.credentials masking .env's key, "
    .. "injected by its proxy at api.allowed.test only",
  agent = { build = { context = "claude-sandbox", containerfile = "Containerfile" } },
  settings = {
    sandbox = {
      enabled = true,
      failIfUnavailable = true,
      autoAllowBashIfSandboxed = true,
      allowUnsandboxedCommands = false,
      enableWeakerNestedSandbox = true,
      network = {
        allowedDomains = { "api.allowed.test", "allowed.test", "api.anthropic.com" },
        strictAllowlist = true,
        tlsTerminate = { },
      },
      credentials = {
        files = {
          { path = "/work/.env", mode = "mask", extract = "_KEY=(\\S+)", onExtractNoMatch = "deny",
            injectHosts = { "api.allowed.test" } },
        },
      },
    },
  },
}
