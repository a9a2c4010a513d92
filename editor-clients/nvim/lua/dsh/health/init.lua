-- :checkhealth dsh — is the sidecar installed and ready, as the plugin is configured?
--
-- Reports the Neovim version, the sidecar command (found? which version?), then runs the
-- sidecar's own `dsh-search doctor --json` with the plugin's init_options as its --config
-- (Python, SQLite/FTS5, git, each provider: in the chain or not, key variable set or not —
-- never a value —, whether each endpoint answers, where state lives), and whether a sidecar
-- is running in this Neovim. Works with the health API of Neovim 0.7–0.9 (report_*) and
-- 0.10+ (start/ok/…).
local M = {}

local health = vim.health or require('health')
local start = health.start or health.report_start
local ok = health.ok or health.report_ok
local warn = health.warn or health.report_warn
local fail = health.error or health.report_error
local info = health.info or health.report_info

--- Seconds the doctor waits for each endpoint.
M.endpoint_timeout_s = 2

-- Run argv (with the plugin's cmd_env), return exit code and stdout as one string.
local function run(argv)
  local out = {}
  local job = vim.fn.jobstart(argv, {
    env = require('dsh').config.cmd_env,
    stdout_buffered = true,
    on_stdout = function(_, data)
      out = data
    end,
  })
  if job <= 0 then
    return -1, ''
  end
  local code = vim.fn.jobwait({ job }, 60000)[1]
  return code, table.concat(out, '\n')
end

function M.check()
  local dsh = require('dsh')
  start('dsh: Neovim')
  local v = vim.version()
  local version = string.format('%d.%d.%d', v.major, v.minor, v.patch)
  if vim.fn.has('nvim-0.7') == 1 then
    ok('Neovim ' .. version)
  else
    fail('Neovim ' .. version .. ': dsh.nvim needs 0.7 or newer')
  end

  start('dsh: sidecar command')
  local cmd = dsh.config.cmd or {}
  local exe = cmd[1]
  if not exe or vim.fn.executable(exe) ~= 1 then
    fail(string.format('%s not found or not executable', tostring(exe)), {
      "install it (not on PyPI yet): uv tool install 'dsh-search-sidecar @ file:///path/to/dsh-search-sidecar' (or pipx install, or a wheel)",
      "or set cmd = { '/path/to/.venv/bin/dsh-search', 'serve' } in require('dsh').setup{}",
    })
    return
  end
  local code, out = run({ exe, '--version' })
  if code ~= 0 then
    fail(string.format('%s --version failed (exit %d)', exe, code))
    return
  end
  ok(string.format('%s (%s)', vim.trim(out), vim.fn.exepath(exe)))

  start('dsh: dsh-search doctor')
  local config = vim.fn.tempname() .. '.json'
  local opts = vim.deepcopy(dsh.config.init_options or {})
  vim.fn.writefile({ vim.fn.json_encode(next(opts) and opts or vim.empty_dict()) }, config)
  local dcode, dout = run({ exe, 'doctor', '--json', '--timeout', tostring(M.endpoint_timeout_s), '--config', config })
  vim.fn.delete(config)
  local decoded, report = pcall(vim.fn.json_decode, dout)
  if not decoded or type(report) ~= 'table' then
    fail(string.format('doctor did not answer with JSON (exit %d)', dcode))
    return
  end
  if report.error then
    fail('doctor: ' .. tostring(report.error.message))
    return
  end
  for _, c in ipairs(report.checks or {}) do
    local line = string.format('%s: %s', c.name, c.detail)
    if c.status == 'ok' then
      ok(line)
    elseif c.status == 'warn' then
      warn(line)
    elseif c.status == 'fail' then
      fail(line)
    else
      info(line)
    end
  end
  if report.ok then
    ok('doctor: ' .. tostring(report.summary))
  else
    fail('doctor: ' .. tostring(report.summary))
  end

  start('dsh: this Neovim')
  if dsh.client_id and vim.lsp.get_client_by_id(dsh.client_id) then
    ok(string.format('sidecar running (LSP client id %d)', dsh.client_id))
  else
    info('sidecar not started (the first :Dsh command starts it)')
  end
end

return M
