// The tsume page (/tsume): set up a mate problem, solve it with an engine's
// mate search (WebSocket `mate`, or POST /v1/mate when the socket is down),
// show progress while it runs, then step through the mate on the board.

import { Board } from './board.js';
import { Editor } from './editor.js';
import { UsidSocket } from './ws.js';
import { parseSfen, applyMove, parsePositionText, toSfen, squareIndex } from './sfen.js';
import { moveText, MARK, formatCount, formatSeconds } from './notation.js';
import * as api from './api.js';
import { serverLimits, fitSelect } from './limits.js';
import { t, lang } from './i18n.js';
import { errorText } from './errwords.js';
import { shogi } from './games/shogi.js';
import { $, showErrors, loadSetting, saveSetting, isTyping, escapeHtml, hashParams, engineLabel } from './dom.js';

const SEED = '9/9/9/9/9/k8/9/9/1R2K4 b Gr2b3g4s4n4l18p 1';

// The board takes moves only while the player solves (see "solving it
// yourself"); otherwise it has no legal moves and nothing moves.
const board = new Board($('#board'), { onMove: (usi) => playerMove(usi) });
const sock = new UsidSocket();
const errorBox = $('#error');

const problem = { sfen: null, pos: null };
// The running or last solve. Events whose id differs are stale.
const solve = { id: null, seq: 0, started: 0, timer: 0, engine: '', stats: {}, running: false, via: 'ws' };
// The mate line once found, and the step shown.
const line = { moves: [], kif: [], positions: [], step: 0 };

const editor = new Editor(board, $('#editor'), {
  validate: (sfen) => api.validate({ sfen, moves: [] }),
  onDone: (pos) => {
    const sfen = toSfen(pos);
    $('#sfen-input').value = sfen;
    setProblem(sfen);
  },
  onCancel: () => {
    if (problem.pos) board.setPosition(problem.pos);
    setProgress('idle', problem.sfen ? t('tsume.ready') : t('tsume.intro'));
  },
});

let flipped = loadSetting('tsume.flipped', false);
board.setFlipped(flipped);

// --- setting up the problem ---------------------------------------------

async function setProblem(text) {
  if (editor.active) editor.stop();
  stopTry();
  let sfen;
  try {
    const p = parsePositionText(text);
    if (p.moves.length) throw new Error(t('tsume.nomoves'));
    sfen = p.sfen;
  } catch (e) {
    showErrors(errorBox, [{ code: 'position_syntax', message: e.message }], { title: t('err.problem') });
    return false;
  }
  let v;
  try {
    v = await api.validate({ sfen, moves: [] });
  } catch (e) {
    showErrors(errorBox, [{ code: e.code, message: e.message }], { title: t('err.unreachable') });
    return false;
  }
  cancelSolve();
  clearResult();
  solve.took = 0;
  solve.stats = {};
  let pos = null;
  try { pos = v.sfen ? parseSfen(v.sfen) : null; } catch { pos = null; }
  if (pos) board.setPosition(pos, { check: v.in_check });
  board.root.classList.toggle('illegal', !v.valid);
  if (!v.valid) {
    problem.sfen = null;
    showErrors(errorBox, v.errors, { title: t('err.illegalposition') });
    return false;
  }
  showErrors(errorBox, []);
  problem.sfen = v.sfen;
  problem.pos = pos;
  $('#sfen-input').value = v.sfen;
  history.replaceState(null, '', `#sfen=${v.sfen.replaceAll(' ', '_')}`);
  setProgress('idle', v.checkmate ? t('tsume.already') : t('tsume.ready'));
  return true;
}

$('#problem-form').addEventListener('submit', (e) => {
  e.preventDefault();
  setProblem($('#sfen-input').value);
});
$('#edit').addEventListener('click', () => {
  stopTry();
  cancelSolve(true);
  clearResult();
  // The editor shows its own verdict as the position is built: the old
  // problem's errors no longer apply.
  showErrors(errorBox, []);
  board.root.classList.remove('illegal');
  // Nor does the old problem's status ("Solved.", its time and nodes).
  Object.assign(solve, { took: 0, stats: {} });
  setProgress('editing', t('tsume.editing'));
  editor.start(problem.pos || parseSfen('9/9/9/9/9/9/9/9/9 b - 1'));
});
$('#samples').addEventListener('click', (e) => {
  const b = e.target.closest('button[data-sfen]');
  if (!b) return;
  for (const o of $('#samples').querySelectorAll('button')) o.setAttribute('aria-pressed', String(o === b));
  $('#sfen-input').value = b.dataset.sfen;
  setProblem(b.dataset.sfen);
});

