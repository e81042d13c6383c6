// API keys (admin): list, create (the key is shown once), delete.
import {path} from '../api.js';
import {h, note, replace, table, time} from '../dom.js';
import {confirmButton, errorNote, frame, reloader} from '../page.js';

export function mount({api}) {
  const status = h('div', {class: 'status-line', id: 'keys-status'});
  const area = h('div', {id: 'keys', class: 'area'});
  const name = h('input', {name: 'name', placeholder: 'name', 'aria-label': 'name', required: true});
  const team = h('input', {name: 'team', placeholder: 'team', 'aria-label': 'team', required: true});
  const role = h('select', {name: 'role', 'aria-label': 'role'}, h('option', {value: 'user'}, 'user'), h('option', {value: 'admin'}, 'admin'));
  const form = h('form', {class: 'filters', onsubmit: async e => {
    e.preventDefault();
    try {
      const k = await api.post('/v1/keys', {name: name.value.trim(), team: team.value.trim(), role: role.value});
      replace(status, note('info', `Created key ${k.id} for team ${k.team ?? team.value}. Copy it now, it is not shown again: `,
        h('code', {class: 'secret', id: 'new-key'}, k.key)));
      name.value = '';
    } catch (err) {
      replace(status, errorNote(err, 'Create key'));
    }
    reload();
  }}, name, team, role, h('button', {type: 'submit'}, 'Create key'));

  const reload = reloader(area, 'API keys', () => api.list('/v1/keys', {limit: 1000}), ({items}) => {
    return table([
      {title: 'Key', cell: k => h('span', {class: 'mono', 'data-key': k.id}, k.id)},
      {title: 'Name', cell: k => k.name ?? ''},
      {title: 'Team', cell: k => k.team ?? ''},
      {title: 'Role', cell: k => k.role ?? (k.admin ? 'admin' : '')},
      {title: 'Prefix', cell: k => k.prefix ? h('code', {}, k.prefix) : ''},
      {title: 'Created', cell: k => time(k.createdAt)},
      {title: 'Last used', cell: k => time(k.lastUsedAt)},
      {title: '', cell: k => confirmButton('Delete', 'Confirm delete', async () => {
        try {
          await api.del(path('keys', k.id));
          replace(status, note('info', `Deleted key ${k.id}.`));
        } catch (err) {
          replace(status, errorNote(err, 'Delete key'));
        }
        reload();
      }, {}, `delete-key:${k.id}`)},
    ], items, 'No keys.');
  });
  reload();
  return {
    title: 'API keys',
    el: frame('API keys', [], form, status, area),
    update(topic) {
      if (topic === 'tick' || topic === 'reconnected') reload();
    },
  };
}
