// The second engine of the board application (ShogiHome's research mode):
// another engine's lines beside the first's, its arrows in a second colour,
// its own lines count. It searches what the first does, when the first
// does (analysis.js calls schedule and stop), on a WebSocket session of its
// own: usid holds one engine per session, so the second engine is a second
// session and a second lease of the client's quota, and its searches are
// charged to the client's engine time like the first's. A quota that holds
// no second session refuses the connection; the panel says so in the
// page's language. The evaluation bar and graph stay the first engine's.

import { UsidSocket } from './ws.js';
import { povSide } from './games/index.js';
import { mergeInfo, sortedLines, linesHtml, statsText } from './pvlines.js';
import { serverLimits, fitSelect } from './limits.js';
import { t } from './i18n.js';
import { $, showErrors, loadSetting, saveSetting, escapeHtml, engineLabel } from './dom.js';

export class SecondEngine {
  // opts: game, mod, engines() (the page's engines: /v1/engines entries of
  // its game), limits() (the first engine's live limits, or undefined),
  // running() (the first engine analyses), onArrows() (the board's arrows
  // to draw again), onStop() (a refused or removed second engine).
  constructor(opts) {
    Object.assign(this, opts);
    this.panel = $('#engine2-panel');
    this.select = $('#engine2');
    this.multipv = $('#multipv2');
    this.box = $('#pv-lines-2');
    this.errBox = $('#engine2-error');
    this.sock = null;
    this.on = false; // the shown position is to be analysed
    this.id = null;
    this.live = null; // the search usid runs for this panel, if any
    this.seq = 0;
    this.key = null;
    this.turn = 'b';
    this.state = 'idle';
    this.name = '';
    this.lines = new Map();
    this.stats = {};
    this.timer = 0;
    this.frame = 0;
    $('#engine2-add').addEventListener('click', () => this.add());
    $('#engine2-remove').addEventListener('click', () => this.remove());
    this.select.addEventListener('change', () => {
      saveSetting('engine2', this.select.value);
      this.followProfile();
      if (this.on) this.schedule(0);
    });
    this.multipv.addEventListener('change', () => {
      saveSetting('multipv2', Number(this.multipv.value));
      if (this.on) this.schedule(0);
    });
    // A press on a line's move plays the line up to it (the lines are
    // redrawn often: a click's press and release may land apart).
    this.box.addEventListener('pointerdown', (e) => {
      const mv = e.target.closest('.pv-move');
      if (!mv || e.button !== 0 || this.key !== this.game.key()) return;
      const line = this.lines.get(Number(mv.closest('.pv-line').dataset.multipv));
      if (line) this.game.playLine(line.pv.slice(0, Number(mv.dataset.index) + 1));
    });
  }

  get added() { return !!this.sock; }

  // add shows the panel and opens the second engine's session; it
  // searches at once if the first engine does.
  async add() {
    if (this.sock) return;
    this.panel.hidden = false;
    $('#engine2-add').hidden = true;
    showErrors(this.errBox, []);
    this.fillEngines();
    const max = (await serverLimits())?.caps?.max_multipv;
    if (max > 0) fitSelect(this.multipv, (o) => Number(o.value) <= max, () => ({ value: '1', text: '1' }));
    this.followProfile();
    const sock = new UsidSocket();
    this.sock = sock;
    sock.addEventListener('open', () => {
      showErrors(this.errBox, []);
      this.live = null;
      if (this.on) this.schedule(0);
    });
    sock.addEventListener('state', (e) => {
      if (e.detail.state === 'waiting') this.live = null;
      if (e.detail.state === 'waiting' && this.on) this.setState('connecting');
    });
    // The handshake was refused (its answer hidden from the page): usid is
    // up, so the client's quota of sessions is spent. The second engine
    // is not retried: the player frees a session and adds it again.
    sock.addEventListener('refused', (e) => {
      if (!e.detail || this.sock !== sock) return;
      this.drop();
      this.setState('refused');
      showErrors(this.errBox, [{ code: 'too_many_requests', message: '' }], { title: t('dual.refused', { n: e.detail.sessions }) });
    });
    sock.addEventListener('message', (e) => this.onMessage(e.detail));
    sock.connect();
    this.panel.closest('.engines')?.setAttribute('data-dual', '1');
    if (this.running()) this.start();
    else this.render();
  }

  // remove stops the second engine and closes its session.
  remove() {
    this.stop();
    this.drop();
    this.panel.hidden = true;
    $('#engine2-add').hidden = false;
    this.panel.closest('.engines')?.setAttribute('data-dual', '0');
    this.lines.clear();
    this.setState('idle');
    this.onArrows();
  }

  // drop closes the session (a refused one too) and forgets its searches.
  drop() {
    this.on = false;
    clearTimeout(this.timer);
    this.sock?.close();
    this.sock = null;
    this.live = null;
    this.id = null;
    $('#engine2-add').hidden = false;
  }

  fillEngines() {
    const list = this.engines();
    const saved = loadSetting('engine2', null);
    const first = $('#engine').value;
    this.select.innerHTML = '';
    for (const e of list) {
      const o = document.createElement('option');
      o.value = e.name;
      o.textContent = engineLabel(e);
      o.title = e.id?.name || e.name;
      this.select.append(o);
    }
    // Another engine than the first by default: the point is to compare.
    const pick = list.find((e) => e.name === saved) || list.find((e) => e.name !== first) || list[0];
    if (pick) this.select.value = pick.name;
  }