// --- engines -------------------------------------------------------------

async function loadEngines() {
  const sel = $('#engine');
  try {
    // Shogi engines only (a chess or othello engine refuses a shogi
    // position); one without a mate search is shown, not offered.
    const list = (await api.engines()).filter((e) => e.profile && shogi.protocols.includes(e.profile.protocol || 'usi'));
    sel.innerHTML = '';
    for (const e of list) {
      const o = document.createElement('option');
      o.value = e.name;
      const mates = e.capabilities && e.capabilities.checkmate;
      o.textContent = `${engineLabel(e)}${mates ? '' : t('tsume.nomatesearch')}`;
      if (e.id && e.id.name) o.title = e.id.name;
      o.disabled = !mates; // its profile says it has no mate search
      sel.append(o);
    }
    const saved = loadSetting('tsume.engine', null);
    const mates = (e) => e.capabilities && e.capabilities.checkmate;
    const pick = list.find((e) => e.name === saved && mates(e)) || list.find(mates) || list[0];
    if (pick) sel.value = pick.name;
    if (!list.length) sel.innerHTML = `<option value="">${escapeHtml(t('engine.none'))}</option>`;
  } catch (e) {
    sel.innerHTML = `<option value="">${escapeHtml(t('engine.default'))}</option>`;
    showErrors(errorBox, [{ code: e.code, message: e.message }], { title: t('err.engines') });
  }
}
$('#engine').addEventListener('change', (e) => saveSetting('tsume.engine', e.target.value));

// Only the time limits usid accepts (caps.max_mate_time_ms); the page's own
// choices if it cannot say. data-limits tells which (for the tests).
async function fitTimeLimits() {
  const sel = $('#time-limit');
  const max = (await serverLimits())?.caps?.max_mate_time_ms;
  if (max > 0) fitSelect(sel, (o) => Number(o.value) <= max, () => ({ value: String(max), text: formatSeconds(max) }));
  sel.dataset.limits = max > 0 ? 'server' : 'builtin';
}

// --- solving -------------------------------------------------------------

$('#solve').addEventListener('click', async () => {
  if (solve.running) { cancelSolve(true); return; }
  if (editor.active) {
    const pos = editor.pos;
    editor.stop();
    $('#sfen-input').value = toSfen(pos);
  }
  if (!problem.sfen || $('#sfen-input').value.trim() !== problem.sfen) {
    if (!(await setProblem($('#sfen-input').value))) return;
  }
  startSolve();
});

function startSolve() {
  clearResult();
  showLine(0);
  const id = `m${++solve.seq}`;
  const timeout = Number($('#time-limit').value);
  const engine = $('#engine').value;
  Object.assign(solve, { id, started: performance.now(), engine, stats: {}, running: true, timeout, took: 0 });
  clearInterval(solve.timer);
  solve.timer = setInterval(renderProgress, 100);
  stopTry();
  setProgress('starting', t('state.starting'));
  $('#solve').textContent = t('tsume.cancel');
  const position = { sfen: problem.sfen, moves: [] };
  const msg = { type: 'mate', id, position, timeout_ms: timeout, notation: 'kif' };
  if (engine) msg.engine = engine;
  solve.via = 'ws';
  // Once sent the search is on: a session that keeps its engine sends no
  // new 'engine' event, so the status must not wait for one.
  if (sock.send(msg)) { setProgress('searching', t('tsume.solving')); return; }
  solve.via = 'http';
  // No WebSocket at the moment: the REST route gives the same answer, just
  // without progress events.
  setProgress('searching', t('tsume.solvinghttp'));
  api.mate(position, engine, timeout).then(
    (r) => { if (solve.id === id) finish({ ...r, id }); },
    (e) => { if (solve.id === id) fail({ code: e.code, message: e.message }); },
  );
}

