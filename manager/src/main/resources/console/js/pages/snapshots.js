// Snapshots: the sandboxes' file systems saved as templates; start a sandbox from one or delete it.
import {path} from '../api.js';
import {h, note, replace, table, time} from '../dom.js';
import {confirmButton, errorNote, frame, reloader} from '../page.js';

export function mount({api}) {
  const status = h('div', {class: 'status-line'});
  const area = h('div', {id: 'snapshots', class: 'area'});

  async function act(what, call) {
    try {
      const r = await call();
      replace(status, note('info', what, r?.id ? [' ', h('a', {href: `#/sandboxes/${encodeURIComponent(r.id)}`, class: 'mono'}, r.id)] : ''));
    } catch (e) {
      replace(status, errorNote(e, what));
    }
    reload();
  }

  const reload = reloader(area, 'Snapshots', () => api.list('/v1/snapshots', {limit: 1000}), ({items}) => {
    return table([
      {title: 'Snapshot', cell: s => h('span', {class: 'mono', 'data-snapshot': s.id}, s.id)},
      {title: 'Names', cell: s => (s.names || []).join(', ')},
      {title: 'From sandbox', cell: s => s.sourceSandbox ? h('span', {class: 'mono'}, s.sourceSandbox) : ''},
      {title: 'Team', cell: s => s.team ?? ''},
      {title: 'Cluster', cell: s => s.cluster ?? ''},
      {title: 'Created', cell: s => time(s.createdAt)},
      {title: '', cell: s => h('span', {class: 'row-actions'},
        h('button', {type: 'button', onclick: () => act('Started', () => api.post('/v1/sandboxes', {snapshot: s.id}))}, 'Start sandbox'),
        confirmButton('Delete', 'Confirm delete', () => act(`Deleted ${s.id}`, () => api.del(path('snapshots', s.id))), {},
          `delete-snapshot:${s.id}`))},
    ], items, 'No snapshots.');
  });
  reload();
  return {
    title: 'Snapshots',
    el: frame('Snapshots', [], status, area),
    update(topic) {
      if (topic === 'tick' || topic === 'reconnected' || topic === 'sandbox') reload();
    },
  };
}
