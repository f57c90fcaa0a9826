// Playing the engine (対局): the play panel, the clocks and the game's moves
// on the board. The game runs on usid (play_* messages over /v1/ws): the
// server keeps both clocks and judges the end; the page shows its state,
// counting the running clock down between events, and sends the player's
// moves. The game's id stays in sessionStorage, so a reload or a dropped
// connection resumes it (the server keeps it for a grace period).

import { t } from './i18n.js';
import { $, escapeHtml, loadSetting, saveSetting, twoStep } from './dom.js';
import { errorText } from './errwords.js';
import { GamesInProgress, playKey } from './playgames.js';

// The game's id, per game's page (shogi's under the old name: playKey).
let KEY = playKey('');

// gameStart is a play event's start position: its "fen" in chess, its
// "sfen" in every other game (othello's token too: the event names the
// start by its format, not by the game).
function gameStart(s, mod) {
  return s[mod.field] ?? s.sfen;
}

// Handicaps as usid names them (KIF's names), with the editor's words.
export const HANDICAPS = [
  ['香落ち', 'editor.start.lance'], ['角落ち', 'editor.start.bishop'], ['飛車落ち', 'editor.start.rook'],
  ['飛香落ち', 'editor.start.rooklance'], ['二枚落ち', 'editor.start.two'], ['四枚落ち', 'editor.start.four'],
  ['六枚落ち', 'editor.start.six'],
];

function remember(id) {
  try { if (id) sessionStorage.setItem(KEY, id); else sessionStorage.removeItem(KEY); } catch { /* private mode */ }
}
function remembered() {
  try { return sessionStorage.getItem(KEY); } catch { return null; }
}

// plyTimes is the server's account of move i as a record writes it: the
// time charged to its side's clock (KIF's time, PGN's %emt) and, in PGN,
// that clock after it (%clk). The position's own moves have none.
function plyTimes(s, i, mod) {
  if (i < s.pre) return {};
  const clock = mod.recordFormat === 'pgn' ? s.clocks_ms?.[i] : undefined;
  return { time_ms: s.times_ms[i], ...(clock !== undefined ? { clock_ms: clock } : {}) };
}

// stampTimes writes the server's account on the game's moves shown (the
// line from the start), so that a record downloaded during the game has
// the same times as the clocks, not none.
function stampTimes(line, s, mod) {
  line.forEach((n, i) => {
    if (i >= s.moves.length || n.move !== s.moves[i]) return;
    const t = plyTimes(s, i, mod);
    if (t.time_ms !== undefined) n.timeMs = t.time_ms;
    if (t.clock_ms !== undefined) n.clockMs = t.clock_ms;
  });
}

// clockText shows a side's time: m:ss (tenths under ten seconds), or the
// byoyomi counting down once the main time is spent.
export function clockText(main, byo, hasByoyomi) {
  if (main <= 0 && hasByoyomi) return t('play.byoyomi', { s: (Math.max(0, byo) / 1000).toFixed(1) });
  const ms = Math.max(0, main);
  if (ms < 10000) return (ms / 1000).toFixed(1);
  // The seconds begun, as a record counts the time used in whole seconds
  // (the rest of a second uncounted): the two add up to the main time.
  const s = Math.ceil(ms / 1000);
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
}

// SETTINGS are the play form's fields kept in localStorage.
const SETTINGS = ['play-side', 'play-start', 'play-level', 'play-mode', 'play-ponder', 'play-name',
  'play-main-you', 'play-extra-you', 'play-main-engine', 'play-extra-engine'];

