-- Headless end-to-end test of dsh.nvim against the REAL sidecar (driven by
-- tests/editors/test_editor_nvim.py): run every command as a user would, wait for the answer, and
-- write what the user would see (buffer lines, quickfix list, :messages) to $DSH_TEST_OUT as
-- JSON. Environment: DSH_TEST_OUT, DSH_TEST_CMD (the sidecar executable), DSH_TEST_MOCK (a
-- loopback SearXNG base URL), DSH_TEST_ROOT (the workspace), DSH_TEST_FAIL_MOCK (a SearXNG that
-- answers 403).
local here = vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h')
vim.opt.rtp:prepend(vim.fn.fnamemodify(here, ':h'))
vim.cmd('runtime plugin/dsh.lua')

local out = { version = vim.version(), steps = {} }
local env = vim.env

-- Bound of one wait, ms: a hang's, not a latency. The first :DshSearch starts the sidecar and
-- searches: at load 26-32 (3 busy loops beside) that outlasted a 30 s bound; never minutes.
local HANG_MS = 120000

local function wait_idle(what)
  local dsh = require('dsh')
  local ok = vim.wait(HANG_MS, function()
    return dsh.idle()
  end, 20)
  if not ok then
    error('timed out waiting for ' .. what)
  end
  -- let the callbacks scheduled by the answer (echo, rendering) run: vim.schedule is first in,
  -- first out, so a marker scheduled now runs after them (a fixed 50 ms wait was a guess)
  local flushed = false
  vim.schedule(function()
    flushed = true
  end)
  if not vim.wait(HANG_MS, function()
    return flushed
  end, 5) then
    error('timed out running the callbacks scheduled by ' .. what)
  end
end

local function step(name, command)
  vim.cmd('messages clear')
  vim.cmd(command)
  wait_idle(command)
  out.steps[#out.steps + 1] = {
    name = name,
    command = command,
    buffer = vim.api.nvim_buf_get_name(0),
    lines = vim.api.nvim_buf_get_lines(0, 0, -1, false),
    messages = vim.fn.execute('messages'),
    qf = vim.tbl_map(function(i) return i.text end, vim.fn.getqflist()),
    qf_title = vim.fn.getqflist({ title = 1 }).title,
  }
  vim.cmd('only')
end

local ok, problem = pcall(function()
  -- rendering of hostile / grown shapes (JSON null, wrong types, unknown fields) never raises
  local render = require('dsh.render')
  out.hostile = {
    status = render.status_lines({
      version = vim.NIL,
      router = { chain = { { provider = 'p', baseUrl = vim.NIL } }, health = 'broken', unavailable = { 'exa' } },
      bandit = { arms = 'x', classes = { open = { quick = { alpha = 3, beta = 1 }, evidence = 2 } } },
      suggester = { enabled = 'maybe', counters = vim.NIL },
      newThing = { list = { { a = 1 }, { b = vim.NIL } } },
    }),
    status_skipped = render.status_lines({
      router = {
        chain = { { provider = 'duckduckgo', baseUrl = 'https://d' } },
        unavailable = { 'searxng', 'exa' },
        health = {
          { provider = 'duckduckgo', state = 'ok' },
          { provider = 'searxng', state = 'failing', lastOutcome = 'skipped: invalid config ($SEARXNG_BASE_URL: must be an absolute http:// or https:// URL)\27[31m' },
        },
      },
    }),
    status_not_object = render.status_lines('nope'),
    search = render.search_lines('q', { sources = { { url = 'not a url' }, { title = 'no url' }, 'x' }, reward = 'high' }),
    suggest = render.suggest_lines({ name = 'grep', input = vim.empty_dict() }, { additionalContexts = { { source = vim.NIL, text = 'T' } } }),
    dismiss = render.dismiss_line(vim.NIL),
    error = render.error_text({ code = -32602, message = 'maxResults: Input should be a valid integer' }),
  }
  local dsh = require('dsh')
  dsh.setup({
    cmd = { env.DSH_TEST_CMD, 'serve' },
    root_dir = env.DSH_TEST_ROOT,
    init_options = {
      -- the loopback provider's own bound: generous (at load a 5 s one ran out); :DshStatus shows it
      router = { provider = 'searxng', timeoutMs = 60000, providers = { searxng = { baseUrl = env.DSH_TEST_MOCK } } },
      bandit = { seed = 2 },  -- random.Random(2)'s first auto choice is quick (the checks below read one attempt)
    },
  })
  step('search', 'DshSearch bike chain cleaning')
  step('search-thorough', 'lua require("dsh").search("bike chain cleaning", {strategy = "thorough", max_results = 2})')
  step('status', 'DshStatus')
  step('suggest', 'DshSuggest grep __version__')
  step('suggest-json', [[DshSuggest Grep {"pattern": "__version__", "path": "src"}]])
  step('suggest-silent', 'DshSuggest grep frobnicate')
  step('suggest-bad-json', 'DshSuggest grep {nope')
  step('dismiss', 'DshDismiss Version')
  step('suggest-after-dismiss', 'DshSuggest grep __version__')
  step('dismiss-path', 'DshDismiss Version src/demo_pkg/__init__.py')
  step('log', 'DshLog')
  -- a second sidecar whose only provider fails: the aggregated error reaches :messages
  dsh.setup({
    cmd = { env.DSH_TEST_CMD, 'serve' },
    root_dir = env.DSH_TEST_ROOT,
    init_options = { router = { provider = 'searxng', providers = { searxng = { baseUrl = env.DSH_TEST_FAIL_MOCK } } } },
    suggester_enabled = false,
  })
  step('search-fails', 'DshSearch bike chain cleaning')
  step('status-disabled', 'DshStatus')
  dsh.stop()
end)
out.ok = ok
out.error = ok and vim.NIL or tostring(problem)
local f = assert(io.open(env.DSH_TEST_OUT, 'w'))
f:write(vim.fn.json_encode(out))
f:close()
vim.cmd(ok and 'qall!' or 'cquit!')
