// Clusters (admin): each cluster's connection and capacity, and its pools: idle, running, paused,
// target and capacity per template, the image pull's status and the template's build status.
import {badge, h, table, time} from '../dom.js';
import {errorNote, frame, reloader} from '../page.js';

export function mount({api}) {
  const area = h('div', {id: 'clusters', class: 'area'});
  const reload = reloader(area, 'Clusters', async () => {
    const [{items}, templates] = await Promise.all([api.list('/v1/clusters'), templatesById(api)]);
    return {items, templates: [...templates.entries()]};
  }, ({items, templates: entries}) => {
    const templates = new Map(entries);
    if (!items.length) return h('p', {class: 'empty'}, 'No cluster has joined this hub.');
    return items.map(c => cluster(c, templates));
  });
  reload();
  return {
    title: 'Clusters',
    el: frame('Clusters', [], area),
    update(topic) {
      if (topic === 'cluster' || topic === 'build' || topic === 'tick' || topic === 'reconnected') reload();
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
      {title: 'Template', cell: p => templateName(p.template, templates)},
      {title: 'Idle', cell: p => p.idle ?? 0, class: 'num pool-idle'},
      {title: 'Running', cell: p => p.running ?? 0, class: 'num'},
      {title: 'Paused', cell: p => p.paused ?? 0, class: 'num'},
      {title: 'Target', cell: p => p.target ?? '', class: 'num'},
      {title: 'Capacity', cell: p => p.capacity ?? '', class: 'num'},
      {title: 'Pull', cell: p => [badge(p.pullStatus), progress(p.pullProgress)]},
      {title: 'Build', cell: p => badge(templates.get(p.template)?.buildStatus)},
    ], pools, 'No pools.'));
}

function templateName(id, templates) {
  const t = templates.get(id);
  const alias = t?.aliases?.[0];
  return h('a', {href: `#/templates/${encodeURIComponent(id)}`, 'data-pool': id}, alias && alias !== id ? `${alias} ` : '',
    h('span', {class: alias && alias !== id ? 'muted mono' : 'mono'}, id));
}

function progress(p) {
  if (p === null || p === undefined || p === '') return '';
  if (typeof p === 'number') return h('span', {class: 'muted'}, ` ${p <= 1 ? Math.round(p * 100) : Math.round(p)}%`);
  if (typeof p === 'object' && p.total) return h('span', {class: 'muted'}, ` ${Math.round(100 * (p.done ?? p.bytes ?? 0) / p.total)}%`);
  return h('span', {class: 'muted'}, ` ${typeof p === 'object' ? JSON.stringify(p) : p}`);
}
