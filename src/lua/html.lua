-- OUT/report.html: the results of a suite as one self-contained page, for
-- people to click through. Written by run, report, rescore and merge.
--
-- One file, no network request at all: inline CSS and JS, no fonts, no
-- images but none, and a Content-Security-Policy that forbids every fetch
-- even if some text in it looked like a URL. The matrix (colored by
-- verdict, with the channel letters and forms of report.cell), the
-- per-subject summary (wire leaks, the paired difference against the
-- baseline, utility, claims), filters by tag, subject and verdict, and a
-- page per run (a section shown by its #anchor; runpage.lua): the prompt,
-- the conversation, every check, the subject, the findings grouped, links
-- to the evidence files, the timings. A subject's pass beside an invalid
-- baseline is not green ("unproven"). The filters can be set from the address too:
-- report.html?tag=files&verdict=leak&subject=baseline,redactor.
--
-- No secret is ever in the file, raw or encoded. Text from the evidence
-- (tool inputs and results) passes through keep.mask with the run's kept
-- secrets (DIR/secrets.json); a run without that file shows no such text.
-- Before writing, the whole page is scanned for every secret of every run,
-- and a page in which the detector finds one is not written.
local core = require "leakbench.core"
local runpage = require "leakbench.runpage"
local report = require "leakbench.report"
local keep = require "leakbench.keep"
local evidence = require "leakbench.evidence"
local printable = require "leakbench.printable"

local M = {}

M.FILE = "report.html"
M.MAX_STREAM = 32 << 20

-- S escaped for HTML text and attribute values: printable.lua's one
-- form for HTML (control characters and non-characters shown as U+FFFD).
local h = printable.html
M.escape = h

local function slug(s)
  return (tostring(s):gsub("[^%w_.-]", "_"))
end

-- Whether the document being rendered has runs of several Claude Code
-- versions: only then do anchors and titles name a run's version (set by
-- M.render for the page it makes).
local several_versions = false

-- The anchor of run R's page.
function M.anchor(r)
  return "run-" .. slug(r.scenario) .. "--" .. slug(r.subject)
    .. (several_versions and r.claude_version and ("--" .. slug(r.claude_version)) or "") .. "--"
    .. (math.tointeger(r.repeat_index) or 1)
end

