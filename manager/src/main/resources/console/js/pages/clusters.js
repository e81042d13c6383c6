// Clusters (admin): each cluster's connection and capacity, and its pools: idle, running, paused,
// target and capacity per template (named as users know it: a built template's alias, a snapshot's
// id), the image pull's status and the template's build status. A `cluster` event replaces its
// cluster on screen without asking the hub again; builds, poll ticks and reconnects reload all.
import {badge, h, table, time} from '../dom.js';
import {errorNote, frame, reloader} from '../page.js';

export function mount({api}) {
  const area = h('div', {id: 'clusters', class: 'area'});
  let clusters = null; // id → cluster, as last fetched or sent
  let templates = new Map();
  let patched = false; // the next reload shows the clusters as patched by events, without fetching
  const reload = reloader(area, 'Clusters', async () => {
    if (!patched || !clusters) {
      const [{items}, byId] = await Promise.all([api.list('/v1/clusters'), templatesById(api)]);
      clusters = new Map(items.map(c => [c.id, c]));
      templates = byId;
    }
    patched = false;
    return {items: [...clusters.values()].sort((a, b) => a.id.localeCompare(b.id)), templates: [...templates.entries()]};
  }, ({items, templates: entries}) => {
    const byId = new Map(entries);
    if (!items.length) return h('p', {class: 'empty'}, 'No cluster has joined this hub.');
    return items.map(c => cluster(c, byId));
  });
  reload();
  return {
    title: 'Clusters',
    el: frame('Clusters', [], area),
    update(topic, data) {
      if (topic === 'cluster' && data?.cluster?.id && clusters) {
        if (data.op === 'deleted') clusters.delete(data.cluster.id);
        else clusters.set(data.cluster.id, data.cluster);
        patched = true;
        reload();
      } else if (topic === 'cluster' || topic === 'build' || topic === 'tick' || topic === 'reconnected') {
        reload();
      }
    },
  };
}

/** id → template, for names and build status; an empty map when templates cannot be read. */
async function templatesById(api) {
  try {
    const {items} = await api.list('/v1/templates', {limit: 1000});
    return new Map(items.map(t => [t.id, t]));
  } catch {
    return new Map();
  }
}

function cluster(c, templates) {
  const pools = c.pools || [];
  return h('article', {class: 'card', 'data-cluster': c.id},
    h('div', {class: 'card-head'},
      h('h2', {class: 'mono'}, c.id), badge(c.connected ? 'connected' : 'disconnected'),
      c.runtime ? h('span', {class: 'muted'}, `runtime ${c.runtime}`) : '',
      h('span', {class: 'muted'}, 'last seen ', time(c.lastSeenAt))),
    h('p', {}, `${c.sandboxes ?? 0} sandbox${c.sandboxes === 1 ? '' : 'es'}`, c.capacity !== undefined ? ` · capacity ${c.capacity}` : ''),
    table([
      {title: 'Template', cell: p => templateName(p, templates)},
      {title: 'Idle', cell: p => p.idle ?? 0, class: 'num pool-idle'},
      {title: 'Running', cell: p => p.running ?? 0, class: 'num'},
      {title: 'Paused', cell: p => p.paused ?? 0, class: 'num'},
      {title: 'Target', cell: p => p.target ?? '', class: 'num'},
      {title: 'Capacity', cell: p => p.capacity ?? '', class: 'num'},
      {title: 'Pull', cell: p => [badge(p.pullStatus), progress(p.pullProgress)]},
      {title: 'Build', cell: p => badge(findTemplate(p, templates)?.buildStatus)},
    ], pools, 'No pools.'));
}

/** The template a pool serves: by the hub's name, else by the pool's label (a built template's alias or id). */
function findTemplate(p, templates) {
  const label = p.label || p.template;
  return templates.get(p.template) || templates.get(label)
    || [...templates.values()].find(t => (t.aliases || []).some(a => a === label || a.replace(/:[^/:]*$/, '') === label));
}

/** The pool's user-facing name (its label), linked to its template's page when known, with the hub's name muted beside it. */
function templateName(p, templates) {
  const label = p.label || p.template;
  const t = findTemplate(p, templates);
  const attrs = {'data-pool': p.template, 'data-label': label, title: `hub template ${p.template}`};
  const parts = [h('span', {class: 'mono'}, label), label !== p.template ? h('span', {class: 'muted mono'}, ` ${p.template}`) : ''];
  return t ? h('a', {href: `#/templates/${encodeURIComponent(t.id)}`, ...attrs}, parts) : h('span', attrs, parts);
}

function progress(p) {
  if (p === null || p === undefined || p === '') return '';
  if (typeof p === 'number') return h('span', {class: 'muted'}, ` ${p <= 1 ? Math.round(p * 100) : Math.round(p)}%`);
  if (typeof p === 'object' && p.total) return h('span', {class: 'muted'}, ` ${Math.round(100 * (p.done ?? p.bytes ?? 0) / p.total)}%`);
  return h('span', {class: 'muted'}, ` ${typeof p === 'object' ? JSON.stringify(p) : p}`);
}
