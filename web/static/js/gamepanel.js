// The analysis board's game features: loading a record (paste, file picker,
// file drop; usid reads it with POST /v1/records/parse), the record's
// header and comments, whole-game analysis with its progress, judgements
// and best alternatives, and the download of the game as KIF
// (POST /v1/records/export, evaluations written as ShogiHome reads them),
// or PGN for chess; othello's move transcript is read and written here.
// The game module (games/*.js) names the position field, the notation, the
// sides and the record format.

import * as api from './api.js';
import { serverLimits, fitSelect } from './limits.js';
import { GameJob, summarize, isTerminal } from './gameanalysis.js';
import { povSide } from './games/index.js';
import { t } from './i18n.js';
import { $, showErrors, toast, escapeHtml, loadSetting, saveSetting } from './dom.js';

// Per-position limits offered for a game analysis. The first, a time per
// position, is the one the verdicts were measured at (BENCHMARKS.md) and
// means the same on every engine.
const LIMITS = {
  t1000: { movetime_ms: 1000 }, d8: { depth: 8 }, d12: { depth: 12 }, d16: { depth: 16 }, t500: { movetime_ms: 500 }, t2000: { movetime_ms: 2000 },
};


// leftText says a time left: "about 40 s left", "about 3 min 10 s left"
// (to 10 s past a minute: it is an estimate).
export function leftText(ms) {
  const sec = Math.max(1, Math.round(ms / 1000));
  if (sec < 60) return t('game.left.s', { s: sec });
  const r = Math.round(sec / 10) * 10;
  return t('game.left.m', { m: Math.floor(r / 60), s: r % 60 });
}

// The job this tab started last, with its game: {id, root, moves, turn0}.
// Each game's page keeps its own (shogi's under the old name).
let jobKey = 'usid.gamejob';
function saveJob(j) {
  try { sessionStorage.setItem(jobKey, JSON.stringify(j)); } catch { /* private mode */ }
}

function savedJob() {
  try {
    const j = JSON.parse(sessionStorage.getItem(jobKey));
    if (typeof j?.id === 'string' && typeof j.root === 'string' && Array.isArray(j.moves)) return j;
  } catch { /* none, or private mode */ }
  return null;
}

function forgetJob() {
  try { sessionStorage.removeItem(jobKey); } catch { /* private mode */ }
}

export class GamePanel {
  // game: the Game; engine(): the chosen engine's name; liveEval(key): the
  // page's own evaluation of a position, if any; onChange(): results or
  // the record changed (redraw list and graph); errorBox: where loading
  // errors show.
  constructor({ game, mod = game.mod, engine, liveEval, onChange, errorBox }) {
    Object.assign(this, { game, mod, engine, liveEval, onChange, errorBox });
    if (mod.scope) jobKey = `usid.gamejob.${mod.scope}`;
    this.results = new Map(); // position key -> normalized job position (+ bestKif)
    this.job = null;
    this.state = null; // last job state shown
    this.setupLoading();
    this.setupAnalysis();
    $('#download-kif').addEventListener('click', () => this.download());
    // Another game loaded (a record, the start position, a link): the
    // analysis of the old one no longer applies.
    game.addEventListener('change', (e) => {
      if (e.detail.what === 'cursor' || e.detail.what === 'kif') return;
      // The page reloaded during an analysis of this game: follow it again.
      if (e.detail.what === 'load' && !this.job && this.resumeSaved()) return;
      const moves = game.mainLine().map((n) => n.move);
      if (e.detail.what !== 'load' || !this.jobLine ||
        (game.root === this.jobLine.root && moves.join(' ') === this.jobLine.moves.join(' '))) {
        this.renderJob(); // the button knows whether there is a game to analyse
        return;
      }
      if (this.running) this.job.cancel();
      forgetJob();
      this.job = null;
      this.jobLine = null;
      this.state = null;
      this.results.clear();
      showErrors($('#game-error'), []);
      this.renderJob();
    });
  }

  // --- loading records ----------------------------------------------------

