-- dsh.nvim: attach Neovim to the dsh-search sidecar (`dsh-search serve`, stdio JSON-RPC with
-- LSP framing) and look inside it: :DshSearch, :DshStatus, :DshSuggest, :DshDismiss, :DshLog.
--
-- Works on Neovim >= 0.7 (Debian 12 ships 0.7.2): it uses vim.lsp.start_client (0.5+), and
-- nvim_create_user_command (0.7+); on 0.11+ it uses vim.lsp.start{attach=false} and
-- client:request, the non-deprecated forms there.
local render = require('dsh.render')

local M = {}

--- Defaults of setup(); `init_options` is the sidecar's whole config {router, bandit, suggester}.
M.defaults = {
  cmd = { 'dsh-search', 'serve' },
  cmd_env = nil,
  root_dir = nil, -- default: the current directory
  init_options = {},
  -- The suggester ships disabled in the sidecar; :DshSuggest needs it. An explicit
  -- init_options.suggester.enabled wins.
  suggester_enabled = true,
  search = { strategy = nil, max_results = nil },
  -- Echo each ledger / [bandit-search] line into :messages as it arrives, clipped to one screen
  -- line (the full lines are always kept for :DshLog).
  echo_log = true,
}

M.config = vim.deepcopy(M.defaults)
M.log_lines = {}
M.client_id = nil
local ready = false
local pending = {}
local inflight = 0
local suggest_count = 0
-- Bumped by stop(): callbacks of an earlier sidecar leave the current one's state alone.
local generation = 0

local has_011 = vim.fn.has('nvim-0.11') == 1

local function echo(msg, hl)
  vim.api.nvim_echo({ { msg, hl } }, true, {})
end

-- Scheduled after any log line that arrived with the same answer (the sidecar sends the ledger
-- line before its reply), so the answer is what stays on screen.
local function say(msg, hl)
  vim.schedule(function()
    vim.cmd('redraw')
    echo('dsh: ' .. msg, hl)
  end)
end

local function err(msg)
  say(msg, 'ErrorMsg')
end

--- Configure (call before the first command; calling again restarts the sidecar).
function M.setup(opts)
  M.config = vim.tbl_deep_extend('force', vim.deepcopy(M.defaults), opts or {})
  if M.client_id then
    M.stop()
  end
end

local function init_options()
  local opts = vim.deepcopy(M.config.init_options or {})
  if type(opts.suggester) ~= 'table' then
    opts.suggester = {}
  end
  if opts.suggester.enabled == nil then
    opts.suggester.enabled = M.config.suggester_enabled ~= false
  end
  return opts
end

