// The chess analysis board (/chess): a game (a FEN and UCI moves, from a
// pasted or opened PGN or FEN, or moves played on the board), stepped
// through with SAN; a UCI engine's lines, arrows and evaluation bar (from
// White's side) for the shown position, live over the WebSocket. Every
// position and move is checked by usid (/v1/validate, with fen).

import { $, showErrors, toast } from './dom.js';
import { request } from './api.js';
import { UsidSocket } from './ws.js';
import { EvalBar } from './evalgraph.js';
import { ChessBoard } from './chessboard.js';
import { t } from './i18n.js';

const game = { fen: 'startpos', moves: [], san: [], cursor: 0, info: '' };
const view = { fen: '', legal: [], turn: 'w', terminal: false };
const analysis = { on: false, live: null, seq: 0, lines: {} };
const sock = new UsidSocket();
const bar = new EvalBar($('#eval-bar'));
const board = new ChessBoard($('#board'), playMove);
const errorBox = $('#error');
const analysisError = $('#analysis-error');

async function validate(moves) {
  return request('POST', '/v1/validate', { position: { fen: game.fen, moves }, notation: 'san' });
}

// show draws the position after cursor moves and restarts the analysis.
async function show() {
  const moves = game.moves.slice(0, game.cursor);
  let v;
  try { v = await validate(moves); } catch (e) { showErrors(errorBox, [{ code: e.code, message: e.message }]); return; }
  if (!v.valid) { showErrors(errorBox, v.errors); return; }
  showErrors(errorBox, []);
  view.fen = v.fen;
  view.legal = v.legal_moves;
  view.turn = v.side_to_move;
  view.terminal = v.checkmate || v.stalemate;
  board.set(v.fen, v.legal_moves, moves[moves.length - 1]);
  $('#fen-out').value = v.fen;
  const term = $('#terminal');
  term.hidden = !view.terminal;
  term.textContent = v.checkmate ? t('chess.checkmate') : v.stalemate ? t('chess.stalemate') : '';
  drawMoves();
  analysis.lines = {};
  drawLines();
  if (analysis.on) startAnalysis();
}

async function playMove(m) {
  game.moves = game.moves.slice(0, game.cursor).concat([m]);
  game.cursor = game.moves.length;
  await refreshSAN();
  show();
}

async function refreshSAN() {
  try {
    const v = await validate(game.moves);
    game.san = v.moves_san || [];
  } catch { game.san = game.moves.slice(); }
}

function drawMoves() {
  const list = $('#move-list');
  const items = [];
  game.moves.forEach((m, i) => {
    const li = document.createElement('li');
    li.className = 'move' + (i + 1 === game.cursor ? ' current' : '');
    li.dataset.ply = i + 1;
    const num = i % 2 === 0 ? `${Math.floor(i / 2) + 1}. ` : '';
    li.textContent = num + (game.san[i] || m);
    li.addEventListener('click', () => { game.cursor = i + 1; show(); });
    items.push(li);
  });
  list.replaceChildren(...items);
  const info = $('#record-info');
  info.hidden = !game.info;
  info.textContent = game.info;
}

// whiteScore turns a side-to-move score into White's view.
function whiteScore(s) {
  if (!s) return null;
  const sign = view.turn === 'w' ? 1 : -1;
  return s.mate !== undefined ? { mate: sign * s.mate } : { cp: sign * s.cp };
}

function scoreText(s) {
  if (!s) return '';
  if (s.mate !== undefined) return `#${s.mate}`;
  return (s.cp > 0 ? '+' : '') + (s.cp / 100).toFixed(2);
}

function drawLines() {
  const box = $('#pv-lines');
  const ks = Object.keys(analysis.lines).map(Number).sort((a, b) => a - b);
  if (ks.length === 0) {
    box.innerHTML = '';
    board.showArrows([]);
    bar.set(null);
    return;
  }
  const rows = ks.map((k) => {
    const l = analysis.lines[k];
    const ws = whiteScore(l.score);
    const row = document.createElement('div');
    row.className = 'pv-line';
    row.dataset.testid = 'pv-line';
    const sc = document.createElement('span');
    sc.className = 'pv-score ' + (ws && (ws.mate ?? ws.cp) >= 0 ? 'white' : 'black');
    sc.textContent = scoreText(ws);
    const d = document.createElement('span');
    d.className = 'pv-depth';
    d.textContent = l.depth || '';
    const mv = document.createElement('span');
    mv.className = 'pv-moves';
    mv.textContent = (l.pv_san || l.pv || []).join(' ');
    row.append(sc, d, mv);
    return row;
  });
  box.replaceChildren(...rows);
  board.showArrows(ks.map((k) => (analysis.lines[k].pv || [])[0]));
  bar.set(whiteScore(analysis.lines[ks[0]].score));
}

function setState(key) {
  $('#analysis-status').dataset.state = key;
  $('#state-text').textContent = t(`state.${key}`);
}

