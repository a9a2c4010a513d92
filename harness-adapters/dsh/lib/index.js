// The combined bundle's main entry (`dsh-search-sidecar-bundle`): the search-router plugin, so
// the package that carries the router's browser half (`./client`, the "Search router" card) is
// the one its row names. The other plugins are the subpath entries `./bandit-search`,
// `./search-suggester` and `./search-sidecar` (the retired row); each seed is also a package of
// its own (plugins/), installable alone.

export * from './router.js';
export { noteMessage } from './note.js';
