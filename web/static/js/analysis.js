// The board application (/, /chess, /othello): board, move list, position
// loading, and live engine analysis over usid's WebSocket. The page's game
// (<body data-game>) is a module of games/: it draws the board, reads and
// writes positions and moves, names the sides and shows the scores; this
// controller asks it and assumes no game. Game records, whole-game analysis
// and the record download live in gamepanel.js, playing the engine in
// play.js.

import { pageGame, povSide } from './games/index.js';
import { BoardEditor } from './boardeditor.js';
import { Game } from './game.js';
import { UsidSocket } from './ws.js';
import { EvalBar, EvalGraph } from './evalgraph.js';
import { MoveList } from './movelist.js';
import { GamePanel } from './gamepanel.js';
import { PlayPanel } from './play.js';
import { mergeInfo, sortedLines, linesHtml, statsText } from './pvlines.js';
import { SecondEngine } from './engine2.js';
import * as api from './api.js';
import { serverLimits, fitSelect } from './limits.js';
import { t } from './i18n.js';
import {
  $, toast, copyText, showErrors, loadSetting, saveSetting, isTyping, escapeHtml, hashParams, settingScope, engineLabel,
} from './dom.js';

const mod = pageGame();
settingScope(mod.scope);
const MARK = mod.mark;
const isHandicap = (root) => !!mod.isHandicap?.(root);
const game = new Game(mod);
// While a game against the engine runs, the player's moves go to usid.
const board = new mod.Board($('#board'), { onMove: (usi) => (play.active ? play.move(usi) : game.play(usi)) });
const bar = new EvalBar($('#eval-bar'), mod);
const graph = new EvalGraph($('#eval-graph'), (ply) => game.goto(ply), mod);
const moveList = new MoveList($('#move-list'), (id) => (id === 0 ? game.goto(0) : game.select(id)), mod);
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
  turn: 'b', // side to move there (as a score side: see povSide), to turn scores to the first side's view
  state: 'idle', // idle | connecting | starting | queued | searching | stopping | stopped | done | error | terminal
  queue: 0,
  engine: '',
  lines: new Map(), // multipv -> info event
  stats: {},
  bestmove: null,
};
const evals = new Map(); // game key -> {score (Black's view), depth}
const panel = new GamePanel({
  game, mod,
  engine: () => engineSelect.value,
  liveEval: (key) => evals.get(key),
  onChange: () => { renderMoveList(); renderAnalysis(); },
  errorBox,
});

// The position editor works on the board itself; what it makes is loaded
// as a new game.
const editor = mod.Editor
  ? new mod.Editor(board, $('#editor'), {
    full: true,
    validate: (text) => api.validate({ [mod.field]: text, moves: [] }, mod.notation),
    onDone: (pos) => { loadText(mod.toText(pos)); },
    onCancel: () => showPosition(),
  })
  : new BoardEditor(board, $('#editor'), mod, {
    validate: (text) => api.validate({ [mod.field]: text, moves: [] }, mod.notation),
    onDone: (text) => { loadText(text); },
    onCancel: () => showPosition(),
  });
$('#edit-position').addEventListener('click', () => {
  if (editor.active) return;
  stopAnalysis('user');
  editor.start(game.position);
  board.setArrows([]); // the stopped analysis' arrows are not about the position being built
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
  board.setPosition(game.position, { lastMove: game.lastMove(), handicap: isHandicap(game.root) });
  // The previous position's legal moves must not move pieces here: none
  // until usid's verdict of this one arrives.
  board.setLegal(null);
  board.root.classList.toggle('illegal', !game.legalPosition);
  moveList.setCurrent(game.node.id);
  $('#main-line').hidden = $('#promote-var').hidden = $('#delete-var').hidden = game.onMainLine;
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
    const text = v[mod.field] || '';
    $('#sfen-out').value = text;
    if (v.valid && !game.agrees(text)) {
      // The locally applied move disagrees with usid: trust usid and say so.
      console.error(`usid: local position ${mod.toText(game.position)} differs from usid's ${text}`);
      game.replacePosition(mod.parse(text));
      board.setPosition(game.position, { lastMove: game.lastMove(), handicap: isHandicap(game.root) });
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
      end.textContent = mod.terminalText(v);
    }
    if (analysis.on) scheduleAnalyze();
    else if (second.on) second.schedule();
  }, (err) => showErrors(errorBox, [{ code: err.code, message: err.message }], { title: t('err.unreachable') }));
}

