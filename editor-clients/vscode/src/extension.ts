/**
 * The VS Code side: spawns `dsh-search serve` (settings `dsh.sidecar.*`) with the first
 * workspace folder as root through vscode-languageclient, and registers the four DSH commands.
 * All requests and rendering live in `./core` (tested from Node against the real sidecar).
 */

import * as vscode from 'vscode';
import {
  DidChangeConfigurationNotification,
  LanguageClient,
  LanguageClientOptions,
  ServerOptions,
  TransportKind,
} from 'vscode-languageclient/node';

import {
  LogMessageParams,
  Methods,
  SUGGEST_TOOLS,
  Status,
  dismiss,
  errorText,
  formatLogLine,
  renderDismiss,
  renderStatusHtml,
  renderSuggestion,
  resolveLaunch,
  search,
  searchItems,
  searchSummary,
  status,
  suggest,
} from './core';

let client: LanguageClient | undefined;
let starting: Promise<LanguageClient> | undefined;
let output: vscode.OutputChannel;
let statusPanel: vscode.WebviewPanel | undefined;

function settings(): vscode.WorkspaceConfiguration {
  return vscode.workspace.getConfiguration('dsh');
}

function launchSettings() {
  const cfg = settings();
  return resolveLaunch({
    command: cfg.get('sidecar.command'),
    args: cfg.get('sidecar.args'),
    initializationOptions: cfg.get('initializationOptions'),
    suggesterEnabled: cfg.get('suggester.enabled'),
  });
}

/**
 * A settings change. The command or its arguments: a different process, so the sidecar is
 * stopped (the next command starts the new one). The configuration: sent to the running
 * sidecar as `workspace/didChangeConfiguration` with all three blocks (a removed block goes
 * back to its defaults); the sidecar validates it and keeps the previous one if it is invalid.
 */
async function onSettingsChanged(e: vscode.ConfigurationChangeEvent): Promise<void> {
  if (!client || !e.affectsConfiguration('dsh')) {
    return;
  }
  if (e.affectsConfiguration('dsh.sidecar')) {
    const old = client;
    client = undefined;
    starting = undefined;
    output.appendLine('[config] dsh.sidecar changed: the sidecar restarts on the next command');
    await old.stop();
    return;
  }
  if (e.affectsConfiguration('dsh.initializationOptions') || e.affectsConfiguration('dsh.suggester.enabled')) {
    const options = launchSettings().initializationOptions;
    const settings = { router: options.router ?? {}, bandit: options.bandit ?? {}, suggester: options.suggester ?? {} };
    await client.sendNotification(DidChangeConfigurationNotification.type, { settings });
    output.appendLine('[config] sent workspace/didChangeConfiguration');
  }
}

/** Start the sidecar once (on the first command); later commands reuse it. */
async function ensureClient(): Promise<LanguageClient> {
  if (client) {
    return client;
  }
  if (!starting) {
    starting = (async () => {
      const launch = launchSettings();
      const folder = vscode.workspace.workspaceFolders?.[0];
      const serverOptions: ServerOptions = {
        command: launch.command,
        args: launch.args,
        transport: TransportKind.stdio,
        options: folder ? { cwd: folder.uri.fsPath } : undefined,
      };
      const clientOptions: LanguageClientOptions = {
        documentSelector: [],
        workspaceFolder: folder,
        initializationOptions: launch.initializationOptions,
        outputChannel: output,
      };
      const c = new LanguageClient('dsh', 'DSH Search Sidecar', serverOptions, clientOptions);
      // Registered before start, so it replaces the client's own logMessage handler: the ledger
      // and [bandit-search] lines reach the Output channel byte-exact, as they arrive.
      c.onNotification(Methods.logMessage, (p: LogMessageParams) => output.appendLine(formatLogLine(p)));
      await c.start();
      client = c;
      return c;
    })();
    starting.catch(() => {
      starting = undefined;
    });
  }
  return starting;
}

/** Run a command body; any failure becomes an error message (never an unhandled rejection). */
function guarded(body: () => Promise<void>): () => Promise<void> {
  return async () => {
    try {
      await body();
    } catch (e) {
      const text = errorText(e);
      output.appendLine(`[error] ${text}`);
      void vscode.window.showErrorMessage(`DSH: ${text}`);
    }
  };
}