export class PlayPanel {
  // deps: sock, game, engine() (the chosen engine's /v1/engines entry),
  // onStart() (stop the analysis), flip(side), refresh() (redraw the board),
  // hold() (the board takes no move until the next refresh), loaded() (a
  // promise of the page's first position: a game is shown after it).
  constructor(root, deps) {
    Object.assign(this, deps);
    this.mod = this.game.mod;
    KEY = playKey(this.mod.scope);
    this.root = root;
    this.state = null; // the last play event's "play"
    this.at = 0; // performance.now() when it came
    this.seq = 0;
    this.reqs = 0;
    this.sub = null; // id of the request the game's events carry
    this.chain = Promise.resolve();
    this.timer = 0;
    const start = $('#play-start', root);
    for (const [name, key] of this.mod.handicaps ? HANDICAPS : []) {
      const o = document.createElement('option');
      o.value = name;
      o.dataset.i18n = key;
      o.textContent = t(key);
      start.append(o);
    }
    this.restoreSettings();
    $('#play-begin', root).addEventListener('click', () => this.begin());
    // Resigning asks first (a second click within a few seconds).
    this.unaskResign = twoStep($('#play-resign', root), () => this.send({ type: 'play_resign' }));
    this.games = new GamesInProgress($('#play-games', root), {
      sock: this.sock, mod: this.mod, current: () => this.state?.game || remembered() || '',
      busy: () => this.active || this.status === 'starting', resume: (id) => this.resume(id),
    });
    $('#play-declare', root).addEventListener('click', () => this.send({ type: 'play_declare' }));
    $('#play-analyse', root).addEventListener('click', () => document.querySelector('#analyse-game')?.click());
    $('#play-mode', root).addEventListener('change', () => this.renderForm());
    $('#play-start', root).addEventListener('change', () => this.renderForm());
    this.game.addEventListener('change', (e) => { if (e.detail.what === 'load') this.renderForm(); });
    this.sock.addEventListener('message', (e) => this.onMessage(e.detail));
    this.sock.addEventListener('open', () => {
      const id = this.state?.game || remembered();
      if (id) this.resume(id);
    });
    this.renderForm();
    this.render();
  }

  get active() { return this.state?.status === 'playing'; }

  // The form's choices outlive a reload (per game's page: settingScope);
  // the level, whose choices follow the engine, in followEngine.
  restoreSettings() {
    const saved = loadSetting('play', {});
    for (const id of SETTINGS) {
      const el = $(`#${id}`, this.root);
      if (!el) continue;
      const v = saved[id];
      if (v !== undefined && el.type === 'checkbox') el.checked = !!v;
      else if (v !== undefined && (el.tagName !== 'SELECT' || [...el.options].some((o) => o.value === v))) el.value = v;
      for (const ev of ['input', 'change']) el.addEventListener(ev, () => this.saveSettings());
    }
  }

  saveSettings() {
    const out = {};
    for (const id of SETTINGS) {
      const el = $(`#${id}`, this.root);
      if (el) out[id] = el.type === 'checkbox' ? el.checked : el.value;
    }
    saveSetting('play', out);
  }

  // humanToMove reports whether the board takes the player's move now.
  humanToMove() {
    const s = this.state;
    if (!this.active) return false;
    return s.clock.running === s.human && this.game.cursor === this.game.length && this.game.length === s.moves.length;
  }

  // followEngine fills the level choices from the engine's levels (GET
  // /v1/engines: by Elo, or over its skill option's range, strongest
  // first), else its skill option where it has one a client may set; a
  // time per move is offered too.
  followEngine() {
    const e = this.engine();
    const sel = $('#play-level', this.root);
    const was = sel.value || loadSetting('play', {})['play-level'];
    sel.innerHTML = '';
    const add = (value, text) => {
      const o = document.createElement('option');
      o.value = value;
      o.textContent = text;
      sel.append(o);
    };
    add('', t('play.level.full'));
    const levels = (e?.levels || []).filter((l) => l.id !== 'full');
    const allowed = e?.client_options || {};
    const opt = (e?.options || []).find((o) => o.type === 'spin' && /skill|level|strength/i.test(o.name) && allowed[o.name]);
    if (levels.length) {
      for (const l of [...levels].reverse()) {
        const text = l.beginner ? t('play.level.beginner', { n: l.beginner })
          : l.elo ? t('play.level.elo', { elo: l.elo }) : t('play.level.skill', { v: Object.values(l.options)[0] });
        add(`lvl:${l.id}`, text);
      }
      sel.dataset.kind = 'level';
    } else if (opt) {
      const rule = allowed[opt.name];
      const lo = rule.min ?? opt.min ?? 0;
      const hi = rule.max ?? opt.max ?? 20;
      const steps = 6;
      const vals = [...new Set(Array.from({ length: steps }, (_, i) => Math.round(lo + ((hi - lo) * i) / (steps - 1))))];
      for (const v of vals.reverse()) add(`opt:${opt.name}:${v}`, t('play.level.skill', { v }));
      sel.dataset.kind = 'option';
    } else {
      sel.dataset.kind = 'time';
    }
    for (const ms of [100, 500, 1000, 3000]) add(`ms:${ms}`, t('play.level.ms', { s: ms / 1000 }));
    if ([...sel.options].some((o) => o.value === was)) sel.value = was;
    const ponder = $('#play-ponder', this.root);
    ponder.disabled = !e?.profile?.ponder_option;
    if (ponder.disabled) ponder.checked = false;
    else if (loadSetting('play', {})['play-ponder'] !== undefined) ponder.checked = !!loadSetting('play', {})['play-ponder'];
    // Chess and othello: no game without an engine of the game here.
    $('#play-begin', this.root).disabled = this.mod.engineRequired && !e;
  }