function cancelSolve(user = false) {
  if (!solve.running) return;
  if (user && sock.open) sock.send({ type: 'stop', id: solve.id });
  solve.running = false;
  solve.id = null;
  clearInterval(solve.timer);
  $('#solve').textContent = t('tsume.solve');
  if (user) setProgress('idle', t('tsume.cancelled'));
}

sock.addEventListener('message', (e) => {
  const m = e.detail;
  // ARCHITECTURE.md allows `queued` without an id: it is about the running solve.
  const id = m.type === 'queued' && !m.id && solve.running ? solve.id : m.id;
  if (!id || id !== solve.id) return;
  switch (m.type) {
    case 'engine':
      // The configured name (gps) reads better than a long USI id.
      solve.engine = m.name || m.usi_name || solve.engine;
      setProgress('searching', t('tsume.solving'));
      break;
    case 'queued':
      setProgress('queued', t('tsume.queued', { n: m.position }));
      break;
    case 'info':
      for (const k of ['depth', 'nodes', 'nps', 'time_ms']) if (m[k] !== undefined) solve.stats[k] = m[k];
      renderProgress();
      break;
    case 'checkmate':
      finish(m);
      break;
    case 'bestmove': // an engine without mate search may answer this way
      finish({ id: m.id, result: 'notimplemented', moves: [] });
      break;
    case 'error':
      fail(m);
      break;
  }
});

sock.addEventListener('state', (e) => {
  const { state, retryIn } = e.detail;
  const c = $('#connection');
  c.dataset.state = state;
  c.textContent = state === 'open' ? t('conn.open') : state === 'waiting'
    ? t('conn.retry', { s: Math.max(1, Math.round(retryIn / 1000)) }) : t('conn.connecting');
  // A search on a dropped socket is lost: say so rather than spin forever.
  if (state === 'waiting' && solve.running && solve.via === 'ws') fail({ code: 'connection_lost', message: t('tsume.lost') });
});

// A live connection usid refused: say why, in words, until it opens.
sock.addEventListener('refused', (e) => {
  const r = e.detail;
  showErrors(errorBox, r ? [{ code: 'too_many_requests', message: '' }] : [],
    { title: r?.sessions ? t('conn.refused', { n: r.sessions }) : t('conn.refusedany') });
});

function setProgress(state, text) {
  const p = $('#progress');
  p.dataset.state = state;
  $('#progress-text').textContent = text;
  renderProgress();
}

function renderProgress() {
  const parts = [];
  if (solve.running) {
    const spent = performance.now() - solve.started;
    parts.push(formatSeconds(spent));
    if (solve.timeout) parts.push(t('stats.left', { s: formatSeconds(Math.max(0, solve.timeout - spent)) }));
  }
  else if (solve.took) parts.push(formatSeconds(solve.took));
  const s = solve.stats;
  if (s.depth !== undefined) parts.push(t('stats.depth', { d: s.depth }));
  if (s.nodes !== undefined) parts.push(t('stats.nodes', { n: formatCount(s.nodes) }));
  if (s.nps !== undefined) parts.push(t('stats.nps', { n: formatCount(s.nps) }));
  $('#progress-stats').textContent = parts.join(' · ');
}

function finish(m) {
  const took = performance.now() - solve.started;
  cancelSolve();
  solve.took = took;
  const res = $('#result');
  res.hidden = false;
  res.dataset.result = m.result;
  const secs = formatSeconds(took);
  const who = escapeHtml(solve.engine || m.engine || t('tsume.theengine'));
  let title, detail;
  switch (m.result) {
    case 'mate': {
      const n = (m.moves || []).length;
      title = `詰み <span>${escapeHtml(t('tsume.matein', { n }))}</span>`;
      detail = escapeHtml(t('tsume.found', { who: '\u0000', secs })).replace('\u0000', who);
      setLine(m.moves || [], m.moves_kif || []);
      break;
    }
    case 'nomate':
      // The Japanese page says 不詰 once; others add the term before their word.
      title = lang === 'ja' ? escapeHtml(t('tsume.nomate')) : `不詰 <span>${escapeHtml(t('tsume.nomate'))}</span>`;
      detail = escapeHtml(t('tsume.nomatedetail', { who: '\u0000', secs })).replace('\u0000', who);
      break;
    case 'timeout':
      title = escapeHtml(t('tsume.timeout'));
      detail = escapeHtml(t('tsume.timeoutdetail', { secs: formatSeconds(solve.timeout) }));
      break;
    case 'notimplemented':
      title = escapeHtml(t('tsume.notimpl'));
      detail = escapeHtml(t('tsume.notimpldetail', { who: '\u0000' })).replace('\u0000', who);
      break;
    default:
      title = escapeHtml(String(m.result));
      detail = '';
  }
  $('#result-title').innerHTML = title;
  $('#result-detail').innerHTML = detail;
  delete $('#result-detail').dataset.code;
  setProgress('done', m.result === 'mate' ? t('tsume.solved') : t('tsume.finished'));
}

