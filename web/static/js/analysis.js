// The analysis board page (/): board, move list, position loading, and live
// engine analysis over usid's WebSocket. Game records, whole-game analysis
// and the KIF download live in gamepanel.js.

import { Board } from './board.js';
import { Editor } from './editor.js';
import { Game } from './game.js';
import { UsidSocket } from './ws.js';
import { EvalBar, EvalGraph } from './evalgraph.js';
import { MoveList } from './movelist.js';
import { GamePanel } from './gamepanel.js';
import { parsePositionText, parseSfen, toSfen, applyMove } from './sfen.js';
import { blackScore, formatScore, formatCount, formatSeconds, moveText, MARK } from './notation.js';
import * as api from './api.js';
import { serverLimits, fitSelect } from './limits.js';
import { t } from './i18n.js';
import {
  $, toast, copyText, showErrors, loadSetting, saveSetting, isTyping, escapeHtml, hashParams,
} from './dom.js';

const game = new Game();
const board = new Board($('#board'), { onMove: (usi) => game.play(usi) });
const bar = new EvalBar($('#eval-bar'));
const graph = new EvalGraph($('#eval-graph'), (ply) => game.goto(ply));
const moveList = new MoveList($('#move-list'), (id) => (id === 0 ? game.goto(0) : game.select(id)));
const sock = new UsidSocket();
const errorBox = $('#error');
const analysisError = $('#analysis-error');

// The current analysis request. Events with another id are stale and ignored.
const analysis = {
  on: false, // the user wants the shown position analysed
  id: null,
  live: null, // id of the search usid is running for this page, if any
  seq: 0,
  key: null, // game key of the analysed position
  turn: 'b', // side to move there, to turn scores to Black's view
  state: 'idle', // idle | connecting | starting | queued | searching | stopping | stopped | done | error | terminal
  queue: 0,
  engine: '',
  lines: new Map(), // multipv -> info event
  stats: {},
  bestmove: null,
};
const evals = new Map(); // game key -> {score (Black's view), depth}
const panel = new GamePanel({
  game,
  engine: () => engineSelect.value,
  liveEval: (key) => evals.get(key),
  onChange: () => { renderMoveList(); renderAnalysis(); },
  errorBox,
});

// The position editor works on the board itself; what it makes is loaded
// as a new game.
const editor = new Editor(board, $('#editor'), {
  full: true,
  validate: (sfen) => api.validate({ sfen, moves: [] }),
  onDone: (pos) => { loadText(toSfen(pos)); },
  onCancel: () => showPosition(),
});
$('#edit-position').addEventListener('click', () => {
  if (editor.active) return;
  stopAnalysis('user');
  editor.start(game.position);
});

let flipped = loadSetting('flipped', false);
board.setFlipped(flipped);
bar.setFlipped(flipped);

// --- showing the game ----------------------------------------------------

game.addEventListener('change', (e) => {
  const what = e.detail.what;
  if (editor.active && what !== 'kif') editor.stop(); // the game moved on: editing ends
  if (what !== 'cursor') renderMoveList();
  if (what === 'kif') return; // notation only: the position did not change
  showPosition();
});

function renderMoveList() {
  moveList.render(game, (n, before) => panel.annotate(n, before));
  moveList.setCurrent(game.node.id);
}

function showPosition() {
  const key = game.key();
  board.setPosition(game.position, { lastMove: game.lastMove() });
  board.root.classList.toggle('illegal', !game.legalPosition);
  moveList.setCurrent(game.node.id);
  $('#main-line').hidden = game.onMainLine;
  panel.renderHeader();
  $('#nav-first').disabled = $('#nav-prev').disabled = game.cursor === 0;
  $('#nav-next').disabled = $('#nav-last').disabled = game.cursor === game.length;
  $('#terminal').hidden = true;
  writeHash();
  renderAnalysis();
  if (!game.legalPosition) {
    board.setLegal([]);
    $('#sfen-out').value = game.root;
    stopAnalysis('illegal');
    return;
  }
  game.verdict().then((v) => {
    if (key !== game.key()) return; // the user moved on meanwhile
    $('#sfen-out').value = v.sfen || '';
    if (v.valid && !game.agrees(v.sfen)) {
      // The locally applied move disagrees with usid: trust usid and say so.
      console.error(`usid: local position ${toSfen(game.position)} differs from usid's ${v.sfen}`);
      game.replacePosition(parseSfen(v.sfen));
      board.setPosition(game.position, { lastMove: game.lastMove() });
    }
    if (!v.valid) {
      showErrors(errorBox, v.errors, { title: t('err.refused'), moves: game.moves });
      board.setLegal([]);
      return;
    }
    board.setLegal(v.legal_moves);
    board.setCheck(v.in_check);
    const done = v.checkmate || v.legal_moves.length === 0;
    if (done) {
      const end = $('#terminal');
      end.hidden = false;
      end.textContent = v.checkmate ? t(v.side_to_move === 'b' ? 'terminal.gotewins' : 'terminal.sentewins') : t('terminal.nomoves');
    }
    if (analysis.on) scheduleAnalyze();
  }, (err) => showErrors(errorBox, [{ code: err.code, message: err.message }], { title: t('err.unreachable') }));
}