  setupLoading() {
    $('#load-form').addEventListener('submit', (e) => {
      e.preventDefault();
      const text = $('#position-input').value;
      if (!text.trim()) {
        showErrors(this.errorBox, [{ code: 'record_format', message: t('load.empty') }], { title: t('load.nothing') });
        return;
      }
      this.load({ text }, 'pasted');
    });
    const file = $('#record-file');
    $('#open-file').addEventListener('click', () => file.click());
    file.addEventListener('change', () => {
      if (file.files && file.files[0]) this.loadFile(file.files[0]);
      file.value = ''; // the same file again is a new choice
    });
    // A file dropped anywhere on the page is loaded. Pieces are dragged
    // with pointer events, not HTML drag and drop, so the two never mix.
    let depth = 0;
    const hasFiles = (e) => [...(e.dataTransfer?.types || [])].includes('Files');
    document.addEventListener('dragenter', (e) => {
      if (!hasFiles(e)) return;
      depth++;
      document.body.classList.add('dropping');
    });
    document.addEventListener('dragleave', (e) => {
      if (!hasFiles(e)) return;
      if (--depth <= 0) { depth = 0; document.body.classList.remove('dropping'); }
    });
    document.addEventListener('dragover', (e) => {
      if (!hasFiles(e)) return;
      e.preventDefault();
      e.dataTransfer.dropEffect = 'copy';
    });
    document.addEventListener('drop', (e) => {
      if (!hasFiles(e)) return;
      e.preventDefault();
      depth = 0;
      document.body.classList.remove('dropping');
      const f = e.dataTransfer.files[0];
      if (f) this.loadFile(f);
    });
  }

  async loadFile(f) {
    if (f.size > 4 << 20) {
      showErrors(this.errorBox, [{ code: 'record_too_long', message: t('load.toobig', { name: f.name, kb: Math.round(f.size / 1024) }) }], { title: t('load.cannotfile') });
      return;
    }
    // The bytes, not text: a Shift_JIS .kif is decoded by usid.
    this.load({ bytes: await f.arrayBuffer() }, f.name);
  }

  // load reads a record with usid and shows it; errors name the line.
  async load(source, what) {
    let rec;
    try {
      rec = await this.readLocal(source) || await api.parseRecord(source);
    } catch (e) {
      const title = e.status === 422 ? (what === 'pasted' ? t('load.cannotrecord') : t('load.cannotname', { name: what })) : t('err.unreachable');
      showErrors(this.errorBox, [{ code: e.code, message: e.message, line: e.line }], { title });
      if (e.status === 422 && Number.isInteger(e.line) && e.line > 1) this.offerBefore(source, e.line);
      return false;
    }
    showErrors(this.errorBox, []);
    // The game shown has variations the new one would drop: ask first.
    const vars = this.variationCount();
    if (vars > 0 && !confirm(t('load.dropvariations', { n: vars }))) return false;
    // The tab keeps the record (header, comments, variations) so that a
    // reload shows it again; the URL keeps only the moves.
    try { sessionStorage.setItem('usid.record', JSON.stringify(rec)); } catch { /* too big or private mode */ }
    this.game.loadRecord(rec); // the 'load' change clears an analysis of another game
    this.renderJob();
    const n = rec.plies.length;
    // A record's format by name (KIF, PGN); othello's transcript and a
    // position text in words.
    const format = rec.format === 'transcript' ? t('othello.transcript') : rec.format === 'position' ? t('load.position') : rec.format.toUpperCase();
    toast(t(n === 1 ? 'load.loaded1' : 'load.loaded', { format, n }));
    return true;
  }

  // variationCount counts the shown game's variations (nodes other than a
  // first child), which loading another game drops.
  variationCount() {
    let n = 0;
    const walk = (node) => node.children.forEach((c, i) => { if (i > 0) n++; walk(c); });
    walk(this.game.tree);
    return n;
  }

