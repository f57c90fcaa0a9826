// The watch page of a broadcast (/watch/{id}): the game as it is played,
// the one engine search usid runs for it (the same lines for every viewer,
// GET /v1/broadcasts/{id}/ws), the eval bar, the evaluation graph of the
// game so far and the moves. It reuses the board application's parts (the
// game modules' boards, Game, MoveList, EvalBar, EvalGraph) and only
// watches: the board takes no moves. A viewer may step back through the
// game; "Live" returns to the position being searched. The socket comes
// back by itself when it drops (ws.js); after it, or after another usid
// instance took the search over, the server's first events are the
// current search's, which the page shows as they come.

import { GAMES, povSide } from './games/index.js';
import { Game } from './game.js';
import { UsidSocket } from './ws.js';
import { EvalBar, EvalGraph } from './evalgraph.js';
import { MoveList } from './movelist.js';
import { blackScore, formatCount, formatSeconds } from './notation.js';
import * as api from './api.js';
import { t } from './i18n.js';
import { playerLabel, resultText } from './matchwords.js';
import { $, escapeHtml, isTyping, loadSetting, saveSetting, settingScope, showErrors } from './dom.js';

// The board application's page of each game, for "Analyse on the board".
const BOARD_PAGE = { shogi: '/', chess: '/chess', othello: '/othello' };
const LEGEND = { shogi: 'graph.legend', chess: 'chess.graph.legend', othello: 'othello.graph.legend' };
const BAR_TITLE = { shogi: 'board.evalbar', chess: 'chess.evalbar', othello: 'othello.evalbar' };

const id = decodeURIComponent(location.pathname.split('/')[2] || '');
// A match's game: its index (/watch/{match}/{n}); null for a broadcast.
const matchGame = /^\d+$/.test(location.pathname.split('/')[3] || '') ? Number(location.pathname.split('/')[3]) : null;
// How often a match's game is read again while it is played.
const MATCH_POLL_MS = 700;

// WatchSocket is the viewers' read-only socket; stop ends it for good (the
// broadcast ended: no reconnecting).
class WatchSocket extends UsidSocket {
  stop() {
    this.stopped = true;
    clearTimeout(this.timer);
    const ws = this.ws;
    this.ws = null; // its close is then not a drop to retry
    ws?.close();
    this.setState('closed');
  }

  connectNow() { if (!this.stopped) super.connectNow(); }
}

const st = {
  status: 'loading', // loading | live | ended | notfound | error
  search: 0, // the search whose lines are shown
  ply: 0, // the position (moves played) it searches
  engine: '',
  viewers: null,
  lines: new Map(), // multipv -> info, scores turned to the first side's view
  stats: {},
  term: null, // the search's terminal event: bestmove | error | checkmate
};
// evals: ply -> {score (first side's view), depth, pv}: the graph, the bar
// and the line shown for a past move.
const evals = new Map();

let mod, game, board, bar, graph, moveList, sock;
let flipped = false;
let mg = null; // a match's game as last read (GET /v1/matches/{id}/games/{n})
let loadedRoot = null; // the broadcast's start position as it last came (the game keeps usid's canonical text)

function gameOf(position) {
  for (const m of Object.values(GAMES)) if (position && typeof position[m.field] === 'string') return m;
  return null;
}

// turnAt is the side to move after ply moves, as the page keeps scores.
function turnAt(ply) {
  const pos = game.positions[ply];
  return povSide(mod, pos ? pos.turn : mod.firstSide);
}

function setStatus(status) {
  st.status = status;
  const el = $('#watch-status');
  el.dataset.state = status;
  if (matchGame !== null && mg) {
    const n = game ? game.length : 0;
    const text = {
      loading: t('watch.loading'),
      live: t('watch.match.live', { i: matchGame + 1, n }),
      ended: t('watch.match.ended', { i: matchGame + 1, n, result: resultText(mg.game, mg.players) }),
      notfound: t('watch.match.notfound'),
      error: t('watch.status.error'),
    }[status];
    el.textContent = text;
    const back = document.createElement('a');
    back.href = `/match/${id}`;
    back.className = 'small-link';
    back.dataset.testid = 'watch-match';
    back.textContent = t('watch.match.back');
    el.append(' · ', back);
    return;
  }
  const text = {
    loading: t('watch.loading'),
    live: t('watch.status.live', { n: game ? game.length : 0 }),
    ended: t('watch.status.ended', { n: game ? game.length : 0 }),
    notfound: t('watch.status.notfound'),
    error: t('watch.status.error'),
  }[status];
  el.textContent = text;
}