// The URL keeps the game (#pos=startpos_moves_7g7f&ply=1) so reloading or
// sharing the link shows the same position.
function writeHash() {
  const pos = game.usi(game.length).replaceAll(' ', '_');
  const h = `#pos=${pos}&ply=${game.cursor}`;
  if (location.hash !== h) history.replaceState(null, '', h);
}

function readHash() {
  const p = hashParams();
  if (!p.pos) return null;
  return { text: p.pos.replaceAll('_', ' '), ply: Number(p.ply) };
}

// --- loading positions ---------------------------------------------------

async function loadText(text, ply) {
  let parsed;
  try {
    parsed = parsePositionText(text);
  } catch (e) {
    showErrors(errorBox, [{ code: 'position_syntax', message: e.message }], { title: t('err.position') });
    return false;
  }
  let res;
  try {
    res = await game.load(parsed.sfen, parsed.moves);
  } catch (e) {
    showErrors(errorBox, [{ code: e.code, message: e.message }], { title: t('err.unreachable') });
    return false;
  }
  if (!res.ok) {
    const title = typeof res.kept === 'number'
      ? t('err.illegalmove', { n: res.kept })
      : t('err.illegalposition');
    showErrors(errorBox, res.errors, { title, moves: parsed.moves });
    return false;
  }
  showErrors(errorBox, []);
  if (Number.isInteger(ply) && ply >= 0 && ply < game.length) game.goto(ply);
  return true;
}

// Pasted text and files are read by usid (gamepanel.js); loadText reads
// only the page's own URL (#pos=...).
$('#main-line').addEventListener('click', () => game.backToMain());
$('#reset').addEventListener('click', () => { loadText('startpos'); $('#position-input').value = ''; });
$('#copy-sfen').addEventListener('click', async () => {
  toast((await copyText($('#sfen-out').value)) ? t('toast.sfencopied') : t('toast.copyfailedselect'));
});
$('#copy-usi').addEventListener('click', async () => {
  toast((await copyText(`position ${game.usi()}`)) ? t('toast.usicopied') : t('toast.copyfailed'));
});

// --- navigation ----------------------------------------------------------

$('#nav-first').addEventListener('click', () => game.goto(0));
$('#nav-prev').addEventListener('click', () => game.goto(game.cursor - 1));
$('#nav-next').addEventListener('click', () => game.goto(game.cursor + 1));
$('#nav-last').addEventListener('click', () => game.goto(game.length));
$('#flip').addEventListener('click', flip);

function flip() {
  flipped = !flipped;
  saveSetting('flipped', flipped);
  board.setFlipped(flipped);
  bar.setFlipped(flipped);
}

document.addEventListener('keydown', (e) => {
  if (isTyping(e) || e.altKey || e.ctrlKey || e.metaKey || editor.active) return;
  const keys = {
    ArrowLeft: () => game.goto(game.cursor - 1),
    ArrowRight: () => game.goto(game.cursor + 1),
    ArrowUp: () => game.goto(0),
    ArrowDown: () => game.goto(game.length),
    Home: () => game.goto(0),
    End: () => game.goto(game.length),
    f: flip,
  };
  const f = keys[e.key];
  if (f) { e.preventDefault(); f(); }
});

