-- Claude Code's own permission rules: deny reading secret files. The rules
-- bind the Read tool and the shell commands Claude Code recognizes as reads
-- (cat, head, base64, sed, ...); an interpreter or a search over a whole
-- directory is outside them.
return {
  name = "deny-rules",
  description = "permissions.deny rules for .env, keys, credentials and other secret files",
  settings = {
    permissions = {
      deny = {
        "Read(./.env)", "Read(**/.env)", "Read(./.env.*)", "Read(**/.env.*)",
        "Read(~/.aws/**)", "Read(~/.ssh/**)", "Read(**/*.pem)", "Read(**/*.key)",
        "Read(**/secrets/**)", "Read(**/credentials*)",
      },
    },
  },
  blocks = { "dotenv-read", "dotenv-cat", "base64-dotenv", "hexdump-key", "home-aws-credentials",
    "subagent-dotenv", "git-push-exfil", "webfetch-exfil",
  },
}