// --- the game -----------------------------------------------------------

// sync makes the page's game the broadcast's position: moves added to the
// game shown are appended (a viewer stepping back stays where they are),
// anything else (a take-back, a new game) is loaded afresh.
async function sync(position) {
  const root = position[mod.field];
  const moves = position.moves || [];
  const mine = game.mainLine().map((n) => n.move);
  if (root === loadedRoot && game.legalPosition && mine.length <= moves.length && mine.every((m, i) => m === moves[i])) {
    if (mine.length === moves.length) return;
    const live = game.cursor === game.length;
    const at = game.cursor;
    let n = game.mainLine().at(-1) || game.tree;
    for (const m of moves.slice(mine.length)) n = game.addChild(n, m);
    game.setLine(game.mainLine());
    game.cursor = live ? game.length : at;
    game.emit('line');
    game.refreshKif();
    return;
  }
  const keep = game.cursor === game.length;
  // The evaluations past the moves the new game shares with the old one
  // were of other positions.
  let same = 0;
  if (root === loadedRoot) while (same < mine.length && same < moves.length && mine[same] === moves[same]) same++;
  for (const p of [...evals.keys()]) if (p > same && loadedRoot !== null) evals.delete(p);
  const res = await game.load(root, moves);
  loadedRoot = root;
  if (!res.ok) showErrors($('#analysis-error'), res.errors, { title: t('err.refused') });
  if (keep) game.goto(game.length);
}

function show() {
  if (!game) return;
  const ply = game.cursor;
  board.setPosition(game.position, { lastMove: game.lastMove(), handicap: !!mod.isHandicap?.(game.root) });
  board.setLegal([]); // watching only: no moves
  moveList.setCurrent(game.node.id);
  $('#nav-first').disabled = $('#nav-prev').disabled = ply === 0;
  $('#nav-next').disabled = ply >= game.length;
  const live = $('#watch-live');
  live.disabled = ply === game.length;
  live.classList.toggle('behind', ply !== game.length);
  const open = $('#watch-open');
  open.href = `${BOARD_PAGE[mod.name]}#pos=${game.usi(game.length).replaceAll(' ', '_')}&ply=${ply}`;
  renderLines();
}

// --- the lines ----------------------------------------------------------

function onEvent(m) {
  if (m.id && m.id !== id) return;
  switch (m.type) {
    case 'position':
      st.search = m.search;
      st.ply = m.ply;
      st.engine = m.engine || st.engine;
      st.lines.clear();
      st.stats = {};
      st.term = null;
      showErrors($('#analysis-error'), []);
      return sync(m.position).then(() => { setStatus('live'); renderLines(); });
    case 'info':
      if (m.search !== st.search) return;
      onInfo(m);
      return;
    case 'bestmove':
    case 'checkmate':
    case 'error':
      if (m.search !== undefined && m.search !== st.search) return;
      st.term = m;
      renderLines();
      return;
    case 'ended':
      st.term = st.term || { type: 'ended' };
      sock.stop();
      setStatus('ended');
      renderLines();
      return;
  }
}

function onInfo(m) {
  const s = st.stats;
  for (const k of ['depth', 'seldepth', 'nodes', 'nps', 'time_ms', 'hashfull']) if (m[k] !== undefined) s[k] = m[k];
  if (Array.isArray(m.pv) && m.pv.length && m.score) {
    const mpv = m.multipv || 1;
    // A report cut short (the last one of a stopped search) often carries
    // only the start of the line given in full before: keep the full line.
    const old = st.lines.get(mpv);
    if (old && m.pv.length < old.pv.length && m.pv.every((mv, i) => mv === old.pv[i])) {
      m = { ...m, pv: old.pv };
      if (mod.pvField) m[mod.pvField] = old[mod.pvField];
    }
    const score = blackScore(m.score, turnAt(st.ply));
    st.lines.set(mpv, { ...m, blackScore: score });
    if (mpv === 1 && score) {
      const prev = evals.get(st.ply);
      if (!prev || prev.search !== st.search || (m.depth || 0) >= prev.depth || !m.bound) {
        evals.set(st.ply, { score, depth: m.depth || 0, pv: m.pv, notes: mod.pvField ? m[mod.pvField] : null, search: st.search });
      }
    }
  }
  renderSoon();
}

