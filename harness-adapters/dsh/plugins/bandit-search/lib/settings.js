// The host half of the "Search router" card (Settings → Plugins → Plugin configuration in
// `dsh web`): the `search-router` settings namespace, registered on DSH's settings service
// (`ctx.settings`) with the row's config as its composition layer. The card (the browser half,
// client/client.js) writes the user layer; each change reaches the running sidecar at once.
//
// Layering (the seed: "the GUI wins per field, and a GUI reset re-inherits the composition
// value"): the resolved section is the row's config with the user layer over it, field by
// field (`providers.<id>.<key>` each a field); a field the card resets is removed from the
// user layer and the row's value shows through again. The chain is one field in two keys:
// `provider` (single) XOR `order` (chain), so a user layer that sets either replaces the row's
// mode as a whole. Keys (`providers.<id>.apiKey`) are `role('secret')`: stored in the settings
// document, never sent to a browser (the card learns only whether one is stored), and they
// override the environment; with none stored the provider's `apiKeyEnv` variable is used.
// Besides the seed's fields the card carries the searches' cap (`maxConcurrentSearches`,
// `maxQueuedSearches`); the row's other extensions (`cache`, `deadlineMs`) pass through as the
// row states them. tests/harness/test_dsh_rows.py holds every key of the sidecar's router block
// to one of the two, so a new key is placed on purpose, never forgotten.

import { PROVIDERS, PROVIDER_KEYS, ROUTER_BLOCK_EXTENSIONS } from './rows.js';

/** The settings namespace of the router (the row id). */
export const ROUTER_NAMESPACE = 'search-router';

/** The namespace's schema (schemastery `z`, the harness's own): the seed's fields, no defaults
 * (an absent field is the sidecar's default: the card shows it), keys as secrets. */
export function routerSettingsSchema(z) {
  const provider = z.object({
    apiKey: z.string().role('secret'),
    apiKeyEnv: z.string(),
    baseURL: z.string(),
    baseUrl: z.string(),
    baseUrlEnv: z.string(),
    model: z.string(),
  });
  return z.object({
    provider: z.string(),
    order: z.array(z.string()),
    timeoutMs: z.number(),
    emptyResultsFallback: z.boolean(),
    maxConcurrentSearches: z.number(),
    maxQueuedSearches: z.number(),
    providers: z.dict(provider),
  });
}

const EXPECTED = {
  provider: `must be one provider id (${PROVIDERS.join(', ')})`,
  order: 'must be a list of provider ids',
  timeoutMs: 'must be a whole number of milliseconds from 100 to 600000',
  emptyResultsFallback: 'must be true or false',
  maxConcurrentSearches: 'must be a whole number from 1 to 1024',
  maxQueuedSearches: 'must be a whole number from 0 to 100000',
};

const whole = (min, max) => (v) => Number.isInteger(v) && v >= min && v <= max;

const TYPES = {
  provider: (v) => typeof v === 'string' && PROVIDERS.includes(v),
  order: (v) => Array.isArray(v) && v.every((id) => typeof id === 'string' && PROVIDERS.includes(id)),
  timeoutMs: whole(100, 600000),
  emptyResultsFallback: (v) => typeof v === 'boolean',
  // the sidecar's router.maxConcurrentSearches / maxQueuedSearches (router/config.py: defaults 16
  // and 256): searches at their providers at once, and searches that may wait for a turn
  maxConcurrentSearches: whole(1, 1024),
  maxQueuedSearches: whole(0, 100000),
};

/** The card's single-value fields: each layered on its own (the user layer wins). */
export const SCALAR_KEYS = ['timeoutMs', 'emptyResultsFallback', 'maxConcurrentSearches', 'maxQueuedSearches'];

/** The composition layer the namespace is registered with: the row's seed fields whose type
 * the schema accepts (a field of another type would make DSH refuse the registration itself,
 * and the whole card with it); the rest stays in the row, where the sidecar reports it. */
export function compositionLayer(router, report = () => undefined) {
  const base = {};
  for (const key of Object.keys(TYPES)) {
    if (!(key in router)) continue;
    if (TYPES[key](router[key])) base[key] = router[key];
    else report(`search-router row, ${key}: ${EXPECTED[key]}; it is ignored`);
  }
  if (router.providers && typeof router.providers === 'object') {
    const providers = {};
    for (const [id, block] of Object.entries(router.providers)) {
      const kept = {};
      for (const key of PROVIDER_KEYS[id] ?? []) {
        if (block?.[key] === undefined) continue;
        if (typeof block[key] === 'string') kept[key] = block[key];
        else report(`search-router row, providers.${id}.${key}: must be a string; it is ignored`);
      }
      providers[id] = kept;
    }
    base.providers = providers;
  }
  return base;
}

