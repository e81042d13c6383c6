// Templates: every template the key sees, with its image, resources and build status.
import {badge, h, table, time} from '../dom.js';
import {frame, reloader} from '../page.js';

export function mount({api}) {
  const area = h('div', {id: 'templates', class: 'area'});
  const reload = reloader(area, 'Templates', () => api.list('/v1/templates', {limit: 1000}), ({items}) => {
    return table([
      {title: 'Template', cell: t => h('a', {href: `#/templates/${encodeURIComponent(t.id)}`, class: 'mono'}, t.id)},
      {title: 'Aliases', cell: t => (t.aliases || []).join(', ')},
      {title: 'Kind', cell: t => t.kind ?? ''},
      {title: 'Image', cell: t => t.image ? h('code', {}, t.image) : h('span', {class: 'muted'}, 'host root')},
      {title: 'Clusters', cell: t => clusters(t) || h('span', {class: 'muted'}, 'any')},
      {title: 'Pool', cell: t => t.poolSize ?? '', class: 'num'},
      {title: 'CPU / memory / disk', cell: t => `${t.cpuCount ?? '?'} / ${t.memoryMb ?? '?'} MB / ${t.diskSizeMb ?? '?'} MB`, class: 'num'},
      {title: 'Network', cell: t => t.network},
      {title: 'Build', cell: t => badge(t.buildStatus)},
      {title: 'Updated', cell: t => time(t.updatedAt)},
    ], items, 'No templates.');
  });
  reload();
  return {
    title: 'Templates',
    el: frame('Templates', [], area),
    update(topic) {
      if (topic === 'build' || topic === 'tick' || topic === 'reconnected') reload();
    },
  };
}

/** Where a template runs: its clusters (or the one cluster of older answers); '' for any. */
export function clusters(t) {
  return (t.clusters || (t.cluster ? [t.cluster] : [])).join(', ');
}