// notate asks usid once for the notation (KIF, SAN) of a past position's
// line that came without it (the evaluations of GET /v1/broadcasts/{id}).
function notate(ply, e) {
  if (e.asked) return;
  e.asked = true;
  const moves = [...game.moves.slice(0, ply), ...e.pv];
  game.verdictOf({ [mod.field]: game.root, moves }).then((v) => {
    const notes = v[mod.notationField];
    if (!v.valid || !Array.isArray(notes)) return;
    e.notes = notes.slice(ply);
    if (game.cursor === ply) renderLines();
  }, () => { e.asked = false; });
}

let frame = 0;
function renderSoon() {
  if (!frame) frame = requestAnimationFrame(() => { frame = 0; renderLines(); });
}

// renderLines draws what belongs to the shown position: the live search's
// lines at the live position, the last line searched at a past one.
function renderLines() {
  if (!game) return;
  const ply = game.cursor;
  const atLive = ply === game.length && ply === st.ply;
  let lines = [];
  let state;
  if (atLive) {
    lines = [...st.lines.values()].sort((a, b) => (a.multipv || 1) - (b.multipv || 1));
    if (st.status === 'ended') state = 'ended';
    else if (st.term?.type === 'error') state = st.term.code === 'engine_error' ? 'cut' : 'error';
    else if (st.term) state = 'done';
    else if (sock && !sock.open) state = 'connecting';
    else state = lines.length ? 'searching' : 'waiting';
  } else {
    const e = evals.get(ply);
    if (e && e.pv?.length) {
      lines = [{ multipv: 1, depth: e.depth, pv: e.pv, blackScore: e.score }];
      if (mod.pvField) {
        if (e.notes) lines[0][mod.pvField] = e.notes;
        else notate(ply, e);
      }
    }
    state = e ? 'past' : 'nopast';
  }
  if (mg) [state, st.engine] = matchState(ply, state);
  const status = $('#analysis-status');
  status.dataset.state = state === 'searching' || state === 'waiting' ? 'searching' : state;
  $('#state-text').textContent = {
    searching: t('watch.state.searching'),
    waiting: t('watch.state.waiting'),
    done: t('watch.state.done'),
    cut: t('watch.state.cut'),
    error: t('watch.state.error'),
    ended: t('watch.state.ended'),
    connecting: t('watch.state.connecting'),
    past: t('watch.state.past'),
    nopast: t('watch.state.nopast'),
    thinking: t('watch.match.thinking'),
    own: t('watch.match.own'),
    gameover: t('watch.match.over'),
  }[state];
  $('#engine-name').textContent = st.engine;
  const s = atLive ? st.stats : {};
  const parts = [];
  if (s.depth !== undefined) parts.push(t('stats.depth', { d: `${s.depth}${s.seldepth ? `/${s.seldepth}` : ''}` }));
  if (s.nodes !== undefined) parts.push(t('stats.nodes', { n: formatCount(s.nodes) }));
  if (s.nps !== undefined) parts.push(t('stats.nps', { n: formatCount(s.nps) }));
  if (s.time_ms !== undefined) parts.push(formatSeconds(s.time_ms));
  if (!atLive && lines.length && lines[0].depth) parts.push(t('stats.depth', { d: lines[0].depth }));
  $('#analysis-stats').textContent = parts.join(' · ');
  if (st.term?.type === 'error' && atLive && st.term.code !== 'engine_error') {
    showErrors($('#analysis-error'), [st.term], { title: t('err.analysis') });
  }

  const box = $('#pv-lines');
  box.dataset.search = String(st.search);
  box.dataset.ply = String(ply);
  box.dataset.live = String(atLive);
  if (!lines.length) {
    box.innerHTML = `<p class="hint">${escapeHtml(atLive && state !== 'ended' && state !== 'gameover' ? t('analysis.waiting') : t('watch.nolines'))}</p>`;
  } else {
    let html = '';
    const MARK = mod.mark;
    for (const l of lines) {
      const sc = l.blackScore;
      const cls = !sc ? '' : (sc.mate !== undefined ? (sc.winner === 'b' ? 'sente' : 'gote') : sc.cp > 0 ? 'sente' : sc.cp < 0 ? 'gote' : '');
      html += `<div class="pv-line" data-testid="pv-line" data-multipv="${l.multipv || 1}" data-depth="${l.depth ?? 0}">` +
        `<span class="pv-score ${cls}" data-testid="pv-score">${mod.formatScore(sc)}</span>` +
        `<span class="pv-depth">${l.depth ?? ''}</span><span class="pv-moves">`;
      let pos = game.position;
      l.pv.forEach((usi, j) => {
        const k = mod.moveText(mod.pvField && l[mod.pvField] && l[mod.pvField][j], usi, pos);
        try { pos = pos && mod.apply(pos, usi); } catch { pos = null; }
        html += `<span class="pv-move" data-testid="pv-move" data-index="${j}" data-usi="${escapeHtml(usi)}">${escapeHtml(`${MARK[k.side] || ''}${k.text}`)}</span>`;
      });
      html += '</span></div>';
    }
    box.innerHTML = html;
  }
  board.setArrows(lines.map((l, i) => ({ move: l.pv[0], rank: i })));

  const bm = atLive && st.term?.type === 'bestmove' ? st.term : null;
  const bmEl = $('#bestmove');
  if (bm && bm.move) {
    const k = mod.moveText(mod.notation ? bm[`move_${mod.notation}`] : '', bm.move, game.position);
    bmEl.hidden = false;
    bmEl.innerHTML = `${escapeHtml(t('analysis.bestmove'))} <strong>${mod.mark[k.side] || ''}${escapeHtml(k.text)}</strong>`;
  } else {
    bmEl.hidden = true;
  }

  bar.set(evals.get(ply)?.score || null);
  const pts = [];
  for (const [p, e] of evals) if (p <= game.length && e.score) pts.push({ ply: p, score: e.score });
  graph.draw({ points: pts, cursor: ply, total: game.length });
  if (st.status === 'live' || st.status === 'ended') setStatus(st.status);
}