async function searchCommand(): Promise<void> {
  const query = await vscode.window.showInputBox({ title: 'DSH: Search the web', prompt: 'Search query', ignoreFocusOut: true });
  if (!query?.trim()) {
    return;
  }
  const c = await ensureClient();
  const cfg = settings();
  const result = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: `DSH: searching “${query.trim()}”…`, cancellable: false },
    () => search(c, query, { maxResults: cfg.get<number | null>('search.maxResults'), strategy: cfg.get('search.strategy') }),
  );
  const items = searchItems(result);
  if (items.length === 0) {
    void vscode.window.showInformationMessage(`DSH: no results (${searchSummary(result)})`);
    return;
  }
  const picked = await vscode.window.showQuickPick(items, {
    title: searchSummary(result),
    placeHolder: 'Pick a result to open it in the browser',
    matchOnDescription: true,
    matchOnDetail: true,
  });
  if (picked) {
    await vscode.env.openExternal(vscode.Uri.parse(picked.url));
  }
}

async function statusCommand(): Promise<void> {
  const c = await ensureClient();
  const s: Status = await status(c);
  if (!statusPanel) {
    statusPanel = vscode.window.createWebviewPanel('dshStatus', 'DSH sidecar status', vscode.ViewColumn.Active, {
      enableScripts: false,
    });
    statusPanel.onDidDispose(() => {
      statusPanel = undefined;
    });
  }
  statusPanel.webview.html = renderStatusHtml(s);
  statusPanel.reveal();
}

async function suggestCommand(): Promise<void> {
  const tool = await vscode.window.showQuickPick([...SUGGEST_TOOLS], {
    title: 'DSH: What would the suggester say?',
    placeHolder: 'Which tool did the agent call?',
    ignoreFocusOut: true,
  });
  if (!tool) {
    return;
  }
  const what = tool === 'read' ? 'path' : tool === 'bash' ? 'command' : 'pattern';
  const text = await vscode.window.showInputBox({
    title: `DSH: ${tool} called with…`,
    prompt: `The ${what}, or the whole input as a JSON object`,
    placeHolder: tool === 'grep' ? '__version__' : undefined,
    ignoreFocusOut: true,
  });
  if (!text?.trim()) {
    return;
  }
  const c = await ensureClient();
  const view = renderSuggestion(await suggest(c, tool, text, 'vscode'));
  const folder = vscode.workspace.workspaceFolders?.[0];
  // buttons show the display forms (a name with a line break or a bidi control cannot forge one);
  // the chosen one opens its exact path
  const buttons = folder ? view.labels.slice(0, 3) : [];
  const choice = await vscode.window.showInformationMessage(view.title, { modal: true, detail: view.text }, ...buttons);
  const target = choice === undefined ? undefined : view.targets[buttons.indexOf(choice)];
  if (target && folder) {
    await vscode.window.showTextDocument(vscode.Uri.joinPath(folder.uri, target));
  }
}

async function dismissCommand(): Promise<void> {
  const c = await ensureClient();
  const s = await status(c);
  const sg = s.suggester as { intents?: unknown } | undefined;
  const intents = Array.isArray(sg?.intents) ? sg.intents.filter((i): i is string => typeof i === 'string') : [];
  const family = intents.length
    ? await vscode.window.showQuickPick(intents, { title: 'DSH: Dismiss suggestion family', placeHolder: 'Family to silence' })
    : await vscode.window.showInputBox({ title: 'DSH: Dismiss suggestion family', prompt: 'Family (e.g. Version)' });
  if (!family?.trim()) {
    return;
  }
  const path = await vscode.window.showInputBox({
    title: `DSH: dismiss ${family}`,
    prompt: 'Only this path (leave empty for the whole family)',
  });
  if (path === undefined) {
    return;
  }
  void vscode.window.showInformationMessage(`DSH: ${renderDismiss(await dismiss(c, family, path))}`);
}

export function activate(context: vscode.ExtensionContext): void {
  output = vscode.window.createOutputChannel('DSH Sidecar');
  context.subscriptions.push(
    output,
    vscode.commands.registerCommand('dsh.search', guarded(searchCommand)),
    vscode.commands.registerCommand('dsh.status', guarded(statusCommand)),
    vscode.commands.registerCommand('dsh.suggest', guarded(suggestCommand)),
    vscode.commands.registerCommand('dsh.dismiss', guarded(dismissCommand)),
    vscode.workspace.onDidChangeConfiguration((e) =>
      onSettingsChanged(e).catch((err: unknown) => {
        const text = errorText(err);
        output.appendLine(`[error] ${text}`);
        void vscode.window.showErrorMessage(`DSH: ${text}`);
      }),
    ),
  );
}

export async function deactivate(): Promise<void> {
  if (client) {
    await client.stop();
  }
}