// The URL keeps the game (#pos=startpos_moves_7g7f&ply=1) so reloading or
// sharing the link shows the same position.
function writeHash() {
  const pos = game.usi(game.length).replaceAll(' ', '_');
  const h = `#pos=${pos}&ply=${game.cursor}`;
  if (location.hash !== h) history.replaceState(null, '', h);
}

// Editing the URL's #pos (or following a link to another) loads it; the
// page's own writes use replaceState, which fires no hashchange.
window.addEventListener('hashchange', () => {
  const h = readHash();
  if (h) loadText(h.text, h.ply);
});

function readHash() {
  const p = hashParams();
  if (!p.pos) return null;
  return { text: p.pos.replaceAll('_', ' '), ply: Number(p.ply) };
}

// --- loading positions ---------------------------------------------------

async function loadText(text, ply) {
  try { sessionStorage.removeItem('usid.record'); } catch { /* private mode */ }
  let parsed;
  try {
    parsed = mod.parseText(text);
  } catch (e) {
    showErrors(errorBox, [{ code: 'position_syntax', message: e.message }], { title: t('err.position') });
    return false;
  }
  let res;
  try {
    res = await game.load(parsed.root, parsed.moves);
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
$('#promote-var').addEventListener('click', () => game.promoteVariation());
$('#delete-var').addEventListener('click', () => game.deleteVariation());
$('#reset').addEventListener('click', () => { loadText('startpos'); $('#position-input').value = ''; });
$('#copy-sfen').addEventListener('click', async () => {
  toast((await copyText($('#sfen-out').value)) ? t(mod.copiedKey) : t('toast.copyfailedselect'));
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
    // Space on a focused button would press that button too: let go of it.
    ' ': () => { document.activeElement?.blur?.(); $('#analyze').click(); },
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
const limitSelect = $('#live-limit');
multipvSelect.value = String(loadSetting('multipv', 1));
limitSelect.value = loadSetting('liveLimit', '');
if (limitSelect.selectedIndex < 0) limitSelect.value = '';
const engineInfo = new Map(); // name -> /v1/engines entry

// LIVE_LIMITS are the live analysis' limits: none runs until Stop.
const LIVE_LIMITS = {
  d10: { depth: 10 }, d15: { depth: 15 }, d20: { depth: 20 },
  t5000: { movetime_ms: 5000 }, t10000: { movetime_ms: 10000 }, t30000: { movetime_ms: 30000 },
};

// The second engine (engine2.js) searches what the first does, when it does.
const second = new SecondEngine({
  game, mod,
  engines: () => [...engineInfo.values()],
  limits: () => LIVE_LIMITS[limitSelect.value],
  running: () => analysis.on,
  onArrows: () => { drawArrows(); renderButton(); },
});

// followProfile offers what the chosen engine can do (its probed profile in
// /v1/engines): Lines only with a MultiPV option, limits it honours
// (natively or emulated by usid), within the server's caps.
async function followProfile() {
  const e = engineInfo.get(engineSelect.value);
  play.followEngine();
  const prof = e?.profile || {};
  const name = e?.name || '';
  const multi = !e || !!prof.multipv_option;
  multipvSelect.disabled = !multi;
  multipvSelect.dataset.profile = multi ? 'multipv' : 'none';
  multipvSelect.title = multi ? '' : t('analysis.nomultipv', { engine: name });
  if (!multi) multipvSelect.value = '1';
  else multipvSelect.value = String(Math.min(loadSetting('multipv', 1), Math.max(...[...multipvSelect.options].map((o) => Number(o.value)))));
  const caps = (await serverLimits())?.caps || {};
  const go = prof.go || {};
  for (const o of limitSelect.options) {
    const l = LIVE_LIMITS[o.value];
    if (!l) continue;
    const kind = l.depth ? 'depth' : 'movetime';
    const over = (l.depth && caps.max_depth > 0 && l.depth > caps.max_depth) ||
      (l.movetime_ms && caps.max_movetime_ms > 0 && l.movetime_ms > caps.max_movetime_ms);
    const unsupported = go[kind] === 'unsupported';
    o.disabled = over || unsupported;
    o.title = unsupported ? t('analysis.limit.unsupported', { engine: name }) : '';
  }
  const want = loadSetting('liveLimit', '');
  const opt = [...limitSelect.options].find((o) => o.value === want);
  limitSelect.value = opt && !opt.disabled ? want : '';
  limitSelect.dataset.profile = name;
}
limitSelect.addEventListener('change', () => {
  saveSetting('liveLimit', limitSelect.value);
  if (analysis.on) scheduleAnalyze();
});

async function loadEngines() {
  try {
    // The engines of this game: those whose protocol plays it.
    const list = (await api.engines()).filter((e) => !e.profile?.protocol || mod.protocols.includes(e.profile.protocol));
    engineSelect.innerHTML = '';
    for (const e of list) {
      engineInfo.set(e.name, e);
      const o = document.createElement('option');
      o.value = e.name;
      o.textContent = engineLabel(e);
      o.title = `${e.id?.name || e.name} · ${t('engine.idle', { idle: e.idle ?? '?', n: e.instances ?? '?' })}`;
      engineSelect.append(o);
    }
    const saved = loadSetting('engine', null);
    const pick = list.find((e) => e.name === saved) || (mod.preferEngine && list.find((e) => mod.preferEngine.test(e.name))) || list[0];
    if (pick) engineSelect.value = pick.name;
    await followProfile();
    panel.renderJob(); // its button needs an engine
    renderAnalysis();
    if (!list.length) engineSelect.innerHTML = `<option value="">${escapeHtml(t('engine.none'))}</option>`;
  } catch (e) {
    engineSelect.innerHTML = `<option value="">${escapeHtml(t('engine.unavailable'))}</option>`;
    showErrors(analysisError, [{ code: e.code, message: e.message }], { title: t('err.engines') });
  }
}

engineSelect.addEventListener('change', async () => {
  saveSetting('engine', engineSelect.value);
  await followProfile();
  if (analysis.on) scheduleAnalyze();
});
// Only the line counts usid accepts (caps.max_multipv).
async function fitMultiPV() {
  const max = (await serverLimits())?.caps?.max_multipv;
  if (max > 0) fitSelect(multipvSelect, (o) => Number(o.value) <= max, () => ({ value: '1', text: '1' }));
  multipvSelect.dataset.limits = max > 0 ? 'server' : 'builtin';
  if (engineInfo.size) followProfile();
}
multipvSelect.addEventListener('change', () => {
  saveSetting('multipv', Number(multipvSelect.value));
  if (analysis.on) scheduleAnalyze();
});

// The button (and Space) starts and stops both engines.
$('#analyze').addEventListener('click', () => {
  if (analysis.on || second.on) stopAnalysis('user');
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
  if (second.added) second.schedule(delay);
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
  Object.assign(analysis, { id, key, turn: povSide(mod, v.side_to_move || game.position.turn), stats: {}, bestmove: null, queue: 0 });
  analysis.lines.clear();
  const msg = {
    type: 'analyze', id, position: game.positionAt(), multipv: multipvSelect.disabled ? 1 : Number(multipvSelect.value),
  };
  if (mod.notation) msg.notation = mod.notation;
  if (LIVE_LIMITS[limitSelect.value]) msg.limits = LIVE_LIMITS[limitSelect.value];
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
  second.stop();
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

// A live connection usid refused: say why, in words, until it opens.
sock.addEventListener('refused', (e) => {
  const r = e.detail;
  showErrors(analysisError, r ? [{ code: 'too_many_requests', message: '' }] : [],
    { title: r?.sessions ? t('conn.refused', { n: r.sessions }) : t('conn.refusedany') });
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
  const line = mergeInfo(analysis.lines, m, analysis.turn, analysis.state === 'stopping', mod);
  if (line && (line.multipv || 1) === 1 && line.blackScore) {
    const prev = evals.get(analysis.key);
    if (!prev || (line.depth || 0) >= prev.depth || !line.blackBound) evals.set(analysis.key, { score: line.blackScore, depth: line.depth || 0 });
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
  // The engine answered from its book: a move, but no evaluation to show.
  if (st === 'done' && analysis.bestmove && analysis.bestmove.book) text = t('state.book');
  // It searched to its time and finished no iteration (a busy machine).
  if (st === 'done' && analysis.bestmove && analysis.bestmove.unscored) text = t('state.unscored');
  $('#state-text').textContent = text;
  $('#engine-name').textContent = here ? analysis.engine : '';
  const s = here ? analysis.stats : {};
  $('#analysis-stats').textContent = statsText(s);
  renderButton();
  renderLines(here);
  drawArrows();
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
    const k = mod.moveText(mod.notation ? bm[`move_${mod.notation}`] : '', bm.move, game.position);
    bmEl.hidden = false;
    bmEl.innerHTML = `${escapeHtml(t('analysis.bestmove'))} <strong>${MARK[k.side] || ''}${escapeHtml(k.text)}</strong>`;
  } else {
    bmEl.hidden = true;
  }
}

// renderButton: Stop while either engine searches.
function renderButton() {
  const on = analysis.on || second.on;
  const btn = $('#analyze');
  btn.textContent = on ? t('analysis.stop') : t('analysis.start');
  btn.classList.toggle('active', on);
  // A game with no engine of its own here (othello, without one
  // configured) has nothing to analyse with.
  btn.disabled = !game.legalPosition || (mod.engineRequired && engineInfo.size === 0);
  btn.setAttribute('aria-pressed', String(on));
}

// drawArrows: both engines' first moves, the second's in its own colour.
function drawArrows() {
  const here = analysis.key === game.key();
  const lines = here ? sortedLines(analysis.lines) : [];
  // While the editor builds a position, no line's arrow is about it.
  board.setArrows(board.editing ? [] : [...lines.map((l, i) => ({ move: l.pv[0], rank: i })), ...second.arrows()]);
}

function renderLines(here) {
  const box = $('#pv-lines');
  if (!here || analysis.lines.size === 0) {
    // An engine may answer without lines (a book move): say so rather
    // than invite to press Analyze again.
    const answered = here && analysis.state === 'done' && analysis.bestmove;
    const hint = analysis.on ? '' : `<p class="hint" data-testid="pv-hint">${answered ? escapeHtml(t('analysis.nolines')) : t('analysis.hint')}</p>`;
    box.innerHTML = analysis.on && analysis.state !== 'terminal' ? `<p class="hint">${escapeHtml(t('analysis.waiting'))}</p>` : hint;
    return;
  }
  // While a press is on the lines, or briefly while the mouse rests over
  // them (about to click one), they hold still, and say so; a hover holds
  // them for HOVER_HOLD_MS at most, then they catch up: what is shown is
  // never much staler than the status beside it.
  if (linesHeld && box.dataset.key === analysis.key && box.querySelector('.pv-line') &&
    (pvPress || performance.now() - heldSince < HOVER_HOLD_MS)) {
    box.dataset.stale = '1';
    box.title = t('analysis.held');
    clearTimeout(holdTimer);
    if (!pvPress) holdTimer = setTimeout(renderSoon, HOVER_HOLD_MS - (performance.now() - heldSince) + 10);
    return;
  }
  box.dataset.key = analysis.key;
  box.dataset.stale = '';
  box.removeAttribute('title');
  heldSince = performance.now(); // a hover holds the lines drawn now
  box.innerHTML = linesHtml(sortedLines(analysis.lines), game.position, mod);
}

// Clicking a move of a line plays the line up to that move. The lines are
// redrawn many times a second, so a click's press and release often land
// on different elements (and the browser sends no click): the line is
// taken at the press and played at a release nearby.
let pvPress = null;
let linesHeld = false;
// A hover holds the lines this long at most (a click takes less).
const HOVER_HOLD_MS = 800;
let heldSince = 0;
let holdTimer = 0;
// hold holds the lines still or lets them catch up (data-held shows which;
// data-stale that newer lines wait, which the page shows).
function hold(on) {
  if (on && !linesHeld) heldSince = performance.now();
  linesHeld = on;
  $('#pv-lines').dataset.held = on ? '1' : '';
  if (!on) { clearTimeout(holdTimer); renderSoon(); }
}
// Only a pointer that can hover holds them: a phone's browser reports
// mouse-type pointers at a tap's place that never leave (chromium does).
const canHover = () => matchMedia('(any-hover: hover)').matches;
// A press ends (released or taken back): the lines stay held only while a
// hovering mouse is still over them.
function pressEnded(e) {
  if (e.pointerType !== 'mouse' || !canHover() || !e.currentTarget.matches(':hover')) hold(false);
}
$('#pv-lines').addEventListener('pointerenter', (e) => { if (e.pointerType === 'mouse' && canHover()) hold(true); });
$('#pv-lines').addEventListener('pointerleave', (e) => {
  if (e.pointerType !== 'mouse' || pvPress) return;
  hold(false);
});
$('#pv-lines').addEventListener('pointerdown', (e) => {
  pvPress = null;
  const mv = e.target.closest('.pv-move');
  if (!mv || e.button !== 0) return;
  const line = analysis.lines.get(Number(mv.closest('.pv-line').dataset.multipv));
  if (!line || analysis.key !== game.key()) return;
  pvPress = { id: e.pointerId, x: e.clientX, y: e.clientY, key: game.key(), moves: line.pv.slice(0, Number(mv.dataset.index) + 1) };
  hold(true);
  // The release must come here even if the lines moved under the pointer.
  try { e.currentTarget.setPointerCapture(e.pointerId); } catch { /* not capturable */ }
});
$('#pv-lines').addEventListener('pointerup', (e) => {
  const p = pvPress;
  pvPress = null;
  pressEnded(e);
  if (!p || p.id !== e.pointerId || p.key !== game.key() || Math.hypot(e.clientX - p.x, e.clientY - p.y) > 12) return;
  game.playLine(p.moves);
});
// A press the browser takes back (a scroll, a system gesture) plays
// nothing and must not leave the lines frozen.
$('#pv-lines').addEventListener('pointercancel', (e) => {
  if (pvPress?.id !== e.pointerId) return;
  pvPress = null;
  pressEnded(e);
});

// --- playing the engine (play.js) ----------------------------------------

// initialLoad is the page's first position being loaded (from the URL, or
// the start): a resumed game is shown after it, or it would replace the
// game's moves with the URL's older ones.
let initialLoad = Promise.resolve();

const play = new PlayPanel($('#play-panel'), {
  sock, game,
  engine: () => engineInfo.get(engineSelect.value),
  onStart: () => stopAnalysis('user'),
  flip: (side) => { if (flipped !== (side !== mod.bottom)) flip(); }, // the player's side at the bottom
  refresh: () => showPosition(),
  hold: () => board.setLegal(null),
  loaded: () => initialLoad,
});

// --- start ---------------------------------------------------------------

sock.connect();
loadEngines();
fitMultiPV();
// savedRecord is the record this tab loaded last (see gamepanel.js), if the
// URL's game starts from its position: a reload shows its header, comments
// and variations again, at the line and move the URL names.
function savedRecord(h) {
  let rec, p;
  try {
    rec = JSON.parse(sessionStorage.getItem('usid.record'));
    p = mod.parseText(h.text);
    const text = (s) => mod.toText(mod.parse(s));
    const start = rec?.position?.[mod.field];
    if (!start || !mod.sameHead(text(p.root), text(start))) return null;
  } catch { return null; }
  return { rec, moves: p.moves };
}

const fromHash = readHash();
const restored = fromHash && savedRecord(fromHash);
renderMoveList();
showPosition();
if (restored) {
  game.loadRecord(restored.rec);
  if (restored.moves.length) game.playLine(restored.moves);
  if (Number.isInteger(fromHash.ply)) game.goto(fromHash.ply);
} else if (fromHash) initialLoad = loadText(fromHash.text, fromHash.ply);
else initialLoad = game.load('startpos', []);
