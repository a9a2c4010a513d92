// The browser half of the search-router plugin: the "Search router" card of `dsh web`
// (Settings → Plugins → Plugin configuration), in DSH's client module format (a classic script
// that registers a lazy CommonJS factory with `window.__ModuleLoader__`; the factory runs when
// the shell materializes the plugin). It edits the `search-router` settings namespace the
// plugin's host half registers (lib/settings.js): the user layer over the row's config, field
// by field. Every change is written at once (`settings.mutate`, fenced by the namespace's
// revision) and reaches the running sidecar for the next search: no restart, no save step.
//
// What it shows (the router seed, "In the app"): one row per provider of the chain, numbered
// by fallback priority, reordered by dragging a row or with the arrow keys on its handle; an
// inline editor per provider (API key, key variable, endpoint, model); an add-provider flow; an
// Advanced fold (timeout, empty-results policy, the searches' cap: at the providers at once, and
// waiting for a turn). API keys are stored in the settings document
// as secrets (never sent back to a browser: the card learns only whether one is stored); a
// stored key overrides the provider's environment variable, and clearing it falls back to it.
// A field the user set is marked "Overridden" with a reset that re-inherits the row's value.

(() => {
  // the package this bundle is served for (`/plugins/<package>/client.js`): the same file is the
  // browser half of the combined bundle and of the search-router package
  const src = typeof document !== 'undefined' && document.currentScript ? document.currentScript.src : '';
  const served = /\/plugins\/(.+)\/client\.js(?:[?#].*)?$/.exec(src ? new URL(src, location.href).pathname : '');
  const id = served ? decodeURIComponent(served[1]) : 'dsh-search-sidecar-router';

  window.__ModuleLoader__.load({
    id,
    factory: (require) => {
      const module = { exports: {} };
      const React = require('react');
      const h = React.createElement;

      const NS = 'search-router';
      const LOCALE = 'search-router.card';
      /** The providers, in the seed's canonical (zero-configuration) order. */
      const PROVIDERS = ['exa', 'tavily', 'brave', 'perplexity', 'deepseek', 'searxng', 'duckduckgo'];
      const LABELS = { exa: 'Exa', tavily: 'Tavily', brave: 'Brave', perplexity: 'Perplexity', deepseek: 'DeepSeek', searxng: 'SearXNG', duckduckgo: 'DuckDuckGo' };
      const KEY_ENV = { exa: 'EXA_API_KEY', tavily: 'TAVILY_API_KEY', brave: 'BRAVE_SEARCH_API_KEY', perplexity: 'PPLX_API_KEY', deepseek: 'DEEPSEEK_API_KEY' };
      const ENDPOINTS = {
        exa: 'https://api.exa.ai',
        tavily: 'https://api.tavily.com',
        brave: 'https://api.search.brave.com',
        perplexity: 'https://api.perplexity.ai',
        deepseek: 'https://api.deepseek.com/anthropic/v1',
        searxng: '',
        duckduckgo: '',
      };
      const MODELS = { perplexity: 'sonar', deepseek: 'deepseek-v4-flash' };
      const DEFAULT_TIMEOUT_MS = 10000;
      /** The sidecar's defaults of router.maxConcurrentSearches and maxQueuedSearches. */
      const DEFAULT_MAX_CONCURRENT = 16;
      const DEFAULT_MAX_QUEUED = 256;

      const en = {
        title: 'Search router',
        description: 'Web search through a chain of providers, with fallback.',
        chainAuto: 'Zero configuration: every provider whose key or endpoint is set is used, in this order. Reorder, add or remove a provider to set your own chain.',
        chainSingle: 'Single provider: only this one is asked.',
        chainHint: 'Tried in this order; the first answer wins. Drag a row, or focus its handle and press ↑ / ↓.',
        priority: 'Priority {n}',
        move: 'Move {provider} (priority {n}); arrow keys reorder',
        edit: 'Edit',
        close: 'Close',
        remove: 'Remove',
        add: 'Add provider',
        addConfirm: 'Add',
        addCancel: 'Cancel',
        addChoose: 'Provider to add',
        resetChain: 'Use the profile\'s order',
        keyStored: 'Key stored in settings (overrides {env})',
        keyEnv: 'No key stored: {env} from the environment is used',
        keyLabel: 'API key',
        keyPlaceholder: 'Paste a key to store it',
        keyStore: 'Store key',
        keyClear: 'Clear stored key',
        keyEnvLabel: 'Key variable',
        endpointLabel: 'Endpoint',
        endpointEnvLabel: 'Endpoint variable',
        modelLabel: 'Model',
        overridden: 'Overridden',
        reset: 'Reset to default',
        apply: 'Apply',
        advanced: 'Advanced',
        timeoutLabel: 'Timeout per provider (ms)',
        concurrentLabel: 'Searches at the providers at once (more wait for a turn)',
        queuedLabel: 'Searches that may wait for a turn (more are refused at once)',
        emptyLabel: 'Empty results',
        emptyFallback: 'Count as a failure: try the next provider (default)',
        emptyAnswer: 'Answer with no results',
        applied: 'Applied: the next search uses it.',
        refused: 'Not applied: {reason}',
        readOnly: 'This deployment stores settings read-only.',
        auto: 'auto',
        keyBadge: 'key stored',
      };
      const zh = {
        title: '搜索路由',
        description: '通过一组搜索提供方进行网页搜索，失败时依次回退。',
        chainAuto: '零配置：凡设置了密钥或地址的提供方都会按此顺序使用。调整顺序、添加或移除提供方即可设置自己的链。',
        chainSingle: '单一提供方：只查询这一个。',
        chainHint: '按此顺序尝试，第一个成功的回答生效。拖动一行，或聚焦其拖动柄后按 ↑ / ↓。',
        priority: '优先级 {n}',
        move: '移动 {provider}（优先级 {n}）；方向键调整顺序',
        edit: '编辑',
        close: '关闭',
        remove: '移除',
        add: '添加提供方',
        addConfirm: '添加',
        addCancel: '取消',
        addChoose: '要添加的提供方',
        resetChain: '使用配置文件中的顺序',
        keyStored: '密钥已存储在设置中（覆盖 {env}）',
        keyEnv: '未存储密钥：使用环境变量 {env}',
        keyLabel: 'API Key',
        keyPlaceholder: '粘贴密钥以存储',
        keyStore: '存储密钥',
        keyClear: '清除已存储的密钥',
        keyEnvLabel: '密钥变量',
        endpointLabel: '接口地址',
        endpointEnvLabel: '地址变量',
        modelLabel: '模型',
        overridden: '已覆盖',
        reset: '恢复默认',
        apply: '应用',
        advanced: '高级',
        timeoutLabel: '每个提供方的超时（毫秒）',
        concurrentLabel: '同时向提供方发起的搜索数（超出的排队等待）',
        queuedLabel: '可排队等待的搜索数（超出的立即拒绝）',
        emptyLabel: '空结果',
        emptyFallback: '视为失败：尝试下一个提供方（默认）',
        emptyAnswer: '直接返回空结果',
        applied: '已应用：下一次搜索即生效。',
        refused: '未应用：{reason}',
        readOnly: '本部署的设置为只读。',
        auto: '自动',
        keyBadge: '已存储密钥',
      };

      const CSS = [
        '.dshsr-card{border:1px solid var(--dsw-alias-border-l2);background:var(--dsw-alias-bg-layer-3);border-radius:12px;list-style:none}',
        '.dshsr-open{background:var(--dsw-alias-bg-layer-2);border-color:var(--dsw-alias-label-dimmed)}',
        '.dshsr-header{appearance:none;width:100%;font:inherit;color:inherit;text-align:left;cursor:pointer;background:0 0;border:0;border-radius:12px;display:flex;align-items:center;gap:12px;padding:14px 16px}',
        '.dshsr-header:focus-visible,.dshsr-handle:focus-visible{outline:2px solid var(--dsw-alias-brand-primary);outline-offset:-2px}',
        '.dshsr-head{display:flex;flex-direction:column;flex:1;gap:4px;min-width:0}',
        '.dshsr-name{color:var(--dsw-alias-label-primary);font-size:15px;font-weight:600;line-height:1.4}',
        '.dshsr-desc,.dshsr-hint{color:var(--dsw-alias-label-tertiary);font-size:13px;line-height:1.5}',
        '.dshsr-body{border-top:1px solid var(--dsw-alias-border-l2);margin:0 16px;padding:8px 0 12px;display:flex;flex-direction:column;gap:10px}',
        '.dshsr-chain{list-style:none;margin:0;padding:0;display:flex;flex-direction:column;gap:6px}',
        '.dshsr-row{border:1px solid var(--dsw-alias-border-l2);border-radius:10px;background:var(--dsw-alias-bg-layer-3)}',
        '.dshsr-row[data-dragover=true]{border-color:var(--dsw-alias-brand-primary)}',
        '.dshsr-line{display:flex;align-items:center;gap:8px;padding:8px 10px}',
        '.dshsr-handle{appearance:none;border:0;background:0 0;cursor:grab;color:var(--dsw-alias-label-tertiary);font:inherit;padding:2px 4px;border-radius:6px}',
        '.dshsr-rank{color:var(--dsw-alias-label-secondary);font-variant-numeric:tabular-nums;min-width:1.6em}',
        '.dshsr-provider{color:var(--dsw-alias-label-primary);font-weight:500;flex:1}',
        '.dshsr-badge{white-space:nowrap;background:var(--dsw-alias-bg-module-platform);color:var(--dsw-alias-label-secondary);border-radius:999px;padding:1px 8px;font-size:11px;font-weight:500;line-height:17px}',
        '.dshsr-btn{appearance:none;font:inherit;cursor:pointer;border:1px solid var(--dsw-alias-border-l2);color:var(--dsw-alias-label-secondary);background:0 0;border-radius:8px;padding:3px 10px;font-size:12px;line-height:1.5}',
        '.dshsr-btn:disabled{opacity:.4;cursor:default}',
        '.dshsr-primary{background:var(--dsw-alias-label-primary);color:var(--dsw-alias-bg-layer-3);border-color:transparent}',
        '.dshsr-editor{border-top:1px solid var(--dsw-alias-border-l2);padding:8px 12px 10px;display:flex;flex-direction:column;gap:10px}',
        '.dshsr-field{display:flex;flex-direction:column;gap:4px}',
        '.dshsr-fieldhead{display:flex;align-items:center;gap:8px}',
        '.dshsr-label{flex:1;color:var(--dsw-alias-label-primary);font-size:13px;font-weight:500}',
        '.dshsr-input{border:1px solid var(--dsw-alias-border-l2);background:var(--dsw-alias-bg-layer-3);height:32px;font:inherit;color:var(--dsw-alias-label-primary);border-radius:8px;padding:0 10px;font-size:13px}',
        '.dshsr-inline{display:flex;gap:6px;align-items:center}',
        '.dshsr-inline .dshsr-input{flex:1}',
        '.dshsr-status{color:var(--dsw-alias-label-tertiary);font-size:12px;line-height:1.5;margin:0}',
        '.dshsr-error{color:var(--dsw-alias-label-error)}',
        '.dshsr-advanced summary{cursor:pointer;color:var(--dsw-alias-label-secondary);font-size:13px}',
      ].join('');
      if (typeof document !== 'undefined' && !document.querySelector('style[data-plugin-css="search-router-card"]')) {
        const tag = document.createElement('style');
        tag.dataset.plugin = id;
        tag.dataset.pluginCss = 'search-router-card';
        tag.textContent = CSS;
        document.head.appendChild(tag);
      }

      const has = (layer, key) => layer !== null && typeof layer === 'object' && !Array.isArray(layer) && Object.hasOwn(layer, key);
      const fill = (text, values) => String(text).replace(/\{(\w+)\}/g, (_, k) => (k in values ? String(values[k]) : `{${k}}`));
      const baseKey = (provider) => (provider === 'searxng' ? 'baseUrl' : 'baseURL');

      /** The card's view of the namespace: the chain and its mode, each provider's fields. */
      function viewOf(snapshot) {
        const base = snapshot.base && typeof snapshot.base === 'object' ? snapshot.base : {};
        const user = snapshot.user && typeof snapshot.user === 'object' ? snapshot.user : {};
        const userMode = has(user, 'order') || has(user, 'provider');
        const mode = userMode ? user : base;
        let chain;
        let kind;
        if (Array.isArray(mode.order) && mode.order.length) {
          chain = mode.order.filter((p) => PROVIDERS.includes(p));
          kind = 'order';
        } else if (typeof mode.provider === 'string' && PROVIDERS.includes(mode.provider)) {
          chain = [mode.provider];
          kind = 'single';
        } else {
          chain = [...PROVIDERS];
          kind = 'auto';
        }
        const field = (provider, key) => {
          const u = user.providers?.[provider];
          const b = base.providers?.[provider];
          const alt = key === 'baseURL' ? 'baseUrl' : key === 'baseUrl' ? 'baseURL' : undefined;
          if (has(u, key)) return { value: u[key], overridden: true };
          if (alt && has(u, alt)) return { value: u[alt], overridden: true, key: alt };
          if (has(b, key)) return { value: b[key], overridden: false };
          if (alt && has(b, alt)) return { value: b[alt], overridden: false };
          return { value: '', overridden: false };
        };
        const scalar = (key) => (has(user, key) ? { value: user[key], overridden: true } : { value: base[key], overridden: false });
        return {
          chain,
          kind,
          userMode,
          field,
          timeout: scalar('timeoutMs'),
          empty: scalar('emptyResultsFallback'),
          concurrent: scalar('maxConcurrentSearches'),
          queued: scalar('maxQueuedSearches'),
        };
      }

      /** The card's state and writes over the `search-router` namespace. */
      class Controller {
        constructor(ctx) {
          this.api = ctx.get('connection').api;
          this.scope = ctx.settingsScope.bind({ namespace: NS, decode: (section) => (section && typeof section === 'object' ? section : {}) });
          this.describe = ctx.settingsScope.describe();
          this.queue = Promise.resolve();
          this.message = undefined;
          this.listeners = new Set();
          this.state = this.project();
          const refresh = () => {
            this.state = this.project();
            for (const listener of this.listeners) listener();
          };
          this.refresh = refresh;
          ctx.effect(() => this.scope.subscribe(refresh), 'search-router card: scope');
          ctx.effect(() => this.describe.subscribe(refresh), 'search-router card: secrets');
        }

        project() {
          const snapshot = this.scope.getSnapshot();
          const view = this.describe.getSnapshot().view?.namespaces?.find((n) => n.ns === NS);
          const secrets = {};
          for (const secret of view?.secrets ?? []) {
            const path = Array.isArray(secret.path) ? secret.path : String(secret.path).split('.');
            if (path[0] === 'providers' && path[2] === 'apiKey') secrets[path[1]] = Boolean(secret.set);
          }
          return { snapshot, secrets, message: this.message, busy: this.busy === true, writes: this.writes ?? 0 };
        }

        store() {
          return { getSnapshot: () => this.state, subscribe: (fn) => (this.listeners.add(fn), () => this.listeners.delete(fn)) };
        }

        /** Apply `ops` to the user layer now (one revision-fenced write; writes run in order). */
        write(ops) {
          const run = async () => {
            this.busy = true;
            this.refresh();
            const revision = this.scope.getSnapshot().revision;
            let message;
            try {
              const response = await this.api.settings.mutate({ ns: NS, ops, ...(revision === undefined ? {} : { expectedRevision: revision }) });
              if (response?.result?.ok) {
                this.describe.acceptView(response.result.value);
                message = { ok: true, key: 'applied' };
              } else {
                message = { ok: false, key: 'refused', reason: response?.result?.error?.message ?? 'refused' };
                await this.describe.ensure();
              }
            } catch (error) {
              message = { ok: false, key: 'refused', reason: String(error?.message ?? error) };
            }
            this.busy = false;
            this.message = message;
            this.writes = (this.writes ?? 0) + 1;
            this.refresh();
          };
          this.queue = this.queue.then(run, run);
          return this.queue;
        }

        actions() {
          const setChain = (chain) =>
            this.write(chain.length ? [{ op: 'unset', path: ['provider'] }, { op: 'set', path: ['order'], value: chain }] : [{ op: 'unset', path: ['provider'] }, { op: 'unset', path: ['order'] }]);
          return {
            setChain,
            resetChain: () => this.write([{ op: 'unset', path: ['order'] }, { op: 'unset', path: ['provider'] }]),
            setField: (provider, key, value) => this.write([{ op: 'set', path: ['providers', provider, key], value }]),
            resetField: (provider, key) => this.write([{ op: 'unset', path: ['providers', provider, key] }]),
            storeKey: (provider, value) => this.write([{ op: 'set', path: ['providers', provider, 'apiKey'], value }]),
            clearKey: (provider) => this.write([{ op: 'unset', path: ['providers', provider, 'apiKey'] }]),
            setScalar: (key, value) => this.write([{ op: 'set', path: [key], value }]),
            resetScalar: (key) => this.write([{ op: 'unset', path: [key] }]),
          };
        }
      }

      /** One text field committed on Enter, on leaving it, or with its Apply button. */
      function TextField(props) {
        const [draft, setDraft] = React.useState(undefined);
        const text = draft ?? String(props.value ?? '');
        const commit = () => {
          if (draft === undefined) return;
          const value = draft.trim();
          setDraft(undefined);
          if (value === String(props.value ?? '')) return;
          if (value === '') props.onReset();
          else props.onCommit(value);
        };
        return h('div', { className: 'dshsr-field' },
          h('div', { className: 'dshsr-fieldhead' },
            h('label', { className: 'dshsr-label', htmlFor: props.id }, props.label),
            props.overridden ? h('span', { className: 'dshsr-badge' }, props.t('overridden')) : null,
            props.overridden ? h('button', { type: 'button', className: 'dshsr-btn', disabled: props.disabled, onClick: props.onReset, 'aria-label': `${props.t('reset')}: ${props.label}` }, props.t('reset')) : null),
          h('div', { className: 'dshsr-inline' },
            h('input', {
              id: props.id,
              className: 'dshsr-input',
              type: props.numeric ? 'number' : 'text',
              value: text,
              placeholder: props.placeholder ?? '',
              disabled: props.disabled,
              onChange: (event) => setDraft(event.target.value),
              onBlur: commit,
              onKeyDown: (event) => {
                if (event.key === 'Enter') commit();
                if (event.key === 'Escape') setDraft(undefined);
              },
            }),
            h('button', { type: 'button', className: 'dshsr-btn', disabled: props.disabled || draft === undefined, onClick: commit }, props.t('apply'))));
      }

      function ProviderEditor(props) {
        const { t, provider, view, actions, secrets, disabled } = props;
        const [key, setKey] = React.useState('');
        const env = KEY_ENV[provider];
        const children = [];
        if (env) {
          const keyEnv = view.field(provider, 'apiKeyEnv');
          const variable = keyEnv.value || env;
          const stored = secrets[provider] === true;
          children.push(h('div', { className: 'dshsr-field', key: 'key' },
            h('div', { className: 'dshsr-fieldhead' }, h('label', { className: 'dshsr-label', htmlFor: `dshsr-${provider}-key` }, t('keyLabel'))),
            h('p', { className: 'dshsr-status', 'data-key-state': stored ? 'stored' : 'env' }, fill(t(stored ? 'keyStored' : 'keyEnv'), { env: variable })),
            h('div', { className: 'dshsr-inline' },
              h('input', { id: `dshsr-${provider}-key`, className: 'dshsr-input', type: 'password', autoComplete: 'off', value: key, placeholder: t('keyPlaceholder'), disabled, onChange: (event) => setKey(event.target.value) }),
              h('button', { type: 'button', className: 'dshsr-btn dshsr-primary', disabled: disabled || !key.trim(), onClick: () => { actions.storeKey(provider, key.trim()); setKey(''); } }, t('keyStore')),
              stored ? h('button', { type: 'button', className: 'dshsr-btn', disabled, onClick: () => actions.clearKey(provider) }, t('keyClear')) : null)));
          children.push(h(TextField, { key: 'keyEnv', t, id: `dshsr-${provider}-keyenv`, label: t('keyEnvLabel'), value: keyEnv.value, overridden: keyEnv.overridden, placeholder: env, disabled, onCommit: (v) => actions.setField(provider, 'apiKeyEnv', v), onReset: () => actions.resetField(provider, 'apiKeyEnv') }));
        }
        const endpointKey = baseKey(provider);
        const endpoint = view.field(provider, endpointKey);
        children.push(h(TextField, { key: 'endpoint', t, id: `dshsr-${provider}-endpoint`, label: t('endpointLabel'), value: endpoint.value, overridden: endpoint.overridden, placeholder: ENDPOINTS[provider] || (provider === 'searxng' ? 'SEARXNG_BASE_URL' : ''), disabled, onCommit: (v) => actions.setField(provider, endpoint.key ?? endpointKey, v), onReset: () => actions.resetField(provider, endpoint.key ?? endpointKey) }));
        if (provider === 'searxng') {
          const variable = view.field(provider, 'baseUrlEnv');
          children.push(h(TextField, { key: 'endpointEnv', t, id: `dshsr-${provider}-endpointenv`, label: t('endpointEnvLabel'), value: variable.value, overridden: variable.overridden, placeholder: 'SEARXNG_BASE_URL', disabled, onCommit: (v) => actions.setField(provider, 'baseUrlEnv', v), onReset: () => actions.resetField(provider, 'baseUrlEnv') }));
        }
        if (MODELS[provider]) {
          const model = view.field(provider, 'model');
          children.push(h(TextField, { key: 'model', t, id: `dshsr-${provider}-model`, label: t('modelLabel'), value: model.value, overridden: model.overridden, placeholder: MODELS[provider], disabled, onCommit: (v) => actions.setField(provider, 'model', v), onReset: () => actions.resetField(provider, 'model') }));
        }
        return h('div', { className: 'dshsr-editor', 'data-editor': provider }, ...children);
      }

      function SearchRouterCard(props) {
        const { t } = props;
        const state = props.useSearchRouterCard((s) => s);
        const actions = props.actions;
        const [open, setOpen] = React.useState(false);
        const [editing, setEditing] = React.useState(undefined);
        const [adding, setAdding] = React.useState(undefined);
        const [dragged, setDragged] = React.useState(undefined);
        const [over, setOver] = React.useState(undefined);
        const focusAfter = React.useRef(undefined);
        const list = React.useRef(null);
        React.useEffect(() => {
          const provider = focusAfter.current;
          if (provider === undefined || !list.current) return;
          focusAfter.current = undefined;
          list.current.querySelector(`[data-provider="${provider}"] .dshsr-handle`)?.focus();
        });
        const snapshot = state.snapshot;
        if (snapshot.status !== 'ready') return null; // a deployment without the router shows no trace of it
        const view = viewOf(snapshot);
        const disabled = !snapshot.writable || state.busy;
        const chain = view.chain;
        const move = (from, to) => {
          if (to < 0 || to >= chain.length || from === to) return;
          const next = [...chain];
          const [item] = next.splice(from, 1);
          next.splice(to, 0, item);
          focusAfter.current = item;
          actions.setChain(next);
        };
        const rows = chain.map((provider, index) => {
          const n = index + 1;
          return h('li', {
            key: provider,
            className: 'dshsr-row',
            'data-provider': provider,
            'data-dragover': over === provider ? 'true' : 'false',
            draggable: !disabled,
            onDragStart: (event) => {
              setDragged(provider);
              event.dataTransfer.effectAllowed = 'move';
              event.dataTransfer.setData('text/plain', provider);
            },
            onDragOver: (event) => {
              event.preventDefault();
              if (over !== provider) setOver(provider);
            },
            onDragLeave: () => setOver(undefined),
            onDrop: (event) => {
              event.preventDefault();
              const from = chain.indexOf(dragged ?? event.dataTransfer.getData('text/plain'));
              setDragged(undefined);
              setOver(undefined);
              if (from >= 0) move(from, index);
            },
            onDragEnd: () => {
              setDragged(undefined);
              setOver(undefined);
            },
          },
          h('div', { className: 'dshsr-line' },
            h('button', {
              type: 'button',
              className: 'dshsr-handle',
              'aria-label': fill(t('move'), { provider: LABELS[provider], n }),
              disabled,
              onKeyDown: (event) => {
                if (event.key === 'ArrowUp') { event.preventDefault(); move(index, index - 1); }
                if (event.key === 'ArrowDown') { event.preventDefault(); move(index, index + 1); }
              },
            }, '⠿'),
            h('span', { className: 'dshsr-rank', 'aria-label': fill(t('priority'), { n }) }, `${n}.`),
            h('span', { className: 'dshsr-provider' }, LABELS[provider]),
            view.kind === 'auto' ? h('span', { className: 'dshsr-badge' }, t('auto')) : null,
            state.secrets[provider] ? h('span', { className: 'dshsr-badge' }, t('keyBadge')) : null,
            h('button', { type: 'button', className: 'dshsr-btn', 'aria-expanded': editing === provider, onClick: () => setEditing(editing === provider ? undefined : provider) }, t(editing === provider ? 'close' : 'edit')),
            h('button', { type: 'button', className: 'dshsr-btn', disabled: disabled || chain.length <= 1, onClick: () => actions.setChain(chain.filter((p) => p !== provider)) }, t('remove'))),
          editing === provider ? h(ProviderEditor, { t, provider, view, actions, secrets: state.secrets, disabled: !snapshot.writable }) : null);
        });
        const addable = PROVIDERS.filter((p) => view.kind === 'auto' || !chain.includes(p));
        const addFlow = adding === undefined
          ? h('button', { type: 'button', className: 'dshsr-btn', disabled: disabled || addable.length === 0, onClick: () => setAdding(addable[0]) }, t('add'))
          : h('div', { className: 'dshsr-inline' },
            h('select', { className: 'dshsr-input', 'aria-label': t('addChoose'), value: adding, onChange: (event) => setAdding(event.target.value) },
              ...addable.map((p) => h('option', { key: p, value: p }, LABELS[p]))),
            h('button', { type: 'button', className: 'dshsr-btn dshsr-primary', disabled, onClick: () => {
              const base = view.kind === 'auto' ? [] : chain.filter((p) => p !== adding);
              actions.setChain([...base, adding]);
              setEditing(adding);
              setAdding(undefined);
            } }, t('addConfirm')),
            h('button', { type: 'button', className: 'dshsr-btn', onClick: () => setAdding(undefined) }, t('addCancel')));
        const timeout = view.timeout;
        const empty = view.empty;
        const message = state.message;
        const body = open
          ? h('div', { className: 'dshsr-body' },
            !snapshot.writable ? h('p', { className: 'dshsr-status', role: 'status' }, t('readOnly')) : null,
            h('p', { className: 'dshsr-hint' }, view.kind === 'auto' ? t('chainAuto') : view.kind === 'single' ? t('chainSingle') : t('chainHint')),
            h('ol', { className: 'dshsr-chain', ref: list, 'aria-label': t('title') }, ...rows),
            h('div', { className: 'dshsr-inline' },
              addFlow,
              view.userMode ? h('button', { type: 'button', className: 'dshsr-btn', disabled, onClick: () => actions.resetChain() }, t('resetChain')) : null),
            h('details', { className: 'dshsr-advanced' },
              h('summary', null, t('advanced')),
              h(TextField, { t, id: 'dshsr-timeout', label: t('timeoutLabel'), numeric: true, value: timeout.value ?? '', placeholder: String(DEFAULT_TIMEOUT_MS), overridden: timeout.overridden, disabled, onCommit: (v) => actions.setScalar('timeoutMs', Number(v)), onReset: () => actions.resetScalar('timeoutMs') }),
              h(TextField, { t, id: 'dshsr-concurrent', label: t('concurrentLabel'), numeric: true, value: view.concurrent.value ?? '', placeholder: String(DEFAULT_MAX_CONCURRENT), overridden: view.concurrent.overridden, disabled, onCommit: (v) => actions.setScalar('maxConcurrentSearches', Number(v)), onReset: () => actions.resetScalar('maxConcurrentSearches') }),
              h(TextField, { t, id: 'dshsr-queued', label: t('queuedLabel'), numeric: true, value: view.queued.value ?? '', placeholder: String(DEFAULT_MAX_QUEUED), overridden: view.queued.overridden, disabled, onCommit: (v) => actions.setScalar('maxQueuedSearches', Number(v)), onReset: () => actions.resetScalar('maxQueuedSearches') }),
              h('div', { className: 'dshsr-field' },
                h('div', { className: 'dshsr-fieldhead' },
                  h('label', { className: 'dshsr-label', htmlFor: 'dshsr-empty' }, t('emptyLabel')),
                  empty.overridden ? h('span', { className: 'dshsr-badge' }, t('overridden')) : null,
                  empty.overridden ? h('button', { type: 'button', className: 'dshsr-btn', disabled, onClick: () => actions.resetScalar('emptyResultsFallback'), 'aria-label': `${t('reset')}: ${t('emptyLabel')}` }, t('reset')) : null),
                h('select', { id: 'dshsr-empty', className: 'dshsr-input', disabled, value: empty.value === false ? 'answer' : 'fallback', onChange: (event) => actions.setScalar('emptyResultsFallback', event.target.value !== 'answer') },
                  h('option', { value: 'fallback' }, t('emptyFallback')),
                  h('option', { value: 'answer' }, t('emptyAnswer'))))),
            h('p', { className: `dshsr-status${message && !message.ok ? ' dshsr-error' : ''}`, role: 'status', 'aria-live': 'polite', 'data-writes': state.writes },
              message ? fill(t(message.key), { reason: message.reason ?? '' }) : ''))
          : null;
        return h('li', { className: `dshsr-card${open ? ' dshsr-open' : ''}`, 'data-card': NS },
          h('button', { type: 'button', className: 'dshsr-header', 'aria-expanded': open, 'aria-label': `${t(open ? 'close' : 'edit')}: ${t('title')}`, onClick: () => setOpen(!open) },
            h('span', { className: 'dshsr-head' },
              h('span', { className: 'dshsr-name' }, t('title')),
              h('span', { className: 'dshsr-desc' }, t('description')))),
          body);
      }

      /** Required services (cordis fiber inject). */
      const inject = ['slots', 'locale', 'connection', 'settingsScope'];

      function apply(ctx) {
        ctx.effect(() => ctx.locale.register(LOCALE, { en, zh }), 'search-router card: dictionaries');
        const controller = new Controller(ctx);
        const store = controller.store();
        const actions = controller.actions();
        ctx.slots.inject('settings.plugin.item', () =>
          ctx.slots.register(
            { name: 'settings.plugin.item', key: NS, locale: LOCALE, inject: () => ({ hooks: { searchRouterCard: store }, actions }) },
            SearchRouterCard,
          ),
        );
      }

      module.exports.apply = apply;
      module.exports.inject = inject;
      module.exports.viewOf = viewOf;
      return module.exports;
    },
  });
})();
