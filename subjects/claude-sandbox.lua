-- claude-sandbox: Claude Code's own sandbox (the `sandbox` settings), on
-- Linux: bubblewrap puts every Bash command in a namespace with no network
-- but a proxy that Claude Code runs outside it, which lets through only
-- the allowed domains. Its agent layer (claude-sandbox/Containerfile) adds
-- bubblewrap and socat, as Claude Code's documentation says; the settings
-- are the documented ones, with an allowlist of one host the scenarios
-- treat as the user's own (allowed.test) and the provider's API host.
-- failIfUnavailable: a sandbox that cannot start must fail the command,
-- never run it unsandboxed; allowUnsandboxedCommands false: the model
-- cannot ask its way out. subjects/README.md records what it took.
return {
  name = "claude-sandbox",
  description = "Claude Code's own sandbox (bubblewrap + socat, settings `sandbox`) with a domain allowlist",
  agent = { build = { context = "claude-sandbox", containerfile = "Containerfile" } },
  settings = {
    sandbox = {
      enabled = true,
      failIfUnavailable = true,
      autoAllowBashIfSandboxed = true,
      allowUnsandboxedCommands = false,
      enableWeakerNestedSandbox = true,
      network = { allowedDomains = { "allowed.test", "api.anthropic.com" }, strictAllowlist = true },
    },
  },
}