  // readLocal reads what usid's records/parse does not for this game: a
  // position text (a FEN, an othello token, with moves) or an othello
  // transcript, checked by /v1/validate; null: for usid to read.
  async readLocal(source) {
    const mod = this.mod;
    if (!mod.looksLikePosition) return null; // usid reads all of this game's texts
    let text = source.text;
    if (text === undefined && source.bytes) text = new TextDecoder().decode(source.bytes);
    if (!text) return null;
    let root = 'startpos';
    let moves;
    if (mod.looksLikePosition(text)) {
      try { ({ root, moves } = mod.parseText(text)); } catch (e) { throw new api.ApiError(422, { code: 'position_syntax', detail: e.message }); }
    } else if (mod.readTranscript) {
      try { moves = mod.readTranscript(text); } catch (e) { throw new api.ApiError(422, { code: 'record_format', detail: e.message }); }
      if (!moves) return null;
    } else {
      return null;
    }
    const v = await api.validate({ [mod.field]: root, moves }, mod.notation);
    if (!v.valid) {
      const err = v.errors?.[0] || { code: 'invalid_position', message: '' };
      throw new api.ApiError(422, { code: err.code, detail: err.message, move_index: err.move_index });
    }
    const start = root === 'startpos' ? mod.startText : root;
    const notes = mod.notationField ? v[mod.notationField] || [] : [];
    return {
      format: mod.readTranscript && !mod.looksLikePosition(text) ? mod.recordFormat : 'position',
      position: { [mod.field]: start, moves },
      header: { fields: [] },
      plies: moves.map((move, i) => ({ move, [mod.plyField || 'note']: notes[i] || '' })),
      ...(mod.recordEnd?.(v) ? { end: mod.recordEnd(v) } : {}), // a finished othello game's score, as /v1/records/parse gives it
    };
  }

  // offerBefore reads the record up to the line before the error and, if
  // that holds moves, offers to load them.
  async offerBefore(source, line) {
    let text = source.text;
    if (text === undefined && source.bytes) {
      const b = new Uint8Array(source.bytes);
      // UTF-8 if it decodes as such, else Shift_JIS (as KIF files often are).
      try { text = new TextDecoder('utf-8', { fatal: true }).decode(b); } catch { text = new TextDecoder('shift_jis').decode(b); }
    }
    if (!text) return;
    const head = text.split(/\r?\n/).slice(0, line - 1).join('\n') + '\n';
    let rec;
    try { rec = await api.parseRecord({ text: head }); } catch { return; }
    if (!rec.plies.length) return;
    const btn = document.createElement('button');
    btn.type = 'button';
    btn.className = 'small';
    btn.dataset.testid = 'load-partial';
    btn.textContent = t('load.partial', { n: rec.plies.length, line });
    btn.addEventListener('click', () => {
      showErrors(this.errorBox, []);
      try { sessionStorage.setItem('usid.record', JSON.stringify(rec)); } catch { /* private mode */ }
      this.game.loadRecord(rec);
      this.renderJob();
    });
    this.errorBox.append(btn);
  }

  // renderHeader shows who played, and the comment of the shown move.
  renderHeader() {
    const r = this.game.record;
    const box = $('#record-info');
    if (!r) { box.hidden = true; box.innerHTML = ''; } else {
      const h = r.header || {};
      const parts = [];
      const MARK = this.mod.mark;
      // Shogi's sente and chess's White first: the side that moves first.
      const [first, second] = this.mod.firstSide === 'w' ? ['w', 'b'] : ['b', 'w'];
      const name = { b: h.black, w: h.white };
      if (h.black || h.white) parts.push(`${MARK[first]}${escapeHtml(name[first] || '?')} — ${MARK[second]}${escapeHtml(name[second] || '?')}`);
      for (const v of [h.event, h.date, h.handicap && h.handicap !== '平手' ? h.handicap : '']) if (v) parts.push(escapeHtml(v));
      box.hidden = parts.length === 0;
      box.innerHTML = parts.join(' · ');
    }
    const n = this.game.node;
    const comment = this.game.cursor === 0 ? (r ? r.comment : '') : n.comment;
    const c = $('#move-comment');
    // A game whose move list shows the comments beside their moves does not repeat them here.
    c.hidden = !comment || !!this.mod.commentsInList;
    c.textContent = comment || '';
  }

  // --- game analysis ------------------------------------------------------

