// One sandbox: its fields and metadata, running commands, kill / pause / resume / timeout, and a
// terminal in the browser on the sandbox's PTY (GET /v1/sandboxes/{id}/pty over a WebSocket).
import {ApiError, path} from '../api.js';
import {badge, fields, h, note, replace, table, time} from '../dom.js';
import {confirmButton, errorNote, frame, reloader} from '../page.js';
import {openTerminal} from '../terminal.js';

export function mount({api}, id) {
  const status = h('div', {class: 'status-line', id: 'sandbox-status'});
  const area = h('div', {id: 'sandbox', class: 'area'});
  const commands = h('div', {id: 'sandbox-commands', class: 'area'});
  const termHost = h('div', {id: 'terminal', class: 'terminal-host', hidden: true});
  const termNote = h('div', {class: 'status-line', id: 'terminal-status'});
  let terminal = null;
  let gone = false;

  async function act(what, call) {
    try {
      await call();
      replace(status, note('info', `${what}: done.`));
    } catch (e) {
      replace(status, errorNote(e, what));
    }
    reload();
  }

  const timeoutInput = h('input', {type: 'number', min: 1, value: 300, 'aria-label': 'timeout in seconds', class: 'short'});
  const actions = [
    h('button', {type: 'button', id: 'open-terminal', onclick: () => toggleTerminal()}, 'Terminal'),
    h('button', {type: 'button', onclick: () => act('Pause', () => api.post(path('sandboxes', id, 'pause')))}, 'Pause'),
    h('button', {type: 'button', onclick: () => act('Resume', () => api.post(path('sandboxes', id, 'resume')))}, 'Resume'),
    confirmButton('Reset', 'Confirm reset', () => act('Reset to the template\'s files', () => api.post(path('sandboxes', id, 'reset')))),
    h('span', {class: 'inline'}, timeoutInput, h('button', {type: 'button', onclick: () => act('Set timeout',
      () => api.post(path('sandboxes', id, 'timeout'), {timeoutSeconds: Number(timeoutInput.value)}))}, 'Set timeout (s)')),
    confirmButton('Kill', 'Confirm kill', () => act('Kill', async () => {
      await api.del(path('sandboxes', id));
      location.hash = '#/sandboxes';
    }), {id: 'kill'}, `kill:${id}`),
  ];

  async function toggleTerminal() {
    if (terminal) {
      terminal.dispose();
      terminal = null;
      termHost.hidden = true;
      replace(termNote);
      return;
    }
    termHost.hidden = false;
    replace(termNote, note('info', 'Connecting…'));
    terminal = await openTerminal(termHost, api, id, (message, kind) => replace(termNote, message ? note(kind || 'info', message) : ''));
    if (!terminal) termHost.hidden = true;
  }

  const reload = reloader(area, `Sandbox ${id}`, async () => {
    try {
      const s = await api.get(path('sandboxes', id));
      loadCommands();
      return s;
    } catch (e) {
      if (e instanceof ApiError && e.status === 404 && !e.unavailable) {
        gone = true;
        return {gone: true};
      }
      throw e;
    }
  }, s => {
    if (s.gone) return note('info', `Sandbox ${id} is gone (killed or timed out).`);
    const meta = Object.entries(s.metadata || {});
    return [
      fields([
        ['Id', h('span', {class: 'mono'}, s.id)],
        ['State', badge(s.state)],
        ['Template', [s.templateAlias || s.template, s.templateAlias && s.template ? h('span', {class: 'muted'}, ` (${s.template})`) : '']],
        ['Snapshot', s.snapshotId || undefined],
        ['Cluster', s.cluster],
        ['Team', s.team],
        ['Started', time(s.startedAt)],
        ['Ends', time(s.endAt)],
        ['CPUs', s.cpuCount],
        ['Memory', s.memoryMb === undefined ? undefined : `${s.memoryMb} MB`],
        ['Disk', s.diskSizeMb === undefined ? undefined : `${s.diskSizeMb} MB`],
      ]),
      h('h2', {}, 'Metadata'),
      meta.length ? table([{title: 'Key', cell: r => r[0]}, {title: 'Value', cell: r => r[1]}], meta) : h('p', {class: 'muted'}, 'None.'),
    ];
  });

  const loadCommands = reloader(commands, 'Running commands', () => api.list(path('sandboxes', id, 'commands')), ({items}) => table([
    {title: 'PID', cell: c => c.pid, class: 'num'},
    {title: 'Command', cell: c => h('code', {}, c.cmd ?? '')},
    {title: 'Tag', cell: c => c.tag ?? ''},
  ], items, 'No commands running.'));

  reload();
  return {
    title: `Sandbox ${id}`,
    el: frame(h('span', {}, 'Sandbox ', h('span', {class: 'mono'}, id)), actions, status, area,
      h('h2', {}, 'Running commands'), commands, h('h2', {}, 'Terminal'), termNote, termHost),
    update(topic, data) {
      if (gone) return;
      if (topic === 'tick' || topic === 'reconnected' || (topic === 'sandbox' && (!data?.sandbox || data.sandbox.id === id))) reload();
    },
    dispose() {
      terminal?.dispose();
    },
  };
}