function fail(err) {
  cancelSolve();
  const res = $('#result');
  res.hidden = false;
  res.dataset.result = 'error';
  $('#result-title').textContent = t('tsume.failed');
  // In words, in the page's language (the code stays in data-code).
  $('#result-detail').dataset.code = err.code || 'error';
  $('#result-detail').textContent = errorText(err);
  setProgress('error', t('state.error'));
}

function clearResult() {
  const res = $('#result');
  res.hidden = true;
  res.dataset.result = '';
  $('#mate-line').innerHTML = '';
  Object.assign(line, { moves: [], kif: [], positions: problem.pos ? [problem.pos] : [], step: 0 });
  renderSteps();
}

// --- the mate line on the board -----------------------------------------

function setLine(moves, kif) {
  const positions = [problem.pos];
  try {
    for (const m of moves) positions.push(applyMove(positions.at(-1), m));
  } catch { /* usid verified the line; a display problem only shortens it */ }
  Object.assign(line, { moves, kif, positions, step: 0 });
  let html = '';
  moves.forEach((usi, i) => {
    const k = moveText(kif[i], usi, positions[i]);
    html += `<li data-testid="tsume-move" data-ply="${i + 1}" data-usi="${escapeHtml(usi)}" class="${k.side}">` +
      `<span class="num">${i + 1}</span><span class="mark">${MARK[k.side] || ''}</span>` +
      `<span class="mv">${escapeHtml(k.text)}</span>${k.origin ? `<span class="origin">${k.origin}</span>` : ''}</li>`;
  });
  $('#mate-line').innerHTML = html;
  showLine(0);
}

function showLine(step) {
  if (!problem.pos) return;
  const max = line.positions.length - 1;
  step = Math.max(0, Math.min(max, step));
  line.step = step;
  const pos = line.positions[step] || problem.pos;
  const last = step > 0 ? line.moves[step - 1] : null;
  // Every attacker move of a mate line checks; the last position is mate.
  board.setPosition(pos, { lastMove: last, check: step > 0 && step % 2 === 1 });
  document.querySelectorAll('#mate-line .current').forEach((li) => li.classList.remove('current'));
  document.querySelector(`#mate-line [data-ply="${step}"]`)?.classList.add('current');
  renderSteps();
}

function renderSteps() {
  const max = Math.max(0, line.positions.length - 1);
  $('#step-count').textContent = max ? `${line.step} / ${max}` : '–';
  $('#step-first').disabled = $('#step-prev').disabled = line.step === 0;
  $('#step-next').disabled = $('#step-last').disabled = $('#step-play').disabled = line.step >= max;
}

let playTimer = 0;
function play() {
  clearInterval(playTimer);
  if (line.step >= line.positions.length - 1) showLine(0);
  playTimer = setInterval(() => {
    if (line.step >= line.positions.length - 1) { clearInterval(playTimer); return; }
    showLine(line.step + 1);
  }, 900);
}

const step = (to) => { clearInterval(playTimer); showLine(to); };
$('#step-first').addEventListener('click', () => step(0));
$('#step-prev').addEventListener('click', () => step(line.step - 1));
$('#step-next').addEventListener('click', () => step(line.step + 1));
$('#step-last').addEventListener('click', () => step(line.positions.length - 1));
$('#step-play').addEventListener('click', play);
$('#mate-line').addEventListener('click', (e) => {
  const li = e.target.closest('[data-ply]');
  if (li) step(Number(li.dataset.ply));
});
$('#flip').addEventListener('click', flip);

function flip() {
  flipped = !flipped;
  saveSetting('tsume.flipped', flipped);
  board.setFlipped(flipped);
}