-- The folder of run R: R.dir when it holds the run, else the shortest
-- tail of R.dir found under BASE (results moved or copied elsewhere, a
-- shard's folder collected from another machine). nil when none.
function M.run_dir(base, r)
  local d = type(r.dir) == "string" and r.dir or nil
  if not d then return nil end
  if core.stat(d .. "/result.json") then return d end
  local parts = {}
  for p in d:gmatch("[^/]+") do parts[#parts + 1] = p end
  for i = #parts, 1, -1 do
    local cand = base .. "/" .. table.concat(parts, "/", i)
    if core.stat(cand .. "/result.json") then
      -- the shortest tail that works is the one nearest the base
      local best = cand
      for j = i + 1, #parts do
        local c2 = base .. "/" .. table.concat(parts, "/", j)
        if core.stat(c2 .. "/result.json") then best = c2 end
      end
      return best
    end
  end
  return nil
end

-- The color class of a cell of RUNS: the worst of its runs.
local RANK = { pass = 1, leak = 2, invalid = 3, fail = 4, timeout = 5, error = 6,
  skipped = 5, interrupted = 5 }

local function verdict_class(r)
  if r.verdict == "pass" then
    return next(report.leaked(r)) and "leak" or "pass"
  end
  return RANK[r.verdict] and r.verdict or "error"
end

local function cell_class(runs)
  local worst, kinds = nil, {}
  for _, r in ipairs(runs) do
    local c = verdict_class(r)
    kinds[c] = true
    if r.claim == "broken" then kinds.broken = true end
    if not worst or RANK[c] > RANK[worst] then worst = c end
  end
  local list = {}
  for k in pairs(kinds) do list[#list + 1] = k end
  table.sort(list)
  return worst or "none", table.concat(list, " ")
end

local CSS = [[
*{box-sizing:border-box}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;margin:0;color:#1d232a;background:#f6f7f9}
header{background:#1d2b3a;color:#fff;padding:14px 24px}
header h1{margin:0;font-size:20px}
header .meta{opacity:.8;font-size:13px;margin-top:2px}
main,section.run{padding:16px 24px}
h2{font-size:16px;margin:18px 0 8px}
table{border-collapse:collapse;background:#fff}
th,td{border:1px solid #d5d9df;padding:5px 9px;text-align:left;vertical-align:top}
th{background:#eef1f5;font-weight:600}
td.cell a{color:inherit;text-decoration:none;display:block}
td.pass{background:#d8f3dc}
td.leak{background:#ffd6d6}
td.fail{background:#ffe5b4}
td.invalid{background:#e6dcf5}
td.error,td.timeout,td.skipped,td.interrupted{background:#e3e5e8;color:#555}
td.none{background:#fafafa;color:#aaa}
td.dim{opacity:.25}
td.broken{box-shadow:inset 0 0 0 2px #c1121f}
.letters{font-family:ui-monospace,"DejaVu Sans Mono",monospace;font-weight:700}
.filters{display:flex;gap:18px;flex-wrap:wrap;align-items:center;margin:8px 0 12px;padding:8px 12px;background:#fff;border:1px solid #d5d9df}
.filters label{margin-right:8px}
.legend{color:#555;font-size:12px;margin-top:8px}
.badge{display:inline-block;padding:1px 8px;border-radius:10px;font-weight:600}
.badge.pass{background:#d8f3dc}.badge.leak{background:#ffd6d6}.badge.fail{background:#ffe5b4}
.badge.invalid{background:#e6dcf5}.badge.error,.badge.timeout,.badge.skipped,.badge.interrupted{background:#e3e5e8}
pre{background:#fff;border:1px solid #d5d9df;padding:8px;white-space:pre-wrap;word-break:break-all;margin:4px 0;max-height:320px;overflow:auto;font:12px/1.4 ui-monospace,"DejaVu Sans Mono",monospace}
ol.calls>li{margin-bottom:10px}
.finding{background:#fff;border-left:4px solid #c1121f;padding:6px 10px;margin:6px 0}
.finding code{font:12px ui-monospace,"DejaVu Sans Mono",monospace;background:#fff4f4}
section.run{display:none}
section.run:target{display:block}
body:has(section.run:target) main{display:none}
a.back{font-size:13px}
.note{color:#666;font-style:italic}
]]

local JS = [[
(function(){
  var rows=[].slice.call(document.querySelectorAll('#matrix tbody tr'));
  var tag=document.getElementById('f-tag'), verdict=document.getElementById('f-verdict');
  var subs=[].slice.call(document.querySelectorAll('input.f-subject'));
  function apply(){
    var t=tag.value, v=verdict.value, on={};
    subs.forEach(function(c){on[c.value]=c.checked;});
    document.querySelectorAll('#matrix [data-subject]').forEach(function(el){
      el.style.display=on[el.getAttribute('data-subject')]?'':'none';});
    rows.forEach(function(tr){
      var tags=(' '+tr.getAttribute('data-tags')+' '), any=false;
      tr.querySelectorAll('td.cell').forEach(function(td){
        var ok=v===''||(' '+td.getAttribute('data-verdicts')+' ').indexOf(' '+v+' ')>=0;
        td.classList.toggle('dim',!ok);
        if(ok&&on[td.getAttribute('data-subject')]&&td.getAttribute('data-verdicts')!=='')any=true;});
      tr.style.display=(t===''||tags.indexOf(' '+t+' ')>=0)&&(v===''||any)?'':'none';});
  }
  tag.addEventListener('change',apply);verdict.addEventListener('change',apply);
  subs.forEach(function(c){c.addEventListener('change',apply);});
  var q=new URLSearchParams(location.search);
  if(q.get('tag'))tag.value=q.get('tag');
  if(q.get('verdict'))verdict.value=q.get('verdict');
  if(q.get('subject')){var want=(','+q.get('subject')+',');
    subs.forEach(function(c){c.checked=want.indexOf(','+c.value+',')>=0;});}
  apply();
})();
]]

-- The page of one run. CTX: { secrets = list or nil, scanner = or nil,
-- calls = list or nil, why = text when the calls are not shown }.
local function run_page(r, ctx, out)
  local cls = verdict_class(r)
  out[#out + 1] = string.format('<section class="run" id="%s"><a class="back" href="#">← matrix</a>\n', h(M.anchor(r)))
  out[#out + 1] = string.format('<h2>%s × %s%s #%d <span class="badge %s">%s</span></h2>\n',
    h(r.scenario), h(r.subject),
    several_versions and r.claude_version and (" · claude-code " .. h(r.claude_version)) or "",
    math.tointeger(r.repeat_index) or 1, cls, h(report.cell(r)))
  if r.reason then out[#out + 1] = "<p><b>reason:</b> " .. h(r.reason:sub(1, 2000)) .. "</p>\n" end
  if type(r.cause) == "string" then
    out[#out + 1] = '<p class="cause"><b>cause:</b> ' .. h(r.cause:sub(1, 2000)) .. "</p>\n"
  end
  out[#out + 1] = "<p>" .. h(r.scenario_file or "") .. (r.subject_file and (" · " .. h(r.subject_file)) or "")
    .. (r.run_id and (" · run " .. h(r.run_id)) or "") .. "</p>\n"
  -- permission mode, who asked the model, what was refused
  local facts = {}
  local mode = type(r.startup) == "table" and r.startup.permission_mode or r.permission_mode
  if mode then facts[#facts + 1] = "permission mode <code>" .. h(mode) .. "</code>" end
  if type(r.requests) == "table" then
    local names = {}
    for k in pairs(r.requests) do names[#names + 1] = k end
    table.sort(names)
    local parts = {}
    for _, k in ipairs(names) do
      parts[#parts + 1] = h(math.tointeger(r.requests[k]) or r.requests[k]) .. " from " .. h(k)
    end
    facts[#facts + 1] = "model requests: " .. table.concat(parts, ", ")
  end
  if type(r.permission_denials) == "table" and #r.permission_denials > 0 then
    local parts = {}
    for _, d in ipairs(r.permission_denials) do
      local who = d.by == "unanswered" and "nobody answered" or ("denied by " .. h(d.by))
      parts[#parts + 1] = h(d.tool) .. " (" .. who .. ")"
    end
    facts[#facts + 1] = "permission denials: " .. table.concat(parts, ", ")
  end
  if #facts > 0 then out[#out + 1] = "<p>" .. table.concat(facts, " · ") .. "</p>\n" end
  -- prompt
  out[#out + 1] = "<h3>Prompt</h3>\n"
  if type(r.prompt) == "string" then
    local prompt = ctx.secrets and (keep.mask(r.prompt, ctx.secrets, ctx.scanner)) or r.prompt
    out[#out + 1] = "<pre class=\"prompt\">" .. h(prompt) .. "</pre>\n"
  else
    out[#out + 1] = '<p class="note">not recorded for this run</p>\n'
  end
  runpage.sections(r, ctx, out)
  out[#out + 1] = "</section>\n"
end

-- The evidence context of run R for its page, and its secrets (a list,
-- possibly empty). BASE: the results folder, to find the run's folder.
local function run_context(base, r)
  local dir = M.run_dir(base, r)
  if not dir then
    return { why = "the run's folder is not there (" .. tostring(r.dir) .. ")" }, {}
  end
  local kept = keep.load(dir)
  if not kept then
    return { why = "not shown: this run kept no secrets file, so its text cannot be masked", dir = dir }, {}
  end
  local secrets = {}
  for _, s in ipairs(kept.secrets) do secrets[#secrets + 1] = s end
  for _, c in ipairs(kept.canaries) do secrets[#secrets + 1] = c.value end
  local text = core.read_beneath(dir, "stream.jsonl", M.MAX_STREAM)
  local ctx = { secrets = secrets, dir = dir }
  if text then
    ctx.events = (evidence.parse_stream(text))
  else
    ctx.why = "no stream.jsonl in the run's folder"
  end
  ctx.settings = core.read_beneath(dir, "settings.json", 1 << 20)
  return ctx, secrets
end

-- The matrix's layout for DOC (L): scenarios and subjects in the order
-- report.matrix has them, the versions, its columns, its runs by cell,
-- and the tags of each scenario and of all.
local function layout(doc)
  local L = {}
  L.scen, L.subj = report.orders(doc)
  L.vers = report.versions(doc)
  L.multi = #L.vers > 1
  L.cols = {}
  for _, sj in ipairs(L.subj) do
    if L.multi then
      for _, v in ipairs(L.vers) do L.cols[#L.cols + 1] = { subject = sj, version = v } end
    else
      L.cols[#L.cols + 1] = { subject = sj }
    end
  end
  L.cells = {}
  for _, r in ipairs(doc.runs) do
    local key = r.scenario .. "\0" .. r.subject .. "\0" .. (L.multi and tostring(r.claude_version) or "")
    L.cells[key] = L.cells[key] or {}
    table.insert(L.cells[key], r)
  end
  local tags = {}
  L.scen_tags, L.all_tags = {}, {}
  for _, s in ipairs(doc.scenarios or {}) do
    L.scen_tags[s.name] = s.tags or {}
    for _, t in ipairs(s.tags or {}) do
      if not tags[t] then tags[t] = true L.all_tags[#L.all_tags + 1] = t end
    end
  end
  table.sort(L.all_tags)
  return L
end

-- The page's head, its header line, OPTS.top and the rescore note.
local function head_html(out, doc, L, opts)
  out[#out + 1] = '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">\n'
  out[#out + 1] = '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
    .. 'style-src \'unsafe-inline\'; script-src \'unsafe-inline\'; img-src data:; form-action \'none\'; '
    .. 'base-uri \'none\'">\n'
  out[#out + 1] = '<meta name="viewport" content="width=device-width">\n<title>leakbench report</title>\n<style>'
    .. CSS .. runpage.CSS .. '</style></head><body>\n'
  local images = type(doc.images) == "table" and doc.images or {}
  out[#out + 1] = string.format('<header><h1>leakbench report</h1><div class="meta">leakbench %s · %s%s · %s model%s · '
    .. '%d scenarios × %d subjects · %d runs · finished %s%s</div></header>\n', h(doc.leakbench),
    L.multi and ("claude-code " .. h(table.concat(L.vers, ", "))) or h(images.claude or "no images"),
    "", h(doc.mode or "scripted"), doc.model and (" " .. h(doc.model)) or "", #L.scen, #L.subj, #doc.runs,
    h(doc.finished or "?"), doc.plan and (" · plan " .. h(doc.plan.hash and doc.plan.hash:sub(1, 12) or "")) or "")
  out[#out + 1] = "<main>\n"
  if opts and opts.top then out[#out + 1] = opts.top end
  if doc.rescore then
    out[#out + 1] = string.format('<p class="rescore"><b>rescored</b> %s from %s: %d verdict%s changed</p>\n',
      h(doc.rescore.at or ""), h(doc.rescore.from or ""), #(doc.rescore.changed or {}),
      #(doc.rescore.changed or {}) == 1 and "" or "s")
  end
end

-- The filters above the matrix: tag, verdict, subjects.
local function filters_html(out, L)
  out[#out + 1] = '<div class="filters"><span><label for="f-tag">tag</label>'
    .. '<select id="f-tag"><option value="">all</option>'
  for _, t in ipairs(L.all_tags) do out[#out + 1] = '<option value="' .. h(t) .. '">' .. h(t) .. "</option>" end
  out[#out + 1] = '</select></span><span><label for="f-verdict">verdict</label>'
    .. '<select id="f-verdict"><option value="">all</option>'
  for _, v in ipairs({ "pass", "leak", "fail", "invalid", "error", "timeout", "skipped", "interrupted", "broken" }) do
    out[#out + 1] = '<option value="' .. v .. '">' .. (v == "broken" and "claim broken" or v) .. "</option>"
  end
  out[#out + 1] = "</select></span><span>subjects "
  for _, sj in ipairs(L.subj) do
    out[#out + 1] = string.format('<label><input type="checkbox" class="f-subject" value="%s" checked> %s</label>',
      h(sj), h(sj))
  end
  out[#out + 1] = "</span></div>\n"
end

-- One cell of the matrix: scenario SC, column C.
local function cell_html(out, L, sc, c)
  local runs = L.cells[sc .. "\0" .. c.subject .. "\0" .. (c.version or "")]
  if not runs then
    out[#out + 1] = string.format('<td class="cell none" data-subject="%s" data-verdicts="">–</td>', h(c.subject))
  else
    local cls, kinds = cell_class(runs)
    -- a pass beside an invalid baseline proves nothing: the attack did
    -- not happen where the scenario says it does
    local base_runs = c.subject ~= "baseline" and L.cells[sc .. "\0baseline\0" .. (c.version or "")]
    local unproven = false
    for _, b in ipairs(base_runs or {}) do unproven = unproven or b.verdict == "invalid" end
    if unproven and cls == "pass" then cls = "unproven" end
    local text = report.cell_repeats(runs)
    text = h(text):gsub("leak ([WTASLE][WTASLE ]*)", function(l)
      return 'leak <span class="letters">' .. l .. "</span>"
    end)
    local links = {}
    if #runs == 1 then
      text = string.format('<a href="#%s">%s</a>', h(M.anchor(runs[1])), text)
    else
      for _, r in ipairs(runs) do
        links[#links + 1] = string.format('<a href="#%s" style="display:inline">#%d</a>', h(M.anchor(r)),
          math.tointeger(r.repeat_index) or 1)
      end
    end
    out[#out + 1] = string.format('<td class="cell %s%s" data-subject="%s" data-verdicts="%s"%s>%s%s</td>', cls,
      kinds:find("broken") and " broken" or "", h(c.subject), h(kinds),
      unproven and ' title="the baseline of this row is invalid: this cell proves nothing"' or "", text,
      #links > 0 and ("<div>" .. table.concat(links, " ") .. "</div>") or "")
  end
end

-- The matrix: a row per scenario, a column per subject (and version).
local function matrix_html(out, L)
  out[#out + 1] = '<table id="matrix"><thead><tr><th rowspan="' .. (L.multi and 2 or 1) .. '">scenario</th>'
  for _, sj in ipairs(L.subj) do
    out[#out + 1] = string.format('<th data-subject="%s"%s>%s</th>', h(sj),
      L.multi and (' colspan="' .. #L.vers .. '"') or "", h(sj))
  end
  out[#out + 1] = "</tr>"
  if L.multi then
    out[#out + 1] = "<tr>"
    for _, c in ipairs(L.cols) do
      out[#out + 1] = string.format('<th data-subject="%s" class="version">%s</th>', h(c.subject), h(c.version))
    end
    out[#out + 1] = "</tr>"
  end
  out[#out + 1] = "</thead><tbody>\n"
  for _, sc in ipairs(L.scen) do
    out[#out + 1] = string.format('<tr data-scenario="%s" data-tags="%s"><th>%s</th>', h(sc),
      h(table.concat(L.scen_tags[sc] or {}, " ")), h(sc))
    for _, c in ipairs(L.cols) do
      cell_html(out, L, sc, c)
    end
    out[#out + 1] = "</tr>\n"
  end
  out[#out + 1] = "</tbody></table>\n"
  out[#out + 1] = '<div class="legend">' .. h(report.LEGEND)
    .. ". A cell names the form when it was not the raw text.</div>\n"
end

-- The summary table, a row per subject, and the exit status's reasons.
local function summary_html(out, doc)
  local summary = (doc.summary or {}).subjects or {}
  out[#out + 1] = '<h2>Summary</h2>\n<table id="summary"><thead><tr><th>subject</th><th>leaks on the wire</th>'
    .. "<th>vs baseline (paired)</th><th>any channel</th><th>utility (tasks done)</th><th>claims</th>"
    .. "</tr></thead><tbody>\n"
  for _, s in ipairs(summary) do
    local v = s.vs_baseline
    local claims = "–"
    if s.claims and s.claims.total > 0 then
      claims = string.format("%d/%d held", s.claims.held, s.claims.total)
      if #s.claims.broken > 0 then claims = claims .. " (broken: " .. table.concat(s.claims.broken, ", ") .. ")" end
      if #s.claims.untested > 0 then
        claims = claims .. " (untested: " .. table.concat(s.claims.untested, ", ") .. ")"
      end
    end
    out[#out + 1] = string.format('<tr data-subject="%s"><th>%s</th><td>%d/%d [%.2f, %.2f]</td><td>%s</td>'
      .. "<td>%d/%d</td><td>%s</td><td class=\"claims\">%s</td></tr>\n", h(s.name), h(s.name), s.wire.k, s.wire.n,
      s.wire.lo or 0, s.wire.hi or 0,
      v and v.pairs > 0 and h(report.format_paired(v) .. " · " .. string.format("%d", v.pairs) .. " pairs") or "–",
      s.any.k, s.any.n, s.utility.n > 0 and string.format("%d/%d", s.utility.k, s.utility.n) or "–", h(claims))
  end
  out[#out + 1] = "</tbody></table>\n"
  out[#out + 1] = '<div class="legend">vs baseline: the subject\'s wire leak rate minus the baseline\'s, paired by '
    .. "scenario and repeat; 95% Newcombe interval, exact McNemar p.</div>\n"
  local st = doc.status
  if type(st) == "table" then
    out[#out + 1] = "<h2>Exit status " .. h(string.format("%d", st.status)) .. "</h2>\n"
    if #(st.reasons or {}) > 0 then
      out[#out + 1] = "<ul>"
      for i, why in ipairs(st.reasons) do
        if i > 50 then out[#out + 1] = "<li>… " .. (#st.reasons - 50) .. " more</li>" break end
        out[#out + 1] = "<li>" .. h(why) .. "</li>"
      end
      out[#out + 1] = "</ul>\n"
    end
  end
end

-- A page per run of DOC, each scanned for its own secrets; every run's
-- secrets returned.
local function run_pages(out, doc, base, page_dir, L)
  local claim_states = runpage.claim_states(doc, L.multi)
  local all = {}
  for _, r in ipairs(doc.runs) do
    local ctx, secrets = run_context(base, r)
    for _, s in ipairs(secrets) do all[#all + 1] = s end
    local scanner
    local scan_list = {}
    for _, s in ipairs(secrets) do if #s >= 8 then scan_list[#scan_list + 1] = s end end
    if #scan_list > 0 then scanner = core.scanner(scan_list) ctx.secrets = scan_list ctx.scanner = scanner end
    ctx.page_dir, ctx.live = page_dir or base, doc.mode == "live"
    ctx.claims = claim_states[r.subject .. (L.multi and ("@" .. tostring(r.claude_version)) or "")]
    run_page(r, ctx, out)
    if scanner then scanner:close() end
  end
  return all
end

-- The page for DOC (a results document). BASE: the folder of its
-- results.json; PAGE_DIR (default BASE): where the page goes, for the
-- links to the runs' evidence files; OPTS.top: HTML put above the matrix
-- (leakbench diff --report: the changes since another result). Returns the
-- HTML text and the list of every run's secrets.
function M.render(doc, base, page_dir, opts)
  -- The matrix's order and versions, as report.matrix has them.
  local L = layout(doc)
  several_versions = L.multi
  local out = {}
  head_html(out, doc, L, opts)
  filters_html(out, L)
  matrix_html(out, L)
  summary_html(out, doc)
  out[#out + 1] = "</main>\n"
  local all = run_pages(out, doc, base, page_dir, L)
  out[#out + 1] = "<script>" .. JS .. "</script>\n</body></html>\n"
  return table.concat(out), all
end

-- Writes DIR/report.html for DOC; BASE (default DIR) is where its runs'
-- folders are looked for. Returns the path, or nil and why: the page is
-- not written when the detector finds any run's secret in it.
function M.write(dir, doc, base, opts)
  local text, secrets = M.render(doc, base or dir, dir, opts)
  local uniq, seen = {}, {}
  for _, s in ipairs(secrets) do
    if #s >= 8 and not seen[s] then seen[s] = true uniq[#uniq + 1] = s end
  end
  if #uniq > 0 then
    local sc = core.scanner(uniq)
    local found = sc:scan(text)
    sc:close()
    if #found > 0 then
      return nil, string.format("report.html would hold secret %s (as %s at byte %d): not written",
        core.secret_hash(uniq[found[1].secret]), found[1].form, found[1].offset)
    end
  end
  local path = dir .. "/" .. M.FILE
  local ok, err = core.write_file(path .. ".tmp", text, 420)
  if not ok then return nil, err end
  local rok, rerr = os.rename(path .. ".tmp", path)
  if not rok then return nil, rerr end
  return path
end

-- html.write for the verbs: a failure is said on stderr, never raised
-- (the results are written already). Returns the path or nil.
function M.try_write(dir, doc, base, opts)
  local ok, path, err = pcall(M.write, dir, doc, base, opts)
  if not ok or not path then
    io.stderr:write("leakbench: cannot write '", dir, "/", M.FILE, "': ", tostring(ok and err or path), "\n")
    return nil
  end
  return path
end

return M
