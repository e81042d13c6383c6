// Sandboxes: the list with filters (state, template, cluster, metadata k=v), each row linking to
// the sandbox's page and with a kill button; reloads on sandbox events or poll ticks.
import {path} from '../api.js';
import {badge, h, note, replace, table, time} from '../dom.js';
import {confirmButton, errorNote, frame, reloader} from '../page.js';

const STEP = 100;
const MAX = 1000;

export function mount({api}) {
  const filter = {state: '', template: '', cluster: '', metadata: ''};
  let limit = STEP;
  const status = h('div', {class: 'status-line', id: 'sandboxes-status'});
  const area = h('div', {id: 'sandboxes', class: 'area'});

  const input = (name, placeholder) => h('input', {name, placeholder, 'aria-label': placeholder, onchange: e => {
    filter[name] = e.target.value.trim();
    limit = STEP;
    reload();
  }});
  const filters = h('form', {class: 'filters', onsubmit: e => e.preventDefault()},
    h('select', {name: 'state', 'aria-label': 'state', onchange: e => { filter.state = e.target.value; reload(); }},
      h('option', {value: ''}, 'any state'), h('option', {value: 'running'}, 'running'), h('option', {value: 'paused'}, 'paused'),
      h('option', {value: 'unreachable'}, 'unreachable')),
    input('template', 'template'), input('cluster', 'cluster'), input('metadata', 'metadata key=value'));

  async function kill(id) {
    try {
      await api.del(path('sandboxes', id));
      replace(status, note('info', `Killed ${id}.`));
    } catch (e) {
      replace(status, errorNote(e, `Kill ${id}`));
    }
    await reload();
  }

  const reload = reloader(area, 'Sandboxes', () => api.list('/v1/sandboxes', {...filter, limit}), ({items, nextCursor}) => {
    const rows = table([
      {title: 'Sandbox', cell: s => h('a', {href: `#/sandboxes/${encodeURIComponent(s.id)}`, class: 'mono'}, s.id)},
      {title: 'Template', cell: s => s.templateAlias || s.template || (s.snapshotId ? `snapshot ${s.snapshotId}` : '')},
      {title: 'State', cell: s => badge(s.state)},
      {title: 'Cluster', cell: s => s.cluster},
      {title: 'Team', cell: s => s.team},
      {title: 'Started', cell: s => time(s.startedAt)},
      {title: 'Ends', cell: s => time(s.endAt)},
      {title: 'CPU / memory', cell: s => `${s.cpuCount ?? '?'} / ${s.memoryMb ?? '?'} MB`, class: 'num'},
      {title: '', cell: s => h('span', {class: 'row-actions'},
        h('a', {href: `#/sandboxes/${encodeURIComponent(s.id)}`, class: 'btn'}, 'Inspect'),
        confirmButton('Kill', 'Confirm kill', () => kill(s.id), {'data-kill': s.id}, `kill:${s.id}`))},
    ], items, 'No sandboxes match.');
    const more = nextCursor && limit < MAX
      ? h('button', {type: 'button', onclick: () => { limit = Math.min(MAX, limit + STEP); reload(); }}, 'Show more')
      : nextCursor ? h('p', {class: 'muted'}, `Showing the first ${MAX}; narrow the filter to see others.`) : '';
    return [h('p', {class: 'muted'}, `${items.length}${nextCursor ? '+' : ''} sandbox${items.length === 1 ? '' : 'es'}`), rows, more];
  });
  reload();
  return {
    title: 'Sandboxes',
    el: frame('Sandboxes', [], filters, status, area),
    update(topic) {
      if (topic === 'sandbox' || topic === 'tick' || topic === 'reconnected') reload();
    },
  };
}