/** Refuse a write that no schema can express: an unknown provider, a bad timeout, a key of the
 * wrong provider (the card never writes one; another client might). Throws with the field. */
export function validateSection(value) {
  for (const key of Object.keys(TYPES)) {
    if (value?.[key] !== undefined && !TYPES[key](value[key])) throw new Error(`${key}: not a valid value`);
  }
  for (const [id, block] of Object.entries(value?.providers ?? {})) {
    if (!PROVIDERS.includes(id)) throw new Error(`providers.${id}: unknown provider`);
    for (const key of Object.keys(block ?? {})) {
      if (block[key] !== undefined && !PROVIDER_KEYS[id].includes(key)) throw new Error(`providers.${id}.${key}: not a key of ${id}`);
    }
  }
}

function has(layer, key) {
  return layer !== null && typeof layer === 'object' && Object.hasOwn(layer, key);
}

/** The router block the sidecar gets: the user layer over the composition layer, field by
 * field (each `providers.<id>.<key>` a field; an empty string is no value), the chain's mode
 * taken whole from the user layer when it sets one (see the module comment), plus the row's
 * extensions. Only what a layer states is sent: an absent field is the sidecar's default. */
export function effectiveRouter(base, user, row) {
  const out = {};
  const layers = [base ?? {}, user ?? {}];
  for (const key of SCALAR_KEYS) {
    for (const layer of layers) if (has(layer, key) && TYPES[key](layer[key])) out[key] = layer[key];
  }
  const mode = has(user, 'order') || has(user, 'provider') ? user : base;
  if (has(mode, 'order') && TYPES.order(mode.order) && mode.order.length > 0) out.order = [...mode.order];
  else if (has(mode, 'provider') && TYPES.provider(mode.provider)) out.provider = mode.provider;
  const providers = {};
  for (const layer of layers) {
    for (const [id, block] of Object.entries(layer.providers ?? {})) {
      if (!PROVIDERS.includes(id) || block === null || typeof block !== 'object') continue;
      const kept = (providers[id] ??= {});
      for (const key of PROVIDER_KEYS[id]) {
        const value = block[key];
        if (typeof value === 'string' && value.trim() !== '') kept[key] = value.trim();
      }
      if (has(block, 'baseURL') && has(kept, 'baseUrl') && block.baseURL) delete kept.baseUrl;
      if (has(block, 'baseUrl') && has(kept, 'baseURL') && block.baseUrl) delete kept.baseURL;
    }
  }
  if (Object.keys(providers).length) out.providers = providers;
  for (const key of ROUTER_BLOCK_EXTENSIONS) if (!SCALAR_KEYS.includes(key) && key in row) out[key] = row[key];
  return out;
}

/**
 * Call `onChange(block)` with the row's router block now, and register the namespace when DSH
 * has a settings service (the user layer then joins it: `onChange` again now and after every
 * change of the section). Returns nothing; everything is disposed with `ctx`.
 */
export function installRouterSettings(ctx, z, row, onChange, onProblem) {
  const base = compositionLayer(row, onProblem);
  const schema = routerSettingsSchema(z);
  let disposed = false;
  onChange(effectiveRouter(base, undefined, row)); // until (or without) a settings service: the row
  if (typeof ctx.inject !== 'function') return;
  ctx.inject(['settings'], (sctx) => {
    let scope;
    try {
      scope = sctx.settings.register(ROUTER_NAMESPACE, schema, { base, validate: validateSection });
    } catch (error) {
      // a stored section DSH refuses: the card stays away, the row still configures the router
      onProblem(`the stored "search-router" settings were refused (${error?.message ?? error}); the row's config is used`);
      return;
    }
    const push = () => {
      if (disposed) return;
      let user;
      try {
        user = sctx.settings.describe().find((d) => d.ns === ROUTER_NAMESPACE)?.user;
      } catch {
        user = undefined;
      }
      scope.get(); // (the service validated the layers; the block is built from them)
      onChange(effectiveRouter(base, user, row));
    };
    sctx.effect(() => () => {
      if (disposed) return;
      onChange(effectiveRouter(base, undefined, row)); // the settings service went away: the row alone
    });
    push();
    scope.watch(push);
  });
  ctx.effect(() => () => {
    disposed = true;
  }, 'search-router settings');
}
