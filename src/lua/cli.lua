-- The command line: verbs, options, help. main(args) returns the exit
-- status: 0 success, 1 a failed run or a broken file, 2 a usage error
-- ("leakbench help run" lists the run verb's codes, 3 and 4 among them).
-- Verbs live in their own modules and are loaded only when used.
local defaults = require "leakbench.defaults"
local suggest = require "leakbench.suggest"

local M = {}

M.VERSION = "0.1.0"

local function perr(fmt, ...)
  io.stderr:write("leakbench: ", string.format(fmt, ...), "\n")
end

-- Each verb: summary, usage, option specs and the module that runs it.
-- Option spec: { "--name", "-n", arg = "VALUE", repeat_ = bool, help = "" }.
local VERBS = {
  { name = "run", summary = "run scenarios against subjects and report what leaked",
    usage = "leakbench run [OPTIONS] [PATH...]",
    details = "PATH: scenario files or directories (default scenarios/). Every run\n"
      .. "(scenario x subject x repeat) is isolated: its own process, network and canaries.\n"
      .. "A subject's 'blocks' must name scenarios found in PATH when PATH has a directory.\n"
      .. "\nexit status:\n"
      .. "  0    every check passed (every utility task done), every claim held, and every\n"
      .. "       run was judged\n"
      .. "  1    a check failed, or a subject's claim was broken (a secret of a scenario in\n"
      .. "       its 'blocks' reached the wire); stderr names each\n"
      .. "  2    a usage error: a bad option, a path that does not exist, nothing to run\n"
      .. "  3    nothing failed, but a run could not be judged: error (the harness failed,\n"
      .. "       or Claude Code exited non-zero, reported an error, wrote no result or never\n"
      .. "       reached the model, unless the scenario's 'expect' says so), timeout,\n"
      .. "       skipped, or invalid (the baseline did not leak where expect_leak says)\n"
      .. "  4    --fail-on leak, nothing else wrong, and a secret leaked in any channel under\n"
      .. "       a subject (the baseline's leaks are its control; alone, it is gated)\n"
      .. "  130  interrupted (SIGINT, SIGTERM): partial results are written\n"
      .. "When several apply, the lowest of 1, 3, 4 wins.",
    options = {
      { "--subject", arg = "FILE", many = true, help = "a subject file (repeatable); the baseline runs too" },
      { "--no-baseline", help = "do not run the baseline (no subject)" },
      { "--claude-version", arg = "V", many = true,
        help = "Claude Code version (repeatable: every run is repeated on each, side by side)" },
      { "--jobs", "-j", arg = "N", help = "runs in parallel (default: the cores, as memory allows)" },
      { "--repeat", arg = "N", help = "run each scenario x subject N times" },
      { "--filter", arg = "PATTERN", help = "only scenarios whose name contains PATTERN" },
      { "--tag", arg = "TAG", many = true, help = "only scenarios with this tag (repeatable)" },
      { "--live", help = "use the real API with the host's credential instead of the scripted model" },
      { "--model", arg = "ID", help = "the model Claude Code asks for (default " .. defaults.MODEL .. ")" },
      { "--out", arg = "DIR", help = "where results go (default runs/<UTC timestamp>/)" },
      { "--timeout", arg = "S",
        help = "seconds per run unless the scenario says otherwise (default " .. defaults.TIMEOUT .. ")" },
      { "--keep-transcripts", help = "copy Claude Code's config dir into each run's artifacts" },
      { "--fail-fast", help = "start no new run after the first that does not pass" },
      { "--fail-on", arg = "leak", many = true, help = "also exit 4 when a secret leaked under a subject" },
      { "--shard", arg = "I/N", help = "run only shard I of N (1-based): every N-th run of the plan; see merge" },
    }, module = "leakbench.runner" },
  { name = "selftest", summary = "run the controls: show that the matrix detects leaks and lost utility",
    usage = "leakbench selftest [--out DIR] [--jobs N]",
    details = "Runs the known-leaky baseline and the block-everything subject (a PreToolUse\n"
      .. "hook that refuses every tool) on scenarios/dotenv-read.lua and two utility tasks,\n"
      .. "from leakbench's source directory. It passes when the baseline leaks dotenv-read\n"
      .. "on the wire and does every task, and block-everything leaks nothing and does no\n"
      .. "task (utility 0). Run it first on a new machine.\n"
      .. "\nexit status: 0 both are detected, 1 not, 2 a usage error or missing files.",
    options = {
      { "--out", arg = "DIR", help = "where results go (default runs/selftest-<UTC timestamp>/)" },
      { "--jobs", "-j", arg = "N", help = "runs in parallel (default: the cores, as memory allows)" },
    }, module = "leakbench.runner", entry = "selftest" },
  { name = "list", summary = "validate and list scenarios and subjects without running",
    usage = "leakbench list [PATH...]",
    details = "PATH: files or directories (default scenarios/). Files under a directory\n"
      .. "named subjects/ are subjects. Exit 1 if any file is broken.",
    options = {}, module = "leakbench.list" },
  { name = "init", summary = "write a commented scenario and subject to start from",
    usage = "leakbench init [DIR]",
    details = "Writes DIR/scenarios/my-scenario.lua (the agent reads .env and repeats the\n"
      .. "password: it leaks in the baseline) and DIR/subjects/my-subject.lua (Claude Code\n"
      .. "deny rules that keep it off the wire, claiming it), commented, pointing at the API\n"
      .. "reference, docs/api.md. DIR defaults to the current directory. Never overwrites.\n"
      .. "\nexit status: 0 written, 1 a file exists or cannot be written, 2 a usage error.",
    options = {}, module = "leakbench.scaffold" },
  { name = "report", summary = "print the matrix of a finished run from its results.json",
    usage = "leakbench report DIR", options = {}, module = "leakbench.report_cmd" },
  { name = "rescore", summary = "judge a finished run's evidence again with today's checks and detector",
    usage = "leakbench rescore [--out DIR] DIR [PATH...]",
    details = "DIR: a results folder (run, merge or an earlier rescore). PATH: scenario files or\n"
      .. "directories to take today's scenarios from, by name (default: each run's own file);\n"
      .. "runs of other scenarios are kept as they were. Each scenario is loaded again with\n"
      .. "the canaries its run kept (secrets.json, mode 0600, in each run's folder), and its\n"
      .. "checks and the detector run over the stored evidence. New results go to\n"
      .. "DIR/rescore-<UTC time>/ (results.json with a 'rescore' field, junit.xml,\n"
      .. "report.html); the old ones are not touched. The runs that changed are listed.\n"
      .. "\nWhat may change in a scenario file: check, expect_leak, expect, partial, tags,\n"
      .. "description, timeout. What may not: prompt, model (the script), files, home,\n"
      .. "setup, env, settings, claude_args, max_turns, and its lb.canary calls (their order\n"
      .. "and prefixes); a run whose scenario changed in those is not rescored (stderr names\n"
      .. "it and what changed). Each run is judged by the judge that judged it when it ran,\n"
      .. "with the harness's facts it recorded (exit status, timeout, startup of plugins and MCP\n"
      .. "servers), so an unchanged folder gives every verdict back. Runs that never ran\n"
      .. "(skipped) and runs without secrets.json or harness facts are kept as they were.\n"
      .. "\nexit status: as 'leakbench help run' says of the rescored results; 3 when nothing\n"
      .. "else failed but a run could not be rescored; 2 a usage error.",
    options = {
      { "--out", arg = "DIR", help = "where the new results go (default DIR/rescore-<UTC time>/)" },
    }, module = "leakbench.rescore" },
  { name = "merge", summary = "merge the results of shards (run --shard I/N) into one",
    usage = "leakbench merge DIR... --out DIR",
    details = "DIR: the results folders of the shards of one plan, in any order. Refuses\n"
      .. "shards of different plans (the plan hash in results.json: the same scenario and\n"
      .. "subject files, repeats, versions, model and mode), a shard missing, or a shard given\n"
      .. "twice. Writes one results.json, junit.xml and report.html to --out; the run\n"
      .. "folders stay where they are (results.json names them).\n"
      .. "\nexit status: as 'leakbench help run' says of the merged results; 2 when the\n"
      .. "shards do not make one plan, or a usage error.",
    options = {
      { "--out", arg = "DIR", help = "where the merged results go (required)" },
    }, module = "leakbench.shard", entry = "merge" },
  { name = "diff", summary = "show what changed between two results: cells, claims, leak rates, utility",
    usage = "leakbench diff [--json] [--report] A B",
    details = "A, B: results folders (run, merge or rescore) or their results.json. Compares,\n"
      .. "scenario by scenario and subject by subject (NAME@VERSION when a side ran several\n"
      .. "Claude Code versions): scenarios and subjects new in B or gone; cells that changed;\n"
      .. "each claim's state (held, broken, untested) in A and B; each subject's wire leak\n"
      .. "rate in A and B, with the paired difference B - A over the runs of the same\n"
      .. "scenario and repeat judged in both (95% Newcombe interval, exact McNemar p); and\n"
      .. "the utility tasks done, with those lost or gained. Use it to gate a protection's\n"
      .. "new release or a Claude Code upgrade in CI.\n"
      .. "\nexit status: 0 no claim that held in A is broken in B, 1 one is (a regression),\n"
      .. "2 a usage error or a folder without a leakbench results.json.",
    options = {
      { "--json", help = "the differences as one JSON document (schema leakbench.diff/1)" },
      { "--report", help = "also write B's report.html again, with these changes at its top" },
    }, module = "leakbench.diff" },
  { name = "scan", summary = "look for secrets, in every reversible form, in any files",
    usage = "leakbench scan --secret S [--secret S...] FILE... | leakbench scan --forms",
    options = {
      { "--secret", arg = "S", many = true, help = "a secret to look for (repeatable)" },
      { "--secrets-file", arg = "FILE", help = "secrets, one per line" },
      { "--partial", help = "also report the longest fragment of each secret found" },
      { "--partial-min", arg = "N", help = "the shortest fragment --partial reports" },
      { "--json", help = "findings as JSON lines" },
      { "--forms", help = "list the form families the detector finds, and exit" },
    }, module = "leakbench.scan", raw = true },
  -- build, doctor and clean run their own main(args), which parses with
  -- M.args: their flags are declared here only.
  { name = "build", summary = "build the container images (cached by content hash)",
    usage = "leakbench build [--claude-version V]... [--subject FILE]... [--base IMAGE|debootstrap] [--mirror URL]",
    details = "Builds the container images this source tree needs (only those missing):\n"
      .. "the Claude Code image, the proxy/model image, and if no Debian base image\n"
      .. "is available, one bootstrapped from the Debian mirror; with --subject, that\n"
      .. "subject's interceptor image and agent layer too, as `run` would. Prints the tags.",
    options = {
      { "--subject", arg = "FILE", many = true,
        help = "also build this subject's interceptor and agent layer (repeatable)" },
      { "--claude-version", arg = "V", many = true,
        help = "Claude Code version (repeatable: an image for each, as `run`; default\n"
          .. "$LEAKBENCH_CLAUDE_VERSION or " .. defaults.CLAUDE_VERSION .. ")" },
      { "--base", arg = "IMAGE",
        help = "base image (default $LEAKBENCH_BASE_IMAGE, else\n" .. defaults.BASE_IMAGE
          .. " or one built with debootstrap);\n\"debootstrap\" skips registries" },
      { "--mirror", arg = "URL",
        help = "Debian mirror for debootstrap (default $LEAKBENCH_DEBIAN_MIRROR or\n"
          .. defaults.DEBIAN_MIRROR .. ")" },
    }, module = "leakbench.images", raw = true },
  { name = "doctor", summary = "check this machine and say how to fix what is missing",
    usage = "leakbench doctor [--claude-version V]...",
    details = "Checks podman, its runtime, limits, networking, images and credentials,\n"
      .. "and prints a fix for each problem. Exit status 0 when all is well.",
    options = {
      { "--claude-version", arg = "V", many = true,
        help = "check the images of Claude Code V (repeatable, as `run`)" },
    }, module = "leakbench.doctor", raw = true },
  { name = "clean", summary = "remove containers and networks left by killed runs",
    usage = "leakbench clean [--images]",
    details = "Removes containers and networks labelled leakbench=1 whose leakbench\n"
      .. "process is gone (leftovers of killed runs), and credential files such a\n"
      .. "run left on memory-backed storage, and copies of lb-init that a killed\n"
      .. "run left unfinished or whose image is gone. Live runs are left alone.",
    options = {
      { "--images", help = "also remove leakbench's images but those this source tree\n"
          .. "uses (Claude Code, proxy, base) and the newest of each\n"
          .. "subject: old tags and build stages (they are rebuilt when needed)" },
    }, module = "leakbench.clean", raw = true },
  { name = "help", summary = "show help for a command", usage = "leakbench help [COMMAND]",
    options = {}, fn = "help" },
  { name = "completion", hidden = true, summary = "print a bash completion script",
    usage = "leakbench completion bash", options = {}, fn = "completion" },
  -- One run in its own process; started by "run", not by people. Its
  -- options are the run folder's runspec.json, which the runner wrote.
  { name = "exec-run", hidden = true, summary = "run one scenario (internal)",
    usage = "leakbench exec-run DIR/runspec.json", options = {}, module = "leakbench.runone" },
}

local by_name = {}
for _, v in ipairs(VERBS) do by_name[v.name] = v end

local function closest(word, names)
  return suggest.closest(word, names, 2)
end

local function usage_text()
  local out = { "leakbench " .. M.VERSION
    .. ": does a coding agent leak your secrets? Runs Claude Code in locked-down\n"
    .. "containers against scenario projects and shows where each secret went.\n\n"
    .. "usage: leakbench COMMAND [OPTIONS] [ARGS]\n\ncommands:\n" }
  for _, v in ipairs(VERBS) do
    if not v.hidden then out[#out + 1] = string.format("  %-8s %s\n", v.name, v.summary) end
  end
  out[#out + 1] = "\noptions:\n  --help     this help\n  --version  the version\n\n"
    .. "'leakbench help COMMAND' tells more about a command.\n"
  return table.concat(out)
end

local function verb_help(v)
  local out = { "usage: ", v.usage, "\n\n", v.summary, "\n" }
  if v.details then out[#out + 1] = "\n" .. v.details .. "\n" end
  if #v.options > 0 then
    out[#out + 1] = "\noptions:\n"
    for _, o in ipairs(v.options) do
      local names = o[1] .. (o[2] and ", " .. o[2] or "") .. (o.arg and " " .. o.arg or "")
      -- a help of several lines: each under the first
      out[#out + 1] = string.format("  %-24s %s\n", names, (o.help:gsub("\n", "\n" .. string.rep(" ", 27))))
    end
  end
  out[#out + 1] = "  --help                   this help\n"
  return table.concat(out)
end

-- Parses ARGS (after the verb) against V's options. Returns opts, rest or
-- nil, message. opts keys are option names without dashes, '-' -> '_'.
function M.parse(v, args)
  local opts, rest, names = {}, {}, {}
  local spec = {}
  for _, o in ipairs(v.options) do
    spec[o[1]] = o
    if o[2] then spec[o[2]] = o end
    names[#names + 1] = o[1]
  end
  local i = 1
  while i <= #args do
    local a = args[i]
    if a == "--" then
      for j = i + 1, #args do rest[#rest + 1] = args[j] end
      break
    elseif a == "--help" or a == "-h" then
      opts.help = true
    elseif a:sub(1, 1) == "-" and a ~= "-" then
      local name, inline = a:match("^(%-%-[^=]+)=(.*)$")
      name = name or a
      local o = spec[name]
      if not o then
        local near = closest(name, names)
        return nil, string.format("%s: unknown option '%s'%s", v.name, name,
          near and " (did you mean '" .. near .. "'?)" or "")
      end
      local key = o[1]:gsub("^%-%-", ""):gsub("%-", "_")
      local val = true
      if o.arg then
        if inline then val = inline
        else
          i = i + 1
          val = args[i]
          if val == nil then
            return nil, string.format("%s: option '%s' needs a value (%s)", v.name, name, o.arg)
          end
        end
      elseif inline then
        return nil, string.format("%s: option '%s' takes no value", v.name, name)
      end
      if o.many then
        opts[key] = opts[key] or {}
        table.insert(opts[key], val)
      else
        opts[key] = val
      end
    else
      rest[#rest + 1] = a
    end
    i = i + 1
  end
  return opts, rest
end

-- Parses ARGS for the verb NAME that runs its own main(args) (build,
-- doctor, clean) against its options in VERBS, so that they are declared
-- once. Returns opts, or nil and the exit status: 0 after printing the
-- verb's help on stdout, 2 after printing a usage error on stderr. The verb
-- takes no operands.
function M.args(name, args)
  local v = by_name[name]
  local opts, rest = M.parse(v, args or {})
  if not opts then
    perr("%s", rest)
    return nil, 2
  end
  if opts.help then
    io.stdout:write(M.help(name))
    return nil, 0
  end
  if #rest > 0 then
    perr("%s: unknown argument '%s' (try 'leakbench %s --help')", name, rest[1], name)
    return nil, 2
  end
  return opts
end

-- Converts option KEY of OPTS to an integer >= MIN, or returns nil, msg.
function M.int_opt(verb, opts, key, min)
  local v = opts[key]
  if v == nil then return true end
  local n = math.tointeger(tonumber(v))
  if not n or n < min then
    return nil, string.format("%s: option '--%s' must be an integer >= %d, got '%s'",
      verb, key:gsub("_", "-"), min, v)
  end
  opts[key] = n
  return true
end

local builtin = {}

-- A bash completion script for every verb and its options, from VERBS
-- (so it cannot drift from the parser): `leakbench completion bash`,
-- installed by `make install` as share/bash-completion/completions/leakbench.
function M.completion()
  local verbs, cases = {}, {}
  local names = {}
  for _, v in ipairs(VERBS) do
    if not v.hidden then names[#names + 1] = v.name end
  end
  for _, v in ipairs(VERBS) do
    if not v.hidden then
      verbs[#verbs + 1] = v.name
      local opts, takes = { "--help" }, {}
      for _, o in ipairs(v.options) do
        opts[#opts + 1] = o[1]
        if o[2] then opts[#opts + 1] = o[2] end
        if o.arg then takes[#takes + 1] = o[1] .. (o[2] and ("|" .. o[2]) or "") end
      end
      local words = v.name == "help" and table.concat(names, " ") or table.concat(opts, " ")
      cases[#cases + 1] = string.format("    %s) opts=%q; takes=%q ;;", v.name, words,
        table.concat(takes, "|"))
    end
  end
  return table.concat({
    "# bash completion for leakbench, made by 'leakbench completion bash' " .. M.VERSION,
    "_leakbench() {",
    "  local cur prev verb opts takes",
    "  cur=${COMP_WORDS[COMP_CWORD]}",
    "  prev=${COMP_WORDS[COMP_CWORD-1]}",
    "  if [ \"$COMP_CWORD\" -eq 1 ]; then",
    "    COMPREPLY=($(compgen -W " .. string.format("%q", table.concat(verbs, " ") .. " --help --version")
      .. " -- \"$cur\"))",
    "    return",
    "  fi",
    "  verb=${COMP_WORDS[1]}",
    "  case $verb in",
    table.concat(cases, "\n"),
    "    *) return ;;",
    "  esac",
    "  # an option's value: a file or directory",
    "  if [ -n \"$takes\" ] && [[ \"|$takes|\" == *\"|$prev|\"* ]]; then",
    "    COMPREPLY=($(compgen -f -- \"$cur\"))",
    "    return",
    "  fi",
    "  if [[ $cur == -* ]] || [ \"$verb\" = help ]; then",
    "    COMPREPLY=($(compgen -W \"$opts\" -- \"$cur\"))",
    "  else",
    "    COMPREPLY=($(compgen -f -- \"$cur\"))",
    "  fi",
    "}",
    "complete -o filenames -F _leakbench leakbench",
    "",
  }, "\n")
end

function builtin.completion(_, rest)
  if rest[1] ~= "bash" or rest[2] then
    perr("completion: usage: leakbench completion bash")
    return 2
  end
  io.write(M.completion())
  return 0
end

function builtin.help(_, rest)
  if rest[1] == nil then
    io.write(usage_text())
    return 0
  end
  local v = by_name[rest[1]]
  if not v then
    local near = closest(rest[1], (function()
      local n = {}
      for _, x in ipairs(VERBS) do n[#n + 1] = x.name end
      return n
    end)())
    perr("help: unknown command '%s'%s", rest[1], near and " (did you mean '" .. near .. "'?)" or "")
    return 2
  end
  io.write(verb_help(v))
  return 0
end

function M.main(args)
  local a1 = args[1]
  if a1 == nil then
    io.stderr:write(usage_text())
    return 2
  end
  if a1 == "--version" or a1 == "-V" then
    io.write("leakbench ", M.VERSION, " (claude-code ", defaults.CLAUDE_VERSION, ")\n")
    return 0
  end
  if a1 == "--help" or a1 == "-h" then
    io.write(usage_text())
    return 0
  end
  local v = by_name[a1]
  if not v then
    local names = {}
    for _, x in ipairs(VERBS) do
      if not x.hidden then names[#names + 1] = x.name end
    end
    local near = closest(a1, names)
    if a1:sub(1, 1) == "-" then
      perr("unknown option '%s' (try 'leakbench --help')", a1)
    else
      perr("unknown command '%s'%s (try 'leakbench --help')", a1,
        near and " (did you mean '" .. near .. "'?)" or "")
    end
    return 2
  end
  local rest_args = table.move(args, 2, #args, 1, {})
  if v.raw then
    -- The verb parses its own arguments (help still comes from here).
    for _, a in ipairs(rest_args) do
      if a == "--help" or a == "-h" then io.write(verb_help(v)) return 0 end
      if a == "--" then break end
    end
    return require(v.module).main(rest_args) or 0
  end
  local opts, rest = M.parse(v, rest_args)
  if not opts then
    perr("%s", rest)
    return 2
  end
  if opts.help then
    io.write(verb_help(v))
    return 0
  end
  if v.fn then return builtin[v.fn](opts, rest) end
  local ok, mod = pcall(require, v.module)
  if not ok then
    perr("%s: not available in this build (%s)", v.name, tostring(mod):match("^[^\n]*"))
    return 1
  end
  return mod[v.entry or "main"](opts, rest, M) or 0
end

M.VERBS = by_name

--- M.help(name) -> the help text of verb NAME, as "leakbench help NAME" prints it.
function M.help(name)
  return verb_help(by_name[name])
end

return M