function startAnalysis() {
  if (view.terminal) { setState('idle'); return; }
  if (analysis.live) sock.send({ type: 'stop', id: analysis.live });
  const id = `c${++analysis.seq}`;
  analysis.live = id;
  analysis.lines = {};
  const msg = { type: 'analyze', id, position: { fen: game.fen, moves: game.moves.slice(0, game.cursor) },
    multipv: Number($('#multipv').value), notation: 'san' };
  if ($('#engine').value) msg.engine = $('#engine').value;
  if (sock.send(msg)) setState('starting');
  else setState('connecting');
}

function stopAnalysis() {
  if (analysis.live) sock.send({ type: 'stop', id: analysis.live });
  setState('stopping');
}

$('#analyze').addEventListener('click', () => {
  analysis.on = !analysis.on;
  $('#analyze').setAttribute('aria-pressed', String(analysis.on));
  $('#analyze').textContent = t(analysis.on ? 'analysis.stop' : 'analysis.start');
  if (analysis.on) startAnalysis(); else stopAnalysis();
});
$('#multipv').addEventListener('change', () => { if (analysis.on) startAnalysis(); });
$('#engine').addEventListener('change', () => { if (analysis.on) startAnalysis(); });

sock.addEventListener('open', () => { if (analysis.on) startAnalysis(); });
sock.addEventListener('state', (e) => {
  const { state, retryIn } = e.detail;
  const c = $('#connection');
  c.dataset.state = state;
  c.textContent = state === 'open' ? t('conn.open') : state === 'waiting'
    ? t('conn.retry', { s: Math.max(1, Math.round(retryIn / 1000)) }) : t('conn.connecting');
});
sock.addEventListener('message', (e) => {
  const m = e.detail;
  if (!m.id || m.id !== analysis.live) return;
  switch (m.type) {
    case 'queued': setState('queued'); break;
    case 'engine': setState('searching'); break;
    case 'info':
      if (m.pv && m.score) {
        if ($('#analysis-status').dataset.state !== 'searching') setState('searching');
        analysis.lines[m.multipv || 1] = m;
        drawLines();
        $('#analysis-stats').textContent = t('chess.stats', { depth: m.depth || 0, nodes: (m.nodes || 0).toLocaleString() });
      }
      break;
    case 'bestmove': analysis.live = null; setState(analysis.on ? 'done' : 'stopped'); break;
    case 'error':
      analysis.live = null;
      setState('error');
      showErrors(analysisError, [m], { title: t('err.usid') });
      break;
  }
});

// load reads a PGN (through /v1/records/parse) or a FEN.
async function load(text) {
  text = text.trim();
  if (!text) return;
  try {
    const looksFEN = /^([1-8pnbrqkPNBRQK]+\/){7}[1-8pnbrqkPNBRQK]+\s+[wb]\b/.test(text);
    if (looksFEN) {
      game.fen = text; game.moves = []; game.info = '';
    } else {
      const r = await request('POST', '/v1/records/parse', { record: text, format: 'pgn' });
      game.fen = r.position.fen; game.moves = r.position.moves;
      const who = [r.header.white, r.header.black].filter(Boolean).join(' – ');
      game.info = [who, r.end].filter(Boolean).join(' ');
      toast(t('chess.loaded', { n: game.moves.length }));
    }
    game.cursor = game.moves.length;
    await refreshSAN();
    await show();
  } catch (e) {
    showErrors(errorBox, [{ code: e.code, message: e.message, line: e.line }]);
  }
}

$('#load-form').addEventListener('submit', (e) => { e.preventDefault(); load($('#position-input').value); });
$('#open-file').addEventListener('click', () => $('#record-file').click());
$('#record-file').addEventListener('change', async () => {
  const f = $('#record-file').files[0];
  if (f) load(await f.text());
});
$('#reset').addEventListener('click', () => { Object.assign(game, { fen: 'startpos', moves: [], san: [], cursor: 0, info: '' }); show(); });
$('#nav-first').addEventListener('click', () => { game.cursor = 0; show(); });
$('#nav-prev').addEventListener('click', () => { game.cursor = Math.max(0, game.cursor - 1); show(); });
$('#nav-next').addEventListener('click', () => { game.cursor = Math.min(game.moves.length, game.cursor + 1); show(); });
$('#nav-last').addEventListener('click', () => { game.cursor = game.moves.length; show(); });
$('#flip').addEventListener('click', () => { board.setFlipped(!board.flipped); bar.setFlipped(board.flipped); drawLines(); });

// The chess engines: those whose profile says they speak UCI.
async function loadEngines() {
  const sel = $('#engine');
  try {
    const d = await request('GET', '/v1/engines');
    const chess = (d.engines || []).filter((e) => e.profile && e.profile.protocol === 'uci');
    sel.replaceChildren(...chess.map((e) => new Option(e.name, e.name)));
    if (chess.length === 0) sel.replaceChildren(new Option(t('chess.noengine'), ''));
  } catch (e) {
    showErrors(analysisError, [{ code: e.code, message: e.message }]);
  }
}

loadEngines();
sock.connect();
show();