document.addEventListener('keydown', (e) => {
  if (isTyping(e) || e.altKey || e.ctrlKey || e.metaKey) return;
  const keys = {
    ArrowLeft: () => step(line.step - 1), ArrowRight: () => step(line.step + 1),
    ArrowUp: () => step(0), Home: () => step(0),
    ArrowDown: () => step(line.positions.length - 1), End: () => step(line.positions.length - 1),
    f: flip,
  };
  const f = keys[e.key];
  if (f) { e.preventDefault(); f(); }
});

// --- solving it yourself -------------------------------------------------
//
// The engine proves a mate first (the line is kept hidden); then the board
// takes the player's attacking moves. Each must check (usid says whether it
// does); a move of the proven line is answered by the line's reply; any
// other check is tried against every defence with the mate search, and the
// defence that holds out longest is played (or the one that escapes is
// shown, and the move taken back).

const tryState = { on: false, moves: [], line: [], busy: false, seq: 0 };

function feedback(state, text) {
  const f = $('#try-feedback');
  f.hidden = !text;
  f.dataset.state = state;
  f.textContent = text || '';
}

function positionsOf(moves) {
  const out = [problem.pos];
  for (const m of moves) out.push(applyMove(out.at(-1), m));
  return out;
}

// kifOf names a move as the player reads it (usid's KIF, or Western).
async function kifOf(moves) {
  try {
    const v = await api.validate({ sfen: problem.sfen, moves });
    const ps = positionsOf(moves);
    const k = moveText(v.moves_kif?.at(-1), moves.at(-1), ps.at(-2));
    return `${MARK[k.side] || ''}${k.text}`;
  } catch { return moves.at(-1); }
}

async function showTry(moves, { legal = true } = {}) {
  const ps = positionsOf(moves);
  board.setPosition(ps.at(-1), { lastMove: moves.at(-1) || null });
  if (!legal) return null;
  const v = await api.validate({ sfen: problem.sfen, moves });
  if (!tryState.on) return v;
  board.setCheck(v.in_check);
  board.setLegal(v.legal_moves);
  return v;
}

function stopTry() {
  tryState.on = false;
  tryState.seq++;
  $('#hint').disabled = $('#reveal').disabled = true;
  board.setArrows([]);
  feedback('', '');
}

async function startTry() {
  // From the editor: the position being built is the problem to solve.
  if (editor.active && !(await setProblem(toSfen(editor.pos)))) return;
  if (!problem.sfen) return;
  cancelSolve(true);
  clearResult();
  stopTry();
  const seq = tryState.seq;
  Object.assign(tryState, { on: true, moves: [], line: [] });
  const engine = $('#engine').value;
  const timeout = Number($('#time-limit').value);
  Object.assign(solve, { started: performance.now(), running: true, timeout, stats: {}, took: 0 });
  clearInterval(solve.timer);
  solve.timer = setInterval(renderProgress, 100);
  setProgress('searching', t('try.preparing'));
  let r;
  try {
    r = await api.mate({ sfen: problem.sfen, moves: [] }, engine, timeout);
  } catch (e) {
    r = { result: 'error', error: e };
  }
  solve.running = false;
  clearInterval(solve.timer);
  if (seq !== tryState.seq) return;
  solve.took = performance.now() - solve.started;
  if (r.result !== 'mate') {
    tryState.on = false;
    if (r.result === 'error') fail({ code: r.error.code, message: r.error.message });
    else { feedback('wrong', t('try.nosolution')); finish({ ...r, moves: [] }); }
    return;
  }
  tryState.line = r.moves;
  $('#hint').disabled = $('#reveal').disabled = false;
  setProgress('idle', t('try.yourturn'));
  await showTry([]);
}

