-- Rendering of the sidecar's results as buffer lines. Pure functions of the decoded JSON;
-- every field is untrusted (missing, wrong type, JSON null = vim.NIL, extra keys). JSON object
-- key order is lost in Lua, so generic fields are sorted by name.
local M = {}

local islist = vim.islist or vim.tbl_islist

--- Longest snippet shown under a search result, characters.
M.SNIPPET_CHARS = 200

M.SILENCE = 'The suggester stays silent for this call: no intent matched, or the suggestion was '
  .. 'dismissed, or the suggester is disabled (suggester.enabled).'

local function is_obj(v)
  return type(v) == 'table' and (next(v) == nil or not islist(v))
end

local function str(v)
  return type(v) == 'string' and v or ''
end

local function num(v)
  return type(v) == 'number' and v or nil
end

local function flat(text)
  return (text:gsub('%s+', ' '):gsub('^ ', ''):gsub(' $', ''))
end

local function clip(text, max)
  text = flat(text)
  if vim.fn.strchars(text) > max then
    return vim.fn.strcharpart(text, 0, max - 1) .. '…'
  end
  return text
end

local function sorted_keys(t)
  local keys = {}
  for k in pairs(t) do
    keys[#keys + 1] = tostring(k)
  end
  table.sort(keys)
  return keys
end

--- A scalar as text: nil/null → "—", booleans yes/no, numbers as Lua prints integers.
function M.scalar(v)
  if v == nil or v == vim.NIL then
    return '—'
  elseif type(v) == 'boolean' then
    return v and 'yes' or 'no'
  elseif type(v) == 'number' then
    if v == math.floor(v) and math.abs(v) < 1e15 then
      return string.format('%d', v)
    end
    return string.format('%.3f', v)
  end
  return flat(tostring(v))
end

--- Append `key: value` lines for any JSON value at `indent` (nested objects indent further).
function M.value_lines(lines, key, v, indent, depth)
  depth = depth or 0
  local pad = string.rep('  ', indent)
  local label = key and (key .. ': ') or ''
  if depth > 6 then
    lines[#lines + 1] = pad .. label .. '…'
  elseif type(v) == 'table' and next(v) == nil then
    lines[#lines + 1] = pad .. label .. 'none'
  elseif type(v) == 'table' and islist(v) then
    local simple = true
    for _, x in ipairs(v) do
      if type(x) == 'table' then
        simple = false
      end
    end
    local objects = true
    for _, x in ipairs(v) do
      if not is_obj(x) then
        objects = false
      end
    end
    if objects then
      -- a list of records: one `- k=v k=v` line each
      lines[#lines + 1] = pad .. (key or '') .. ':'
      for _, x in ipairs(v) do
        local parts = {}
        for _, k in ipairs(sorted_keys(x)) do
          local sub = {}
          M.value_lines(sub, nil, x[k], 0, depth + 1)
          parts[#parts + 1] = k .. '=' .. table.concat(sub, ' ')
        end
        lines[#lines + 1] = pad .. '  - ' .. table.concat(parts, ' ')
      end
    elseif simple then
      local parts = {}
      for _, x in ipairs(v) do
        parts[#parts + 1] = M.scalar(x)
      end
      lines[#lines + 1] = pad .. label .. table.concat(parts, ', ')
    else
      lines[#lines + 1] = pad .. (key or '') .. ':'
      for i, x in ipairs(v) do
        M.value_lines(lines, tostring(i), x, indent + 1, depth + 1)
      end
    end
  elseif type(v) == 'table' then
    lines[#lines + 1] = pad .. (key or '') .. ':'
    for _, k in ipairs(sorted_keys(v)) do
      M.value_lines(lines, k, v[k], indent + 1, depth + 1)
    end
  else
    lines[#lines + 1] = pad .. label .. M.scalar(v)
  end
end

local function host_of(url)
  return url:match('^%a[%w+.-]*://([^/?#]+)') or ''
end

--- `searxng=ok (12 ms), duckduckgo=HTTP 403 (40 ms)`.
function M.attempts_line(attempts)
  if type(attempts) ~= 'table' then
    return ''
  end
  local parts = {}
  for _, a in ipairs(attempts) do
    if is_obj(a) then
      local ms = num(a.ms) and string.format(' (%d ms)', a.ms) or ''
      parts[#parts + 1] = (str(a.provider) ~= '' and a.provider or '?') .. '=' .. (str(a.outcome) ~= '' and a.outcome or '?') .. ms
    end
  end
  return table.concat(parts, ', ')
end

--- `quick · 5 results (truncated) · 120 ms · reward 0.912 · searxng=ok (12 ms)`.
function M.search_summary(result)
  result = is_obj(result) and result or {}
  local sources = type(result.sources) == 'table' and result.sources or {}
  local n = #sources
  local parts = {
    str(result.strategy) ~= '' and result.strategy or '?',
    string.format('%d result%s%s', n, n == 1 and '' or 's', result.truncated == true and ' (truncated)' or ''),
  }
  if num(result.durationMs) then
    parts[#parts + 1] = string.format('%d ms', result.durationMs)
  end
  if num(result.reward) then
    parts[#parts + 1] = string.format('reward %.3f', result.reward)
  end
  local attempts = M.attempts_line(result.attempts)
  if attempts ~= '' then
    parts[#parts + 1] = attempts
  end
  return table.concat(parts, ' · ')
end

--- Search results as lines: a header, the summary, then `N. title` / URL / snippet per source.
--- Returns lines and the list of URLs (index = result number).
function M.search_lines(query, result)
  local lines = { 'DSH search: ' .. flat(str(query)), M.search_summary(result), '' }
  local urls = {}
  local sources = is_obj(result) and type(result.sources) == 'table' and result.sources or {}
  for _, s in ipairs(sources) do
    if is_obj(s) and str(s.url) ~= '' then
      urls[#urls + 1] = s.url
      local title = str(s.title) ~= '' and clip(s.title, 120) or s.url
      lines[#lines + 1] = string.format('%d. %s', #urls, title)
      lines[#lines + 1] = '   ' .. s.url .. (host_of(s.url) == '' and '  (not a web address)' or '')
      local date = str(s.publishedAt) ~= '' and (s.publishedAt:sub(1, 10) .. ' · ') or ''
      local snippet = clip(date .. str(s.snippet), M.SNIPPET_CHARS)
      if snippet ~= '' then
        lines[#lines + 1] = '   ' .. snippet
      end
      lines[#lines + 1] = ''
    end
  end
  if #urls == 0 then
    lines[#lines + 1] = 'No results.'
  end
  return lines, urls
end

--- Every `{alpha, beta}` under the bandit's status: rows {cls, arm, alpha, beta, mean, extra},
--- sorted by class ('' = the global arms first) then arm.
function M.posteriors(bandit)
  local rows = {}
  local function walk(node, path)
    if not is_obj(node) or #path > 6 then
      return
    end
    local extra = {}
    for k, v in pairs(node) do
      if type(v) ~= 'table' then
        extra[k] = v
      end
    end
    local names = {}
    for _, p in ipairs(path) do
      if p ~= 'arms' and p ~= 'posteriors' and p ~= 'classes' then
        names[#names + 1] = p
      end
    end
    for _, k in ipairs(sorted_keys(node)) do
      local v = node[k]
      if is_obj(v) and num(v.alpha) and num(v.beta) then
        local mean = num(v.mean) or ((v.alpha + v.beta) > 0 and v.alpha / (v.alpha + v.beta) or 0)
        rows[#rows + 1] = { cls = table.concat(names, ' / '), arm = k, alpha = v.alpha, beta = v.beta, mean = mean,
          extra = #path > 0 and extra or {} }
      else
        local sub = vim.deepcopy(path)
        sub[#sub + 1] = k
        walk(v, sub)
      end
    end
  end
  walk(bandit, {})
  table.sort(rows, function(a, b)
    if a.cls ~= b.cls then
      return a.cls < b.cls
    end
    return a.arm < b.arm
  end)
  return rows
end

local function has_posteriors(v)
  return #M.posteriors({ x = v }) > 0
end

local function rest_lines(lines, obj, skip, indent)
  for _, k in ipairs(sorted_keys(obj)) do
    if not vim.tbl_contains(skip, k) then
      M.value_lines(lines, k, obj[k], indent)
    end
  end
end

--- The whole `dsh/status` as readable lines: Sidecar, Router, Bandit, Suggester, Other.
function M.status_lines(status)
  local s = is_obj(status) and status or {}
  local lines = { 'DSH sidecar status', '', 'Sidecar' }
  M.value_lines(lines, 'version', s.version, 1)
  M.value_lines(lines, 'workspace', s.workspace, 1)
  if is_obj(s.state) then
    rest_lines(lines, s.state, {}, 1)
  end
  if is_obj(s.router) then
    local r = s.router
    lines[#lines + 1] = ''
    lines[#lines + 1] = 'Router'
    local chain = type(r.chain) == 'table' and r.chain or {}
    -- provider health (a list of records keyed by provider) joins the chain lines
    local health, merged = {}, type(r.health) == 'table' and islist(r.health)
    for _, h in ipairs(merged and r.health or {}) do
      if is_obj(h) and str(h.provider) ~= '' then
        health[h.provider] = h
      else
        merged = false
      end
    end
    if #chain == 0 then
      lines[#lines + 1] = '  chain: none (searches will fail)'
    else
      lines[#lines + 1] = '  chain (tried in order):'
      for i, c in ipairs(chain) do
        if is_obj(c) then
          local line = string.format('    %d. %s  %s', i, M.scalar(c.provider), M.scalar(c.baseUrl))
          local more = {}
          local h = merged and health[c.provider] or {}
          if h.state ~= nil then
            more[#more + 1] = '[' .. M.scalar(h.state) .. ']'
          end
          for _, src in ipairs({ c, h }) do
            for _, k in ipairs(sorted_keys(src)) do
              if k ~= 'provider' and k ~= 'baseUrl' and not (src == h and k == 'state') then
                local sub = {}
                M.value_lines(sub, nil, src[k], 0)
                more[#more + 1] = k .. '=' .. table.concat(sub, ' ')
              end
            end
          end
          if #more > 0 then
            line = line .. '  ' .. table.concat(more, ' ')
          end
          lines[#lines + 1] = line
        end
      end
    end
    -- each provider named but not used, with why: a malformed setting's reason is its health
    -- record's last outcome (`skipped: invalid config ($VAR: …)`); otherwise no key or endpoint
    local unused = type(r.unavailable) == 'table' and islist(r.unavailable) and r.unavailable or nil
    if unused and #unused > 0 then
      lines[#lines + 1] = '  not used:'
      for _, pid in ipairs(unused) do
        local h = merged and type(pid) == 'string' and health[pid] or {}
        local why = str(h.lastOutcome) ~= '' and h.lastOutcome or 'not configured (no key or endpoint)'
        lines[#lines + 1] = '    - ' .. M.scalar(pid) .. ': ' .. M.scalar(why)
      end
    end
    local skip = { 'chain', unused and 'unavailable' or nil }
    if merged then
      skip[#skip + 1] = 'health'
    end
    rest_lines(lines, r, skip, 1)
  end
  if is_obj(s.bandit) then
    local b = s.bandit
    lines[#lines + 1] = ''
    lines[#lines + 1] = 'Bandit (Beta posteriors; mean = expected reward)'
    local rows = M.posteriors(b)
    for _, row in ipairs(rows) do
      local extra = {}
      for _, k in ipairs(sorted_keys(row.extra)) do
        extra[#extra + 1] = k .. '=' .. M.scalar(row.extra[k])
      end
      lines[#lines + 1] = string.format('  %-10s %-9s alpha=%-8s beta=%-8s mean=%.3f%s',
        row.cls ~= '' and row.cls or 'all', row.arm, M.scalar(row.alpha), M.scalar(row.beta), row.mean,
        #extra > 0 and ('  ' .. table.concat(extra, ' ')) or '')
    end
    if #rows == 0 then
      lines[#lines + 1] = '  no posteriors reported'
    end
    local skip = {}
    for k, v in pairs(b) do
      if has_posteriors(v) then
        skip[#skip + 1] = k
      end
    end
    rest_lines(lines, b, skip, 1)
  end
  if is_obj(s.suggester) then
    local g = s.suggester
    lines[#lines + 1] = ''
    lines[#lines + 1] = 'Suggester: ' .. (g.enabled == true and 'enabled' or 'DISABLED (set suggester.enabled = true)')
    if is_obj(g.counters) then
      local parts = {}
      for _, k in ipairs(sorted_keys(g.counters)) do
        parts[#parts + 1] = k .. '=' .. M.scalar(g.counters[k])
      end
      lines[#lines + 1] = '  counters: ' .. table.concat(parts, ' ')
    end
    rest_lines(lines, g, is_obj(g.counters) and { 'enabled', 'counters' } or { 'enabled' }, 1)
  end
  local other = {}
  rest_lines(other, s, { 'version', 'workspace', 'state', 'router', 'bandit', 'suggester' }, 1)
  if #other > 0 then
    lines[#lines + 1] = ''
    lines[#lines + 1] = 'Other'
    vim.list_extend(lines, other)
  end
  return lines
end

--- A `dsh/postExecute` result as lines: the note (title line, then its text) or the silence line.
function M.suggest_lines(tool_call, result)
  local input = vim.fn.json_encode(tool_call.input)
  local lines = { string.format('DSH suggester, for %s %s', tool_call.name, input), '' }
  local notes = is_obj(result) and type(result.additionalContexts) == 'table' and result.additionalContexts or {}
  local note = notes[1]
  if not is_obj(note) then
    lines[#lines + 1] = M.SILENCE
    return lines
  end
  local source = is_obj(note.source) and note.source or {}
  local intent = str(source.intent)
  lines[#lines + 1] = 'The suggester would say' .. (intent ~= '' and (' (' .. intent .. ')') or '') .. ': ' .. str(source.summary)
  lines[#lines + 1] = ''
  vim.list_extend(lines, vim.split(str(note.text), '\n', { plain = true }))
  return lines
end

--- `Dismissed until 2026-12-01T04:54:26Z (dismissed Version *).`
function M.dismiss_line(result)
  result = is_obj(result) and result or {}
  local expires = str(result.expiresAt) ~= '' and result.expiresAt or '?'
  local record = str(result.record) ~= '' and result.record or 'no record'
  return string.format('Dismissed until %s (%s).', expires, record)
end

--- A JSON-RPC error as text: the sidecar's message (for -32001 its aggregated, key-free text).
function M.error_text(err)
  if type(err) ~= 'table' then
    return tostring(err)
  end
  local message = str(err.message) ~= '' and err.message or 'unknown error'
  if err.code == -32001 or type(err.code) ~= 'number' then
    return message
  end
  return string.format('%s (JSON-RPC error %d)', message, err.code)
end

return M