// Scrolling over the board steps through the line, as on lishogi.
let wheelAt = 0;
$('#board').addEventListener('wheel', (e) => {
  if (Math.abs(e.deltaY) < 4 || e.timeStamp - wheelAt < 60) return;
  e.preventDefault();
  wheelAt = e.timeStamp;
  game.goto(game.cursor + (e.deltaY > 0 ? 1 : -1));
}, { passive: false });

// --- engines and analysis ------------------------------------------------

const engineSelect = $('#engine');
const multipvSelect = $('#multipv');
multipvSelect.value = String(loadSetting('multipv', 1));

async function loadEngines() {
  try {
    const list = await api.engines();
    engineSelect.innerHTML = '';
    for (const e of list) {
      const o = document.createElement('option');
      o.value = e.name;
      const usiName = e.id && e.id.name ? ` — ${e.id.name}` : '';
      o.textContent = `${e.name}${usiName}`;
      o.title = t('engine.idle', { idle: e.idle ?? '?', n: e.instances ?? '?' });
      engineSelect.append(o);
    }
    const saved = loadSetting('engine', null);
    const pick = list.find((e) => e.name === saved) || list.find((e) => /fairy/i.test(e.name)) || list[0];
    if (pick) engineSelect.value = pick.name;
    if (!list.length) engineSelect.innerHTML = `<option value="">${escapeHtml(t('engine.none'))}</option>`;
  } catch (e) {
    engineSelect.innerHTML = `<option value="">${escapeHtml(t('engine.unavailable'))}</option>`;
    showErrors(analysisError, [{ code: e.code, message: e.message }], { title: t('err.engines') });
  }
}

engineSelect.addEventListener('change', () => {
  saveSetting('engine', engineSelect.value);
  if (analysis.on) scheduleAnalyze();
});
// Only the line counts usid accepts (caps.max_multipv).
async function fitMultiPV() {
  const max = (await serverLimits())?.caps?.max_multipv;
  if (max > 0) fitSelect(multipvSelect, (o) => Number(o.value) <= max, () => ({ value: '1', text: '1' }));
  multipvSelect.dataset.limits = max > 0 ? 'server' : 'builtin';
}
multipvSelect.addEventListener('change', () => {
  saveSetting('multipv', Number(multipvSelect.value));
  if (analysis.on) scheduleAnalyze();
});

$('#analyze').addEventListener('click', () => {
  if (analysis.on) stopAnalysis('user');
  else startAnalysis();
});

function startAnalysis() {
  if (!game.legalPosition) return;
  analysis.on = true;
  showErrors(analysisError, []);
  scheduleAnalyze(0);
}

// A new request per position: usid replaces the running search when a new
// analyze arrives, and the id tells its events from the old search's.
let analyzeTimer = 0;
function scheduleAnalyze(delay = 120) {
  clearTimeout(analyzeTimer);
  analysis.id = null; // events of the previous search are stale from now on
  analysis.lines.clear();
  analysis.bestmove = null;
  analysis.key = game.key();
  setState('starting');
  analyzeTimer = setTimeout(sendAnalyze, delay);
}

async function sendAnalyze() {
  if (!analysis.on) return;
  const key = game.key();
  let v;
  try { v = await game.verdict(); } catch { setState('error'); return; }
  if (!analysis.on || key !== game.key()) return;
  if (!v.valid) { stopAnalysis('illegal'); return; }
  if (v.legal_moves.length === 0) { analysis.key = key; setState('terminal'); return; }
  const id = `a${++analysis.seq}`;
  Object.assign(analysis, { id, key, turn: v.side_to_move || game.position.turn, stats: {}, bestmove: null, queue: 0 });
  analysis.lines.clear();
  const msg = {
    type: 'analyze', id, position: game.positionAt(), multipv: Number(multipvSelect.value), notation: 'kif',
  };
  if (engineSelect.value) msg.engine = engineSelect.value;
  if (sock.send(msg)) {
    analysis.live = id;
    setState('starting');
  } else {
    setState('connecting');
  }
}

function stopAnalysis(why) {
  clearTimeout(analyzeTimer);
  if (!analysis.on) { if (why === 'illegal') setState('idle'); return; }
  analysis.on = false;
  const live = analysis.live;
  if (live && sock.open) sock.send({ type: 'stop', id: live });
  // Wait for the bestmove only if it belongs to the shown position.
  if (live && sock.open && live === analysis.id) setState('stopping');
  else setState(why === 'illegal' ? 'idle' : 'stopped');
}