  setupAnalysis() {
    const sel = $('#game-limit');
    sel.value = loadSetting('gameLimit', 't1000');
    if (!LIMITS[sel.value]) sel.value = 't1000';
    sel.addEventListener('change', () => saveSetting('gameLimit', sel.value));
    // Only the limits usid accepts (caps.max_depth, caps.max_movetime_ms).
    serverLimits().then((l) => {
      const caps = l && l.caps;
      if (caps && caps.max_depth > 0 && caps.max_movetime_ms > 0) {
        const fits = (o) => (LIMITS[o.value].depth ?? 0) <= caps.max_depth && (LIMITS[o.value].movetime_ms ?? 0) <= caps.max_movetime_ms;
        fitSelect(sel, fits, () => {
          LIMITS.cap = { depth: caps.max_depth };
          return { value: 'cap', text: t('game.depth', { d: caps.max_depth }) };
        });
      }
      sel.dataset.limits = caps ? 'server' : 'builtin';
    });
    $('#analyse-game').addEventListener('click', () => {
      if (this.running) this.cancel();
      else this.start();
    });
  }

  get running() { return !!this.job && !this.job.stopped && !(this.job.job && isTerminal(this.job.job.status)); }

  // start analyses the main line: the game, whatever line is shown.
  start() {
    const main = this.game.mainLine();
    if (!main.length) { toast(t('game.nomoves')); return; }
    this.results.clear();
    const root = this.game.root;
    const moves = main.map((n) => n.move);
    // The side to move at the start, as the page keeps scores' sides.
    const turn0 = povSide(this.mod, this.game.positions[0].turn);
    const job = this.follow(root, moves);
    // The tab remembers the job, so that a reload follows it again.
    job.addEventListener('started', (e) => saveJob({ id: e.detail, root, moves, turn0 }));
    job.start({ position: { [this.mod.field]: root, moves }, engine: this.engine(), limits: LIMITS[$('#game-limit').value], turn0 });
  }

  // follow makes the GameJob of the game (root, moves) the shown one.
  follow(root, moves) {
    const job = new GameJob(api.request);
    this.job = job;
    this.jobLine = { root, moves };
    this.state = { status: 'queued', done: 0, total: moves.length + 1 };
    showErrors($('#game-error'), []);
    job.addEventListener('update', (e) => { if (this.job === job) this.onUpdate(e.detail); });
    job.addEventListener('error', (e) => {
      if (this.job !== job) return;
      const err = e.detail;
      if (job.resumed && err.status === 404) {
        // The job followed again is gone (forgotten since): nothing to show.
        forgetJob();
        this.job = null;
        this.jobLine = null;
        this.state = null;
        this.renderJob();
        return;
      }
      this.state = { ...this.state, status: 'failed' };
      showErrors($('#game-error'), [{ code: err.code, message: err.message }], { title: t('game.failed') });
      this.renderJob();
    });
    this.renderJob();
    return job;
  }

  // resumeSaved follows the job this tab started for the game now loaded,
  // if any; it reports whether it did.
  resumeSaved() {
    const saved = savedJob();
    const moves = this.game.mainLine().map((n) => n.move);
    if (!saved || saved.root !== this.game.root || saved.moves.join(' ') !== moves.join(' ')) return false;
    this.results.clear();
    const job = this.follow(saved.root, saved.moves);
    job.resumed = true;
    job.resume(saved.id, saved.turn0);
    return true;
  }

  cancel() {
    if (!this.job) return;
    forgetJob();
    this.job.cancel();
    if (this.state && !isTerminal(this.state.status)) this.state = { ...this.state, status: 'cancelled' };
    this.renderJob();
  }

  onUpdate(j) {
    this.state = { status: j.status, done: j.done, total: j.total ?? this.jobLine.moves.length + 1, left: j.left, why: j.error?.code };
    const { root, moves } = this.jobLine;
    for (const p of j.positions) {
      if (p.ply > moves.length) continue;
      const key = `${root}|${moves.slice(0, p.ply).join(' ')}`;
      const old = this.results.get(key);
      this.results.set(key, { ...p, bestKif: old && old.bestmove === p.bestmove ? old.bestKif : '' });
      if (p.judgement && p.bestmove && p.bestmove !== p.move && !(old && old.bestKif)) this.fetchBestKif(key, root, moves.slice(0, p.ply), p.bestmove);
    }
    if (j.status === 'failed') showErrors($('#game-error'), [{ code: j.error?.code || 'failed', message: j.error?.message || t('game.couldnot') }], { title: t('game.failed') });
    this.renderJob();
    this.onChange();
  }

