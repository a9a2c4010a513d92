-- Command-line completion for the :Dsh commands (the `complete` functions of plugin/dsh.lua).
--
-- :DshSuggest {tool}      the tools the suggester reads (grep glob read bash), then nothing
-- :DshDismiss {family}    the running sidecar's intent families (from dsh/status, cached; the
--                         sidecar is never started just to complete), then workspace paths
-- :DshSearch {query}      the strategy flags are not part of the command: nothing to complete
local M = {}

--- Tools whose input the suggester reads, as in the VS Code extension's picker.
M.TOOLS = { 'grep', 'glob', 'read', 'bash' }
--- Families seen in the last dsh/status (or :DshStatus) of this session.
M.families = {}

local function starting_with(items, lead)
  local out = {}
  for _, item in ipairs(items) do
    if item:sub(1, #lead) == lead then
      table.insert(out, item)
    end
  end
  return out
end

-- Which argument the cursor is in: 1 for the first, 2 for the rest.
local function arg_index(cmdline, cursorpos)
  local before = cmdline:sub(1, cursorpos)
  local words = vim.split(vim.trim(before), '%s+')
  local n = #words - 1 -- the command itself is word 1
  if before:match('%s$') then
    n = n + 1
  end
  return math.max(n, 1)
end

--- Remember the intent families of a dsh/status result (called by :DshStatus and below).
function M.remember(status)
  local s = type(status) == 'table' and status.suggester or nil
  if type(s) == 'table' and type(s.intents) == 'table' then
    local out = {}
    for _, f in ipairs(s.intents) do
      if type(f) == 'string' then
        table.insert(out, f)
      end
    end
    M.families = out
  end
end

local function refresh_families()
  local dsh = require('dsh')
  local client = dsh.client_id and vim.lsp.get_client_by_id(dsh.client_id)
  if not client then
    return
  end
  local ok, reply
  if vim.fn.has('nvim-0.11') == 1 then
    ok, reply = pcall(client.request_sync, client, 'dsh/status', vim.empty_dict(), 1000, 0)
  else
    ok, reply = pcall(client.request_sync, 'dsh/status', vim.empty_dict(), 1000, 0)
  end
  if ok and type(reply) == 'table' and reply.result then
    M.remember(reply.result)
  end
end

function M.suggest(arglead, cmdline, cursorpos)
  if arg_index(cmdline, cursorpos) == 1 then
    return starting_with(M.TOOLS, arglead)
  end
  return {}
end

function M.dismiss(arglead, cmdline, cursorpos)
  if arg_index(cmdline, cursorpos) == 1 then
    refresh_families()
    return starting_with(M.families, arglead)
  end
  return vim.fn.getcompletion(arglead, 'file')
end

return M
