// One template: its fields and its builds, each linking to its logs.
import {path} from '../api.js';
import {badge, fields, h, replace, table, time} from '../dom.js';
import {confirmButton, errorNote, frame, reloader} from '../page.js';
import {clusters} from './templates.js';

export function mount({api}, id) {
  const status = h('div', {class: 'status-line'});
  const area = h('div', {id: 'template', class: 'area'});
  const builds = h('div', {id: 'builds', class: 'area'});

  const reload = reloader(area, `Template ${id}`, async () => {
    loadBuilds();
    return api.get(path('templates', id));
  }, t => {
    return fields([
      ['Id', h('span', {class: 'mono'}, t.id)],
      ['Aliases', (t.aliases || []).join(', ')],
      ['Image', t.image ? h('code', {}, t.image) : 'host root (no image)'],
      ['Kind', t.kind],
      ['Clusters', clusters(t) || 'any'],
      ['Pool size', t.poolSize],
      ['CPUs', t.cpuCount], ['Memory', `${t.memoryMb} MB`], ['Disk', `${t.diskSizeMb} MB`],
      ['Network', t.network], ['Public', t.public ? 'yes' : 'no'],
      ['Build', badge(t.buildStatus)],
      ['Created', time(t.createdAt)], ['Updated', time(t.updatedAt)],
    ]);
  });

  const loadBuilds = reloader(builds, 'Builds', () => api.list(path('templates', id, 'builds')), ({items}) => table([
        {title: 'Build', cell: b => h('a', {href: `#/templates/${encodeURIComponent(id)}/builds/${encodeURIComponent(b.buildId)}`,
          class: 'mono', 'data-build': b.buildId}, b.buildId)},
        {title: 'Status', cell: b => badge(b.status)},
        {title: 'Started', cell: b => time(b.startedAt)},
        {title: 'Finished', cell: b => time(b.finishedAt)},
        {title: 'Error', cell: b => b.error || ''},
      ], items, 'No builds: this template was not built with Template.build.'));

  const remove = confirmButton('Delete', 'Confirm delete', async () => {
    try {
      await api.del(path('templates', id));
      location.hash = '#/templates';
    } catch (e) {
      replace(status, errorNote(e, 'Delete'));
    }
  });
  reload();
  return {
    title: `Template ${id}`,
    el: frame(h('span', {}, 'Template ', h('span', {class: 'mono'}, id)), [remove], status, area, h('h2', {}, 'Builds'), builds),
    update(topic, data) {
      if (topic === 'tick' || topic === 'reconnected' || (topic === 'build' && (!data?.templateId || data.templateId === id))) reload();
    },
  };
}