  // fetchBestKif asks usid for the KIF of a better move (the notation needs
  // the rules: 同, 打, 右/左...).
  async fetchBestKif(key, root, before, best) {
    try {
      const nf = this.mod.notationField;
      if (!nf) return; // the move is its own notation
      const v = await this.game.verdictOf({ [this.mod.field]: root, moves: [...before, best] });
      const r = this.results.get(key);
      if (!r || r.bestmove !== best || !v[nf]) return;
      r.bestKif = v[nf].at(-1) || '';
      this.onChange();
    } catch { /* the USI move is shown instead */ }
  }

  renderJob() {
    const s = this.state;
    const btn = $('#analyse-game');
    btn.textContent = this.running ? t('game.cancel') : t('game.start');
    btn.classList.toggle('active', this.running);
    // No game to analyse, or (chess, othello) no engine of the game here.
    btn.disabled = !this.running && (this.game.mainLine().length === 0 || (this.mod.engineRequired && !this.engine()));
    const box = $('#game-status');
    box.hidden = !s;
    if (!s) { $('#game-summary').innerHTML = ''; return; }
    box.dataset.state = s.status;
    const bar = $('#game-progress');
    bar.max = Math.max(1, s.total || 1);
    bar.value = Math.min(s.done || 0, bar.max);
    // A job usid cancelled because no page followed it (a tab asleep too
    // long) says so: it was not the user's cancel.
    const said = s.status === 'cancelled' && s.why === 'abandoned' ? 'abandoned' : s.status;
    $('#game-progress-text').textContent = `${t(`game.status.${said}`)} · ${t('game.positions', { done: s.done || 0, total: s.total || '?' })}`;
    // usid's estimate of the time left, from the first positions on.
    const eta = $('#game-eta');
    const left = isTerminal(s.status) ? null : s.left;
    eta.hidden = left === null || left === undefined;
    eta.textContent = eta.hidden ? '' : leftText(left);
    eta.dataset.ms = eta.hidden ? '' : String(left);
    this.renderSummary();
  }

  renderSummary() {
    const positions = [...this.results.values()];
    const box = $('#game-summary');
    if (!positions.length) { box.innerHTML = ''; return; }
    const sum = summarize(positions);
    const h = this.game.record?.header || {};
    const keys = this.mod.sideKeys(!!this.mod.isHandicap?.(this.game.root), true);
    const names = { b: h.black || t(keys.b), w: h.white || t(keys.w) };
    let html = '';
    // The summary's sides are the scores' (see povSide): the real side's name.
    for (const pside of ['b', 'w']) {
      const s = sum[pside];
      const side = povSide(this.mod, pside);
      html += `<div class="sum-row" data-testid="summary-${side}"><span class="sum-name">${this.mod.mark[side]}${escapeHtml(names[side])}</span>` +
        `<span class="inaccuracy" title="${escapeHtml(t('judge.inaccuracies'))}">${s.inaccuracy} ?!</span>` +
        `<span class="mistake" title="${escapeHtml(t('judge.mistakes'))}">${s.mistake} ?</span>` +
        `<span class="blunder" title="${escapeHtml(t('judge.blunders'))}">${s.blunder} ??</span>` +
        `<span class="sum-loss" title="${escapeHtml(t('game.avgloss.title'))}">${s.averageLoss === null ? '' : escapeHtml(t('game.avgloss', { n: s.averageLoss }))}</span></div>`;
    }
    box.innerHTML = html;
  }

  // --- what the list, the graph and the bar show --------------------------

  // resultAt is the game analysis of the position after the shown line's
  // first ply moves.
  resultAt(key) { return this.results.get(key) || null; }