  renderForm() {
    const mode = $('#play-mode', this.root).value;
    for (const el of this.root.querySelectorAll('.play-extra')) el.hidden = mode === 'sudden';
    for (const el of this.root.querySelectorAll('[data-extra-label]')) {
      el.textContent = t(mode === 'fischer' ? 'play.inc' : 'play.byoyomi.label');
    }
    if (!this.mod.handicaps) return; // the page names the sides
    // In a handicap game the sides are 下手 (sente) and 上手 (gote).
    const start = $('#play-start', this.root).value;
    const hc = start === 'board' ? this.mod.isHandicap(this.game.root) : start !== 'even';
    const keys = hc ? { b: 'play.side.b.handicap', w: 'play.side.w.handicap' } : { b: 'play.side.b', w: 'play.side.w' };
    for (const o of $('#play-side', this.root).options) {
      o.dataset.i18n = keys[o.value];
      o.textContent = t(o.dataset.i18n);
    }
  }

  settings() {
    const num = (sel) => Math.round(Math.max(0, Number($(sel, this.root).value) || 0) * 1000);
    const mode = $('#play-mode', this.root).value;
    const tc = (main, extra) => {
      const c = { main_ms: main };
      if (mode === 'byoyomi') c.byoyomi_ms = extra;
      if (mode === 'fischer') c.inc_ms = extra;
      return c;
    };
    const side = $('#play-side', this.root).value;
    const you = tc(num('#play-main-you'), num('#play-extra-you'));
    const eng = tc(num('#play-main-engine'), num('#play-extra-engine'));
    const play = { side, clock: side === 'b' ? { b: you, w: eng } : { b: eng, w: you }, ponder: $('#play-ponder', this.root).checked };
    const level = $('#play-level', this.root).value;
    if (level.startsWith('lvl:')) {
      play.level = { id: level.slice(4) };
    } else if (level.startsWith('opt:')) {
      const [, name, value] = level.split(':');
      play.level = { option: name, value };
    } else if (level.startsWith('ms:')) {
      play.level = { movetime_ms: Number(level.slice(3)) };
    }
    const start = $('#play-start', this.root).value;
    const msg = { type: 'play_start', engine: this.engine()?.name || '', play };
    const field = this.mod.field;
    if (start === 'board') msg.position = { [field]: this.game.root, moves: this.game.moves.slice(0, this.game.cursor) };
    else if (start !== 'even') play.handicap = start;
    else if (this.mod.field !== 'sfen') msg.position = { [field]: 'startpos', moves: [] }; // the position says the game (shogi without one)
    return msg;
  }

  begin() {
    this.onStart();
    this.error('');
    const msg = this.settings();
    this.sub = `play-${++this.reqs}`;
    this.state = null;
    this.status = 'starting';
    // The record's start time (開始日時), kept with the game's id for a reload.
    try { sessionStorage.setItem(`${KEY}.started`, String(Date.now())); } catch { /* private mode */ }
    this.render();
    this.sock.send({ ...msg, id: this.sub });
    this.games.render(); // no resume while this tab starts a game
    this.reveal = true; // again at the game's first event, its clocks shown
    this.revealBoard();
  }

  // revealBoard scrolls the board, its clocks and (on a phone, below the
  // board) the resign button into view: the start button is below the
  // fold, and the player's clock runs from the game's first event.
  revealBoard() {
    const wrap = document.querySelector('.board-wrap');
    if (wrap) wrap.scrollIntoView({ block: 'start', behavior: 'instant' });
  }