sock.addEventListener('open', () => {
  // After a reconnect the old search is gone server-side: start afresh.
  analysis.live = null;
  if (analysis.on) scheduleAnalyze(0);
});
sock.addEventListener('state', (e) => {
  const { state, retryIn } = e.detail;
  const c = $('#connection');
  c.dataset.state = state;
  c.textContent = state === 'open' ? t('conn.open') : state === 'waiting'
    ? t('conn.retry', { s: Math.max(1, Math.round(retryIn / 1000)) }) : t('conn.connecting');
  if (state === 'waiting') analysis.live = null;
  if (state === 'waiting' && analysis.on) setState('connecting');
  if (state === 'waiting' && analysis.state === 'stopping') setState('stopped');
});

sock.addEventListener('message', (e) => {
  const m = e.detail;
  const terminal = m.type === 'bestmove' || m.type === 'error' || m.type === 'checkmate';
  if (terminal && m.id && m.id === analysis.live) analysis.live = null;
  if (m.type === 'error' && !m.id) {
    showErrors(analysisError, [m], { title: t('err.usid') });
    return;
  }
  // ARCHITECTURE.md allows `queued` without an id: it is about the live request.
  const id = m.type === 'queued' && !m.id ? analysis.live : m.id;
  if (!id || id !== analysis.id) return;
  switch (m.type) {
    case 'engine':
      analysis.engine = m.usi_name || m.name || '';
      if (analysis.state !== 'stopping') setState('searching');
      break;
    case 'queued':
      analysis.queue = m.position;
      if (analysis.state !== 'stopping') setState('queued');
      break;
    case 'info':
      onInfo(m);
      break;
    case 'bestmove':
      analysis.bestmove = m;
      analysis.on = false;
      setState(analysis.state === 'stopping' ? 'stopped' : 'done');
      break;
    case 'error':
      analysis.on = false;
      setState('error');
      showErrors(analysisError, [m], { title: t('err.analysis') });
      break;
  }
});

function onInfo(m) {
  const s = analysis.stats;
  for (const k of ['depth', 'seldepth', 'nodes', 'nps', 'time_ms', 'hashfull']) if (m[k] !== undefined) s[k] = m[k];
  if (analysis.state === 'starting' || analysis.state === 'queued') setState('searching');
  if (Array.isArray(m.pv) && m.pv.length && m.score) {
    const mpv = m.multipv || 1;
    const score = blackScore(m.score, analysis.turn);
    // A bound (lower/upper) is from the side to move's view too.
    let bound = m.bound || '';
    if (bound && analysis.turn === 'w') bound = bound === 'lower' ? 'upper' : 'lower';
    analysis.lines.set(mpv, { ...m, blackScore: score, blackBound: bound });
    if (mpv === 1 && score) {
      const old = evals.get(analysis.key);
      if (!old || (m.depth || 0) >= old.depth || !bound) evals.set(analysis.key, { score, depth: m.depth || 0 });
    }
  }
  renderSoon();
}

function setState(state) {
  analysis.state = state;
  renderAnalysis();
}

let frame = 0;
function renderSoon() {
  if (!frame) frame = requestAnimationFrame(() => { frame = 0; renderAnalysis(); });
}