  followProfile() {
    const e = this.engines().find((x) => x.name === this.select.value);
    const multi = !e || !!e.profile?.multipv_option;
    this.multipv.disabled = !multi;
    this.multipv.dataset.profile = multi ? 'multipv' : 'none';
    this.multipv.title = multi ? '' : t('analysis.nomultipv', { engine: e?.name || '' });
    const most = Math.max(...[...this.multipv.options].map((o) => Number(o.value)));
    this.multipv.value = multi ? String(Math.min(loadSetting('multipv2', 1), most)) : '1';
  }

  // start analyses the shown position, as the first engine does.
  start() {
    if (!this.sock) return;
    this.on = true;
    showErrors(this.errBox, []);
    this.schedule(0);
  }

  // schedule asks for the shown position (after delay ms: a player
  // stepping through moves sends one request, not one per step).
  schedule(delay = 120) {
    if (!this.sock) return;
    this.on = true;
    clearTimeout(this.timer);
    this.id = null; // the previous search's events are stale from now on
    this.lines.clear();
    this.key = this.game.key();
    this.setState('starting');
    this.onArrows();
    this.timer = setTimeout(() => this.send(), delay);
  }

  async send() {
    if (!this.on || !this.sock) return;
    const key = this.game.key();
    let v;
    try { v = await this.game.verdict(); } catch { this.setState('error'); return; }
    if (!this.on || key !== this.game.key() || !this.sock) return;
    if (!v.valid) { this.stop(); return; }
    if (v.legal_moves.length === 0) { this.setState('terminal'); return; }
    const id = `b${++this.seq}`;
    Object.assign(this, { id, key, turn: povSide(this.mod, v.side_to_move || this.game.position.turn), stats: {} });
    this.lines.clear();
    const msg = { type: 'analyze', id, position: this.game.positionAt(), multipv: this.multipv.disabled ? 1 : Number(this.multipv.value) };
    if (this.mod.notation) msg.notation = this.mod.notation;
    const limits = this.limits();
    if (limits) msg.limits = limits;
    if (this.select.value) msg.engine = this.select.value;
    if (this.sock.send(msg)) this.live = id;
    else this.setState('connecting');
  }

  // stop stops the second engine's search (Stop, Space, a game started).
  stop() {
    clearTimeout(this.timer);
    if (!this.on) return;
    this.on = false;
    const live = this.live;
    if (live && this.sock?.open) {
      this.sock.send({ type: 'stop', id: live });
      if (live === this.id) { this.setState('stopping'); return; }
    }
    this.setState('stopped');
  }

  onMessage(m) {
    const terminal = m.type === 'bestmove' || m.type === 'error' || m.type === 'checkmate';
    if (terminal && m.id && m.id === this.live) this.live = null;
    if (m.type === 'error' && !m.id) { showErrors(this.errBox, [m], { title: t('err.usid') }); return; }
    const id = m.type === 'queued' && !m.id ? this.live : m.id;
    if (!id || id !== this.id) return;
    switch (m.type) {
      case 'engine':
        this.name = (m.usi_name || m.name || '').split(' (')[0]; // a build's details are too long beside the first's
        if (this.state !== 'stopping') this.setState('searching');
        break;
      case 'queued':
        if (this.state !== 'stopping') this.setState('queued');
        break;
      case 'info':
        for (const k of ['depth', 'seldepth', 'nodes', 'nps', 'time_ms', 'hashfull']) if (m[k] !== undefined) this.stats[k] = m[k];
        if (this.state === 'starting' || this.state === 'queued') this.state = 'searching';
        mergeInfo(this.lines, m, this.turn, this.state === 'stopping', this.mod);
        this.renderSoon();
        break;
      case 'bestmove':
        this.on = false;
        this.setState(this.state === 'stopping' ? 'stopped' : 'done');
        break;
      case 'error':
        this.on = false;
        this.setState('error');
        showErrors(this.errBox, [m], { title: t('err.analysis') });
        break;
    }
  }

  setState(state) {
    this.state = state;
    this.render();
  }

  renderSoon() {
    if (!this.frame) this.frame = requestAnimationFrame(() => { this.frame = 0; this.render(); });
  }

  // arrows are the second engine's lines' first moves, for the board.
  arrows() {
    if (!this.sock || this.key !== this.game.key()) return [];
    return sortedLines(this.lines).map((l, i) => ({ move: l.pv[0], rank: i, engine: 2 }));
  }

  render() {
    if (this.panel.hidden) return;
    const here = this.key === this.game.key();
    const st = !here && !this.on && ['stopped', 'done', 'terminal'].includes(this.state) ? 'idle' : this.state;
    const status = $('#engine2-status');
    status.dataset.state = st;
    $('#engine2-state').textContent = st === 'refused' ? t('dual.refusedshort') : t(`state.${st}`);
    $('#engine2-name').textContent = here ? this.name : '';
    $('#engine2-stats').textContent = here ? statsText(this.stats) : '';
    this.box.dataset.key = this.key || '';
    if (!here || this.lines.size === 0) {
      const waiting = this.on && this.state !== 'terminal';
      // The catalogue's words (the hint's <b>) are the page's own.
      this.box.innerHTML = `<p class="hint" data-testid="pv-hint-2">${waiting ? escapeHtml(t('analysis.waiting')) : t('dual.hint')}</p>`;
    } else {
      this.box.innerHTML = linesHtml(sortedLines(this.lines), this.game.position, this.mod);
    }
    this.onArrows();
  }
}