  resume(id) {
    this.sub = `play-${++this.reqs}`;
    this.sock.send({ type: 'play_resume', id: this.sub, game: id });
  }

  send(msg) {
    if (!this.state) return;
    this.sock.send({ ...msg, id: `pm-${++this.reqs}`, game: this.state.game });
  }

  // move is the player's move on the board: shown at once, sent to usid.
  move(usi) {
    if (!this.humanToMove()) { this.refresh(); return; }
    this.game.play(usi);
    this.send({ type: 'play_move', move: usi });
  }

  onMessage(m) {
    if (m.type === 'error' && m.id && (m.id === this.sub || m.id.startsWith('pm-'))) {
      if (m.id === this.sub && !this.active) {
        // A resume of a game the server no longer has, or a refused start.
        if (m.code === 'not_found') remember(null);
        this.status = 'idle';
        this.state = null;
      }
      // The bound on a player's games: say it in the page's words and
      // show the games that hold the slots (closed tabs' too).
      const slots = m.code === 'too_many_requests' && /this client has (\d+) games/.exec(m.message || '');
      this.error(slots ? t('play.toomany', { n: slots[1] }) : errorText(m), m.code);
      if (slots) this.games.refresh();
      if (this.state) this.sync(this.state, true);
      this.render();
      return;
    }
    if (m.type !== 'play' || !m.play) return;
    if (m.id !== this.sub && !m.id?.startsWith('pm-')) return;
    const first = !this.state || this.state.game !== m.play.game;
    this.state = m.play;
    this.at = performance.now();
    this.seq++;
    this.status = m.play.status;
    remember(m.play.status === 'playing' ? m.play.game : null);
    if (first) this.flip(m.play.human);
    this.sync(m.play, first);
    this.render();
    if (first) this.games.render(); // not this tab's game
    if (first && this.reveal) requestAnimationFrame(() => this.revealBoard());
    this.reveal = false;
    if (m.play.status === 'ended') this.games.refresh();
  }

  // sync shows the game's moves on the board: the new ones played on, or
  // the whole game loaded when the board shows something else.
  sync(s, whole) {
    // Until the board shows the game's position, it takes no move: a load
    // waits for usid, and a piece picked on the old position would be
    // dropped when the new one is shown (the second click then lost).
    const start = gameStart(s, this.mod);
    const root = start === 'startpos' || start === this.mod.startText ? 'startpos' : start;
    const same = (g) => g.root === root && g.cursor === g.length && g.length === s.moves.length &&
      g.moves.every((mv, i) => mv === s.moves[i]);
    const held = whole || !same(this.game);
    if (held) this.hold();
    this.chain = this.chain.then(() => this.loaded?.()).catch(() => {}).then(async () => {
      const g = this.game;
      const line = g.moves || [];
      const prefix = g.root === root && line.length <= s.moves.length && line.every((mv, i) => mv === s.moves[i]);
      if (whole || !prefix) await g.load(root, s.moves.slice(0, s.pre));
      if (g.cursor !== g.length) g.goto(g.length);
      const rest = s.moves.slice(g.length);
      if (rest.length) g.playLine(rest);
      stampTimes(g.line, s, this.mod);
      if (s.status === 'ended') this.toRecord(s);
      else if (held) this.refresh(); // the legal moves of the position now shown
    }).catch((e) => this.error(e.message || String(e)));
  }

  // toRecord makes the finished game the page's record: moves with the
  // server's times, the players, the result (exported with the KIF, shown
  // in the move list), ready for a game analysis.
  toRecord(s) {
    // The player's name as given in the form, else "Player" (ShogiHome's
    // 人 likewise names the human, not "you").
    const you = $('#play-name', this.root)?.value.trim() || t('play.player');
    const eng = s.engine;
    const black = s.human === 'b' ? you : eng;
    const white = s.human === 'w' ? you : eng;
    const mod = this.mod;
    const start = gameStart(s, mod);
    // The record's header lines, as the export writes them (下手 and 上手
    // in a handicap game; PGN's tags in chess).
    const keys = mod.recordSides(start);
    const fields = keys ? [{ key: keys[0], value: black }, { key: keys[1], value: white }] : [];
    let started = null;
    try { started = Number(sessionStorage.getItem(`${KEY}.started`)) || null; } catch { /* private mode */ }
    if (started && mod.recordDate) fields.unshift(mod.recordDate(new Date(started)));
    const notes = mod.notation ? s[`moves_${mod.notation}`] || [] : [];
    this.game.loadRecord({
      format: 'usi',
      position: { [mod.field]: start === 'startpos' ? mod.startText : start },
      plies: s.moves.map((move, i) => ({ move, [mod.plyField || 'note']: notes[i], ...plyTimes(s, i, mod) })),
      header: { black, white, handicap: s.handicap || undefined, fields },
      end: s.result?.end || '',
      comment: s.result?.comment || '', // e.g. a resignation on the engine's turn
    });
    this.game.goto(this.game.length);
  }