// --- a match's game -----------------------------------------------------

// moverAt is the player (label) to move after ply moves of a match's game.
function moverAt(ply) {
  const pos = game.positions[ply];
  const p = pos && mg.game.sides ? mg.game.sides[pos.turn] : undefined;
  return p === undefined ? '' : `${p + 1}. ${playerLabel(mg.players[p])}`;
}

// matchState is what the lines panel says of ply in a match's game: the
// mover thinking (live), or the mover's own line; and the player it names.
function matchState(ply, state) {
  if (ply === game.length && mg.status === 'running' && !mg.game.reason) return ['thinking', moverAt(ply)];
  if (ply === game.length && !st.lines.size) return ['gameover', ''];
  if (state === 'past') return ['own', moverAt(ply)];
  return [state === 'ended' ? 'nopast' : state, moverAt(ply)];
}

// followMatch reads the match's game again until it ends, showing each
// new move with the mover's line.
async function followMatch() {
  for (;;) {
    await new Promise((r) => setTimeout(r, MATCH_POLL_MS));
    let v;
    try {
      v = await api.request('GET', `/v1/matches/${id}/games/${matchGame}`);
    } catch (e) {
      if (e.status === 404) { setStatus('notfound'); return; }
      $('#connection').hidden = false;
      $('#connection').dataset.state = 'waiting';
      $('#connection').textContent = t('conn.connecting');
      continue;
    }
    $('#connection').hidden = true;
    if (!(await showMatchGame(v))) return;
  }
}

// showMatchGame shows a read of the match's game; it reports whether the
// game goes on.
async function showMatchGame(v) {
  mg = v;
  await sync(v.game.position);
  for (const e of v.evals || []) {
    const score = blackScore(e.score, turnAt(e.ply));
    const old = evals.get(e.ply);
    if (score && !old?.pv?.length) evals.set(e.ply, { score, depth: e.depth || 0, pv: old?.pv || [] });
  }
  if (v.line) {
    const score = blackScore(v.line.score, turnAt(v.line.ply));
    if (score) evals.set(v.line.ply, { score, depth: v.line.depth || 0, pv: v.line.pv || [] });
  }
  st.ply = game.length;
  const goesOn = v.status === 'running' && !v.game.reason;
  setStatus(goesOn ? 'live' : 'ended');
  show();
  return goesOn;
}

async function startMatch() {
  let v;
  try {
    v = await api.request('GET', `/v1/matches/${id}/games/${matchGame}`);
  } catch (e) {
    $('#connection').hidden = true;
    setStatus(e.status === 404 ? 'notfound' : 'error');
    if (e.status !== 404) showErrors($('#analysis-error'), [{ code: e.code, message: e.message }], { title: t('err.unreachable') });
    return;
  }
  $('#connection').hidden = true;
  mg = v;
  setup(v.game.position);
  $('.watch-lines h2').textContent = t('watch.match.lines');
  $('.foot span').textContent = t('match.tagline');
  if (await showMatchGame(v)) followMatch();
  game.goto(game.length);
}

// --- navigation ---------------------------------------------------------