async function playerMove(usi) {
  if (!tryState.on || tryState.busy) return;
  const seq = tryState.seq;
  const before = tryState.moves.slice();
  const moves = [...before, usi];
  tryState.busy = true;
  board.setArrows([]);
  try {
    await showTry(moves, { legal: false });
    const v = await api.validate({ sfen: problem.sfen, moves });
    const name = await kifOf(moves);
    if (seq !== tryState.seq) return;
    if (!v.in_check) {
      feedback('wrong', t('try.nocheck', { move: name }));
      await showTry(before);
      return;
    }
    if (v.checkmate) {
      tryState.moves = moves;
      tryState.on = false;
      $('#hint').disabled = true;
      feedback('solved', t('try.solved', { n: moves.length }));
      setProgress('done', t('tsume.solved'));
      showOwnLine(moves, v.moves_kif || []);
      return;
    }
    let reply, rest;
    if (tryState.line[before.length] === usi) {
      reply = tryState.line[before.length + 1];
      rest = tryState.line.slice(before.length + 2);
    } else {
      // Not the proven line: try every defence.
      feedback('checking', t('try.checking', { move: name }));
      let best = null;
      for (const r of v.legal_moves) {
        let m;
        try { m = await api.mate({ sfen: problem.sfen, moves: [...moves, r] }, $('#engine').value, 5000); } catch { m = { result: 'error' }; }
        if (seq !== tryState.seq) return;
        if (m.result !== 'mate') {
          const escape = await kifOf([...moves, r]);
          feedback('wrong', m.result === 'nomate' ? t('try.nomate', { move: name, reply: escape }) : t('try.unproven', { move: name }));
          await showTry(before);
          return;
        }
        if (!best || m.moves.length > best.moves.length) best = { r, moves: m.moves };
      }
      reply = best.r;
      rest = best.moves;
    }
    tryState.moves = [...moves, reply];
    tryState.line = [...tryState.moves, ...rest];
    const replyName = await kifOf(tryState.moves);
    if (seq !== tryState.seq) return;
    feedback('good', t('try.good', { move: name, reply: replyName }));
    await showTry(tryState.moves);
  } finally {
    tryState.busy = false;
  }
}

// showOwnLine shows the player's own solution as the engine's is shown:
// its moves listed, the step buttons walk through it, ending on the mate.
function showOwnLine(moves, kif) {
  const res = $('#result');
  res.hidden = false;
  res.dataset.result = 'mate';
  $('#result-title').innerHTML = `詰み <span>${escapeHtml(t('tsume.matein', { n: moves.length }))}</span>`;
  $('#result-detail').textContent = t('try.ownline');
  setLine(moves, kif);
  showLine(moves.length);
}

// PIECE_KEYS name the pieces for the hint.
const PIECE_KEYS = {
  P: 'try.piece.P', L: 'try.piece.L', N: 'try.piece.N', S: 'try.piece.S', G: 'try.piece.G', B: 'try.piece.B', R: 'try.piece.R', K: 'try.piece.K',
  '+P': 'try.piece.PP', '+L': 'try.piece.PL', '+N': 'try.piece.PN', '+S': 'try.piece.PS', '+B': 'try.piece.PB', '+R': 'try.piece.PR',
};

$('#try').addEventListener('click', startTry);
// The hint gives the move away a part at a time: first which piece moves
// (or is dropped), then, asked again, the move itself.
let hinted = { at: -1, level: 0 };
$('#hint').addEventListener('click', () => {
  const next = tryState.line[tryState.moves.length];
  if (!tryState.on || !next) return;
  if (hinted.at !== tryState.moves.length || tryState.seq !== hinted.seq) hinted = { at: tryState.moves.length, seq: tryState.seq, level: 0 };
  hinted.level++;
  if (hinted.level >= 2) {
    board.setArrows([{ move: next }]);
    feedback('hint', t('try.hinted'));
    return;
  }
  const pos = positionsOf(tryState.moves).at(-1);
  const drop = next[1] === '*';
  let kind = next[0];
  if (!drop) kind = pos.board[squareIndex(next.slice(0, 2))]?.kind || '';
  const piece = t(PIECE_KEYS[kind] || 'try.piece.unknown');
  feedback('hint', t(drop ? 'try.hint.drop' : 'try.hint.piece', { piece }));
});
$('#reveal').addEventListener('click', async () => {
  if (!tryState.line.length) return;
  const line = tryState.line;
  stopTry();
  let kif = [];
  try { kif = (await api.validate({ sfen: problem.sfen, moves: line })).moves_kif || []; } catch { /* USI then */ }
  finish({ result: 'mate', moves: line, moves_kif: kif });
});

// --- start ---------------------------------------------------------------

sock.connect();
loadEngines();
fitTimeLimits();
const fromHash = hashParams().sfen;
const first = fromHash ? fromHash.replaceAll('_', ' ') : SEED;
$('#sfen-input').value = first;
setProblem(first);