  error(text, code = '') {
    const box = $('#play-error', this.root);
    box.hidden = !text;
    box.textContent = text ? `${t('play.error')}: ${text}` : '';
    box.dataset.code = code;
  }

  render() {
    const s = this.state;
    const r = this.root;
    r.dataset.status = this.status || 'idle';
    r.dataset.seq = String(this.seq);
    r.dataset.game = s?.game || '';
    const playing = this.active;
    $('#play-form', r).hidden = playing || this.status === 'starting';
    // A finished game's result, clocks and "analyse" come before the form
    // of the next game.
    const form = $('#play-form', r);
    const live = $('#play-live', r);
    if (s?.status === 'ended' ? live.nextElementSibling !== form : form.nextElementSibling !== live) {
      if (s?.status === 'ended') form.before(live); else form.after(live);
    }
    $('#play-live', r).hidden = !s;
    $('#play-resign', r).hidden = !playing;
    if (!playing) this.unaskResign();
    $('#play-declare', r).hidden = !playing || !this.mod.declare;
    $('#play-analyse', r).hidden = !(s && s.status === 'ended');
    const analyze = document.querySelector('#analyze');
    if (analyze) analyze.disabled = playing;
    const status = $('#play-status', r);
    const result = $('#play-result', r);
    result.hidden = !(s && s.result);
    if (s?.result) {
      const res = s.result;
      const outcome = !res.winner ? (res.reason === 'aborted' ? 'play.aborted' : 'play.drawn') : res.winner === s.human ? 'play.won' : 'play.lost';
      result.dataset.reason = res.reason;
      result.dataset.winner = res.winner;
      result.textContent = `${t(outcome)} — ${t(`play.reason.${res.reason}`)}`;
    }
    if (this.status === 'starting') status.textContent = t('play.status.starting');
    else if (playing) status.textContent = t(s.clock.running === s.human ? 'play.status.yourturn' : 'play.status.engineturn');
    else status.textContent = '';
    clearInterval(this.timer);
    if (playing) this.timer = setInterval(() => this.renderClocks(), 100);
    this.renderClocks();
  }

  // renderClocks shows the clocks: the server's values, the running side's
  // counted down from the moment its event came.
  renderClocks() {
    const s = this.state;
    for (const side of ['b', 'w']) {
      const el = $(`#clock-${side}`); // beside the board, not in the panel
      if (!s) { el.hidden = true; continue; }
      el.hidden = false;
      const c = s.clock[side];
      const tc = s.time_control[side];
      let main = c.main_ms;
      let byo = c.byoyomi_ms;
      const running = s.clock.running === side;
      if (running) {
        let spent = performance.now() - this.at;
        const fromMain = Math.min(spent, main);
        main -= fromMain;
        spent -= fromMain;
        if (!tc.inc_ms) byo = Math.max(0, byo - spent);
      }
      el.dataset.mainMs = String(c.main_ms);
      el.dataset.byoyomiMs = String(c.byoyomi_ms);
      el.dataset.running = String(running);
      el.dataset.shownMs = String(Math.round(main + (tc.byoyomi_ms ? byo : 0)));
      el.classList.toggle('running', running);
      el.classList.toggle('you', side === s.human);
      const who = side === s.human ? t('play.you') : escapeHtml(s.engine);
      const named = this.mod.clockNames ? `${escapeHtml(t(this.mod.sideKeys(false, true)[side]))} · ` : '';
      el.innerHTML = `<span class="who">${this.mod.mark[side] || ''} ${named}${who}</span><span class="time" data-testid="clock-${side}-time">${escapeHtml(clockText(main, byo, !!tc.byoyomi_ms))}</span>`;
    }
  }
}