local function on_log(_, result)
  local message = type(result) == 'table' and type(result.message) == 'string' and result.message or ''
  local level = type(result) == 'table' and result.type or 3
  local prefix = ({ [1] = '[error] ', [2] = '[warning] ', [5] = '[debug] ' })[level] or ''
  local line = prefix .. message
  M.log_lines[#M.log_lines + 1] = line
  if M.config.echo_log then
    vim.schedule(function()
      -- one screen line, so a burst of log lines never stops at a hit-enter prompt; the full
      -- line is in :DshLog
      -- (the last 12 columns are kept for showcmd and the ruler, as Vim's own 'shortmess' T does)
      local width = math.max(20, vim.o.columns - 13)
      local shown = line
      if vim.fn.strdisplaywidth(line) > width then
        shown = vim.fn.strcharpart(line, 0, width - 1) .. '…'
      end
      vim.cmd('redraw') -- each line replaces the last one on screen (all stay in :messages)
      echo(shown, level == 1 and 'ErrorMsg' or (level == 2 and 'WarningMsg' or nil))
    end)
  end
end

--- Start the sidecar (once); `fn(client)` runs when it has answered `initialize`.
function M.with_client(fn)
  if M.client_id and ready then
    local client = vim.lsp.get_client_by_id(M.client_id)
    if client then
      return fn(client)
    end
    M.client_id, ready = nil, false
  end
  pending[#pending + 1] = fn
  if M.client_id then
    return
  end
  local gen = generation
  local config = {
    name = 'dsh-search',
    cmd = M.config.cmd,
    cmd_env = M.config.cmd_env,
    root_dir = M.config.root_dir or vim.fn.getcwd(),
    init_options = init_options(),
    handlers = { ['window/logMessage'] = on_log },
    on_init = function(client)
      if gen ~= generation then
        return
      end
      ready = true
      local queued = pending
      pending = {}
      for _, f in ipairs(queued) do
        f(client)
      end
    end,
    on_exit = function(code)
      if gen ~= generation then
        return
      end
      M.client_id, ready = nil, false
      if #pending > 0 or code ~= 0 then
        err(string.format('sidecar exited (code %s): see :DshLog and :LspLog', tostring(code)))
      end
      inflight = inflight - #pending
      pending = {}
    end,
  }
  local id
  if has_011 then
    id = vim.lsp.start(config, { attach = false })
  else
    id = vim.lsp.start_client(config)
  end
  if not id then
    pending = {}
    err('could not start ' .. table.concat(M.config.cmd, ' '))
    return
  end
  M.client_id = id
end

--- Send `method` with `params`; `cb(err, result)` runs in the main loop.
function M.request(method, params, cb)
  inflight = inflight + 1
  M.with_client(function(client)
    local handler = function(e, result)
      inflight = inflight - 1
      cb(e, result)
    end
    local ok
    if has_011 then
      ok = client:request(method, params, handler)
    else
      ok = client.request(method, params, handler)
    end
    if not ok then
      handler({ code = -32603, message = 'the sidecar is not running' }, nil)
    end
  end)
end

--- True when no request is waiting for an answer (tests wait on this).
function M.idle()
  return inflight <= 0
end

--- Show `lines` in the scratch buffer `name` (reused), in a split; returns the buffer number.
function M.show(name, lines)
  local buf = vim.fn.bufnr(name)
  if buf == -1 or not vim.api.nvim_buf_is_valid(buf) then
    buf = vim.api.nvim_create_buf(false, true)
    vim.api.nvim_buf_set_name(buf, name)
    vim.bo[buf].bufhidden = 'hide'
    vim.bo[buf].filetype = 'dsh'
  end
  vim.bo[buf].modifiable = true
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  local win = vim.fn.bufwinid(buf)
  if win == -1 then
    vim.cmd('botright split')
    vim.api.nvim_win_set_buf(0, buf)
    vim.wo.wrap, vim.wo.linebreak, vim.wo.breakindent = true, true, true
  else
    vim.api.nvim_set_current_win(win)
  end
  return buf
end

local function open_url(url)
  if vim.ui and vim.ui.open then
    vim.ui.open(url)
  else
    local opener = vim.fn.has('mac') == 1 and 'open' or 'xdg-open'
    vim.fn.jobstart({ opener, url }, { detach = true })
  end
end

--- :DshSearch {query} — results in the scratch buffer `dsh://search` and the quickfix list;
--- <CR> on a result opens its URL.
function M.search(query, opts)
  opts = opts or {}
  query = vim.trim(query or '')
  if query == '' then
    return err('usage: :DshSearch {query}')
  end
  local params = { query = query }
  local strategy = opts.strategy or M.config.search.strategy
  if strategy and strategy ~= 'auto' then
    params.strategy = strategy
  end
  local max = opts.max_results or M.config.search.max_results
  if max then
    params.maxResults = max
  end
  M.request('dsh/search', params, function(e, result)
    if e then
      return err(render.error_text(e))
    end
    local lines, urls = render.search_lines(query, result)
    local items = {}
    for i, url in ipairs(urls) do
      items[#items + 1] = { text = string.format('%d. %s', i, url) }
    end
    vim.fn.setqflist({}, ' ', { title = 'DSH search: ' .. query, items = items })
    local buf = M.show('dsh://search', lines)
    vim.b[buf].dsh_urls = urls
    vim.keymap.set('n', '<CR>', function()
      local lnum = vim.fn.line('.')
      for l = lnum, 1, -1 do
        local n = vim.api.nvim_buf_get_lines(buf, l - 1, l, false)[1]:match('^(%d+)%. ')
        if n then
          return open_url(urls[tonumber(n)])
        end
      end
    end, { buffer = buf, desc = 'open this search result' })
  end)
end

--- :DshStatus — router chain, bandit posteriors, suggester counters in `dsh://status`.
function M.status()
  M.request('dsh/status', vim.empty_dict(), function(e, result)
    if e then
      return err(render.error_text(e))
    end
    require('dsh.complete').remember(result)
    M.show('dsh://status', render.status_lines(result))
  end)
end

--- The tool call a user means: `input` is a JSON object, or text for the tool's main field
--- (grep/glob → pattern, read → path, bash → command). Returns call or nil, error.
function M.tool_call(tool, input)
  tool, input = vim.trim(tool or ''), vim.trim(input or '')
  if tool == '' or input == '' then
    return nil, 'usage: :DshSuggest {tool} {pattern | path | command | JSON object}'
  end
  if input:sub(1, 1) == '{' then
    local ok, decoded = pcall(vim.fn.json_decode, input)
    if not ok or type(decoded) ~= 'table' then
      return nil, 'the input is not a JSON object: ' .. input
    end
    if next(decoded) == nil then
      decoded = vim.empty_dict()
    end
    return { name = tool, input = decoded }
  end
  local field = ({ read = 'path', view = 'path', cat = 'path', open = 'path',
    bash = 'command', shell = 'command', exec = 'command', run = 'command' })[tool:lower()] or 'pattern'
  return { name = tool, input = { [field] = input } }
end

--- :DshSuggest {tool} {input} — what the suggester would say, in `dsh://suggest`. Each question
--- is a fresh session (turn 0): the answer an agent starting now would get.
function M.suggest(tool, input)
  local call, problem = M.tool_call(tool, input)
  if not call then
    return err(problem)
  end
  suggest_count = suggest_count + 1
  local params = { sessionId = string.format('nvim-%d-%d', vim.fn.getpid(), suggest_count), turn = 0, tool = call }
  M.request('dsh/postExecute', params, function(e, result)
    if e then
      return err(render.error_text(e))
    end
    M.show('dsh://suggest', render.suggest_lines(call, result))
  end)
end

--- :DshDismiss {family} [path] — silence a suggestion family (or one path of it); echoes the expiry.
function M.dismiss(family, path)
  family = vim.trim(family or '')
  if family == '' then
    return err('usage: :DshDismiss {family} [path]')
  end
  local params = { family = family }
  if path and vim.trim(path) ~= '' then
    params.path = vim.trim(path)
  end
  M.request('dsh/dismiss', params, function(e, result)
    if e then
      return err(render.error_text(e))
    end
    say(render.dismiss_line(result))
  end)
end

--- :DshLog — every window/logMessage line received so far (ledger and bandit lines).
function M.log()
  M.show('dsh://log', #M.log_lines > 0 and M.log_lines or { '(no log lines yet)' })
end

--- Stop the sidecar (shutdown + exit).
function M.stop()
  if M.client_id then
    local client = vim.lsp.get_client_by_id(M.client_id)
    if client then
      if has_011 then
        client:stop()
      else
        client.stop()
      end
    end
  end
  generation = generation + 1
  inflight = inflight - #pending
  M.client_id, ready, pending = nil, false, {}
end

return M