function renderAnalysis() {
  // Numbers and lines belong to one position: elsewhere they are not shown.
  const here = analysis.key === game.key();
  const st = !here && !analysis.on && ['stopped', 'done', 'terminal'].includes(analysis.state) ? 'idle' : analysis.state;
  const status = $('#analysis-status');
  status.dataset.state = st;
  let text = t(`state.${st}`);
  if (st === 'queued' && analysis.queue) text += t('state.queuepos', { n: analysis.queue });
  $('#state-text').textContent = text;
  $('#engine-name').textContent = here ? analysis.engine : '';
  const s = here ? analysis.stats : {};
  const parts = [];
  if (s.depth !== undefined) parts.push(t('stats.depth', { d: `${s.depth}${s.seldepth ? `/${s.seldepth}` : ''}` }));
  if (s.nodes !== undefined) parts.push(t('stats.nodes', { n: formatCount(s.nodes) }));
  if (s.nps !== undefined) parts.push(t('stats.nps', { n: formatCount(s.nps) }));
  if (s.time_ms !== undefined) parts.push(formatSeconds(s.time_ms));
  if (s.hashfull !== undefined) parts.push(t('stats.hash', { n: Math.round(s.hashfull / 10) }));
  $('#analysis-stats').textContent = parts.join(' · ');
  const btn = $('#analyze');
  btn.textContent = analysis.on ? t('analysis.stop') : t('analysis.start');
  btn.classList.toggle('active', analysis.on);
  btn.disabled = !game.legalPosition;
  btn.setAttribute('aria-pressed', String(analysis.on));

  renderLines(here);
  const lines = here ? [...analysis.lines.values()].sort((a, b) => (a.multipv || 1) - (b.multipv || 1)) : [];
  board.setArrows(lines.map((l, i) => ({ move: l.pv[0], rank: i })));
  // The live search's evaluation where there is one, else the game analysis'.
  const scoreAt = (key) => evals.get(key)?.score || panel.resultAt(key)?.score || null;
  bar.set(scoreAt(game.key()));
  const pts = [];
  for (let ply = 0; ply <= game.length; ply++) {
    const score = scoreAt(game.key(ply));
    if (score) pts.push({ ply, score });
  }
  graph.draw({ points: pts, cursor: game.cursor, total: game.length, marks: panel.marks() });
  const bm = analysis.bestmove;
  const bmEl = $('#bestmove');
  if (here && bm && bm.move) {
    const k = moveText(bm.move_kif, bm.move, game.position);
    bmEl.hidden = false;
    bmEl.innerHTML = `${escapeHtml(t('analysis.bestmove'))} <strong>${MARK[k.side] || ''}${escapeHtml(k.text)}</strong>`;
  } else {
    bmEl.hidden = true;
  }
}

function renderLines(here) {
  const box = $('#pv-lines');
  if (!here || analysis.lines.size === 0) {
    const hint = analysis.on ? '' : `<p class="hint">${t('analysis.hint')}</p>`;
    box.innerHTML = analysis.on && analysis.state !== 'terminal' ? `<p class="hint">${escapeHtml(t('analysis.waiting'))}</p>` : hint;
    return;
  }
  const lines = [...analysis.lines.values()].sort((a, b) => (a.multipv || 1) - (b.multipv || 1));
  let html = '';
  for (const l of lines) {
    const sc = l.blackScore;
    const cls = !sc ? '' : (sc.mate !== undefined ? (sc.winner === 'b' ? 'sente' : 'gote') : sc.cp > 0 ? 'sente' : sc.cp < 0 ? 'gote' : '');
    const bound = l.blackBound === 'lower' ? '≥' : l.blackBound === 'upper' ? '≤' : '';
    html += `<div class="pv-line" data-testid="pv-line" data-multipv="${l.multipv || 1}" data-depth="${l.depth ?? 0}">` +
      `<span class="pv-score ${cls}" data-testid="pv-score">${bound}${formatScore(sc)}</span>` +
      `<span class="pv-depth">${l.depth ?? ''}</span><span class="pv-moves">`;
    let pos = game.position;
    l.pv.forEach((usi, j) => {
      const k = moveText(l.pv_kif && l.pv_kif[j], usi, pos);
      try { pos = pos && applyMove(pos, usi); } catch { pos = null; }
      const text = `${MARK[k.side] || ''}${k.text}`;
      html += `<span class="pv-move" data-testid="pv-move" data-index="${j}" data-usi="${escapeHtml(usi)}">${escapeHtml(text)}</span>`;
    });
    html += '</span></div>';
  }
  box.innerHTML = html;
}

// Clicking a move of a line plays the line up to that move.
$('#pv-lines').addEventListener('click', (e) => {
  const mv = e.target.closest('.pv-move');
  if (!mv) return;
  const line = analysis.lines.get(Number(mv.closest('.pv-line').dataset.multipv));
  if (!line || analysis.key !== game.key()) return;
  game.playLine(line.pv.slice(0, Number(mv.dataset.index) + 1));
});

// --- start ---------------------------------------------------------------

sock.connect();
loadEngines();
fitMultiPV();
const fromHash = readHash();
renderMoveList();
showPosition();
if (fromHash) loadText(fromHash.text, fromHash.ply);
else game.load('startpos', []);