function flip() {
  flipped = !flipped;
  saveSetting('watchFlipped', flipped);
  board.setFlipped(flipped);
  bar.setFlipped(flipped);
}

function wire() {
  $('#nav-first').addEventListener('click', () => game.goto(0));
  $('#nav-prev').addEventListener('click', () => game.goto(game.cursor - 1));
  $('#nav-next').addEventListener('click', () => game.goto(game.cursor + 1));
  $('#watch-live').addEventListener('click', () => game.goto(game.length));
  $('#flip').addEventListener('click', flip);
  document.addEventListener('keydown', (e) => {
    if (isTyping(e) || e.altKey || e.ctrlKey || e.metaKey) return;
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
}

// --- start --------------------------------------------------------------

// setup makes the page's parts for position's game.
function setup(position) {
  mod = gameOf(position);
  if (!mod) { setStatus('error'); return false; }
  document.body.dataset.game = mod.name;
  document.body.classList.add(`page-${mod.name}`);
  settingScope(mod.scope);
  $('#notation').hidden = mod.name !== 'shogi';
  $('#graph-legend').textContent = t(LEGEND[mod.name]);
  $('#eval-bar').title = t(BAR_TITLE[mod.name]);
  game = new Game(mod);
  board = new mod.Board($('#board'), { interactive: false, onMove: () => {} });
  bar = new EvalBar($('#eval-bar'), mod);
  graph = new EvalGraph($('#eval-graph'), (ply) => game.goto(ply), mod);
  moveList = new MoveList($('#move-list'), (nid) => (nid === 0 ? game.goto(0) : game.select(nid)), mod);
  flipped = loadSetting('watchFlipped', false);
  board.setFlipped(flipped);
  bar.setFlipped(flipped);
  game.addEventListener('change', (e) => {
    if (e.detail.what !== 'cursor') {
      moveList.render(game);
    }
    show();
  });
  wire();
  return true;
}

async function start() {
  if (matchGame !== null) return startMatch();
  let view;
  try {
    if (!/^[0-9a-f]{32}$/.test(id)) throw new api.ApiError(404, { code: 'not_found' });
    view = await api.request('GET', `/v1/broadcasts/${id}`);
  } catch (e) {
    $('#connection').hidden = true;
    setStatus(e.status === 404 ? 'notfound' : 'error');
    if (e.status !== 404) showErrors($('#analysis-error'), [{ code: e.code, message: e.message }], { title: t('err.unreachable') });
    return;
  }
  if (!setup(view.position)) return;

  await sync(view.position);
  game.goto(game.length);
  for (const e of view.evals || []) {
    const score = blackScore(e.score, turnAt(e.ply));
    if (score) evals.set(e.ply, { score, depth: e.depth || 0, pv: e.pv || [] });
  }
  st.search = view.search;
  st.ply = view.ply;
  st.engine = view.engine;
  for (const l of view.lines || []) onInfo({ ...l, search: view.search });
  moveList.render(game);
  show();
  if (view.status === 'ended') {
    st.term = { type: 'ended' };
    $('#connection').hidden = true;
    setStatus('ended');
    renderLines();
    return;
  }
  setStatus('live');

  sock = new WatchSocket(`/v1/broadcasts/${id}/ws`);
  // Events are taken one at a time: a new position may need usid's word
  // (a game loaded afresh) before the lines that follow it are shown.
  let queue = Promise.resolve();
  sock.addEventListener('message', (e) => {
    // The end stops the socket at once: its close that follows is no drop to retry.
    if (e.detail.type === 'ended') sock.stop();
    queue = queue.then(() => onEvent(e.detail)).catch((err) => console.warn('watch:', err));
  });
  sock.addEventListener('state', (e) => {
    const { state, retryIn } = e.detail;
    const c = $('#connection');
    c.dataset.state = state;
    c.hidden = state === 'closed';
    c.textContent = state === 'open' ? t('conn.open') : state === 'waiting'
      ? t('conn.retry', { s: Math.max(1, Math.round(retryIn / 1000)) }) : t('conn.connecting');
    renderLines();
  });
  // A drop: the broadcast may have ended meanwhile (its socket is then
  // refused); if so, say so rather than retry for ever.
  sock.addEventListener('close', async () => {
    try {
      const v = await api.request('GET', `/v1/broadcasts/${id}`);
      if (v.status !== 'ended') return;
    } catch (err) {
      if (err.status !== 404) return;
    }
    queue = queue.then(() => onEvent({ type: 'ended', id }));
  });
  sock.connect();
}

start();