  // annotate gives the move list a node's judgement and best alternative.
  annotate(n, before = null) {
    const r = this.results.get(this.game.keyBefore(n));
    if (!r || r.move !== n.move || !r.judgement) return null;
    let best = '';
    if (r.bestmove && r.bestmove !== n.move) {
      const k = this.mod.moveText(r.bestKif, r.bestmove, before);
      best = `${this.mod.mark[k.side] || ''}${k.text}`;
    }
    return { judgement: r.judgement, best };
  }

  // marks lists the judged moves of the shown line, for the graph.
  marks() {
    const out = [];
    for (let ply = 1; ply <= this.game.length; ply++) {
      const r = this.results.get(this.game.key(ply - 1));
      if (r && r.judgement && r.move === this.game.moves[ply - 1]) out.push({ ply, judgement: r.judgement });
    }
    return out;
  }

  // --- KIF download -------------------------------------------------------

  // exportBody is the game as POST /v1/records/export takes it: the tree
  // with comments, times and the evaluation of the position after each
  // move (the game analysis', else the page's own).
  exportBody() {
    const g = this.game;
    const evalOf = (key) => {
      const r = this.results.get(key);
      const score = r ? r.score : this.liveEval(key)?.score;
      // "Mated" (mate 0) is no evaluation a KIF comment can say.
      if (!score || score.mate === 0) return null;
      const e = score.mate !== undefined ? { mate: score.winner === 'b' ? Math.abs(score.mate) : -Math.abs(score.mate) } : { cp: score.cp };
      if (r && r.depth) e.depth = r.depth;
      else if (!r && this.liveEval(key)?.depth) e.depth = this.liveEval(key).depth;
      if (r && r.pv.length) e.pv = r.pv;
      return e;
    };
    const line = (n, before) => {
      const out = [];
      for (let p = n, moves = before; p; p = p.children[0]) {
        moves = [...moves, p.move];
        const ply = { move: p.move };
        if (p.before) ply.comment_before = p.before;
        if (p.comment) ply.comment = p.comment;
        if (p.nags.length) ply.nags = p.nags;
        if (Number.isFinite(p.timeMs)) ply.time_ms = p.timeMs;
        if (Number.isFinite(p.clockMs)) ply.clock_ms = p.clockMs;
        // The game analysis' evaluation, else the record's own, else the page's.
        const key = `${g.root}|${moves.join(' ')}`;
        const e = (this.results.get(key) || !p.eval) ? evalOf(key) : p.eval;
        if (e) ply.eval = e;
        const alts = p.parent.children[0] === p ? p.parent.children.slice(1) : [];
        if (alts.length) ply.variations = alts.map((a) => line(a, moves.slice(0, -1)));
        out.push(ply);
      }
      return out;
    };
    const body = { [this.mod.field]: g.root === 'startpos' ? this.mod.startText : g.root, plies: g.tree.children[0] ? line(g.tree.children[0], []) : [] };
    if (this.mod.recordFormat === 'pgn') body.format = 'pgn';
    const r = g.record;
    if (r) {
      body.header = { fields: r.header.fields || [] };
      if (r.comment) body.comment = r.comment;
      if (r.end) body.end = r.end;
    }
    return body;
  }

  async download() {
    let kif;
    try {
      // Othello's record is its transcript, written here; usid writes KIF and PGN.
      kif = this.mod.writeTranscript ? this.mod.writeTranscript(this.game.mainLine().map((n) => n.move)) + '\n' : await api.exportKIF(this.exportBody());
    } catch (e) {
      showErrors(this.errorBox, [{ code: e.code, message: e.message }], { title: t('moves.exportfailed') });
      return;
    }
    const h = this.game.record?.header || {};
    const stamp = new Date().toISOString().slice(0, 10).replaceAll('-', '');
    const who = [h.black, h.white].filter(Boolean).join('-vs-').replace(/[\\/:*?"<>|\s]+/g, '_');
    const a = document.createElement('a');
    a.href = URL.createObjectURL(new Blob([kif], { type: 'text/plain;charset=utf-8' }));
    a.download = `${who || 'usid-game'}-${stamp}.${this.mod.recordExt}`;
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(a.href), 10000);
    toast(t('moves.downloaded'));
  }
}
