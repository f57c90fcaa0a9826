// The page of an engine match (/match/{id}): the players, the score from
// the first player's side with the pentanomial pairs, the Elo with its
// interval and LOS, the SPRT's LLR between its bounds and its decision,
// and every game with its watch page (live while it is played) and its
// record once it ended. GET /v1/matches/{id} is read again while the
// match is queued or running.

import * as api from './api.js';
import { t } from './i18n.js';
import { playerLabel, resultText } from './matchwords.js';
import { $, showErrors } from './dom.js';

const id = decodeURIComponent(location.pathname.split('/')[2] || '');
// How often the match is read again while it is played.
const POLL_MS = 1000;
const RECORD_EXT = { kif: 'kif', csa: 'csa', pgn: 'pgn' };

const num = (x, digits = 1) => (x === null || x === undefined ? '–' : x.toFixed(digits));
// signed is an Elo figure; null is infinite, its sign the score's (inf
// is the sign of a score of all wins, or of all losses).
const signed = (x, inf, digits = 1) => (x === null || x === undefined ? `${inf < 0 ? '−' : '+'}∞` : `${x > 0 ? '+' : ''}${x.toFixed(digits)}`);

function cells(sel, values) {
  for (const [k, v] of Object.entries(values)) {
    const el = $(`${sel} [data-k="${k}"]`);
    if (el) el.textContent = v;
  }
}

function renderHead(m) {
  const el = $('#match-status');
  el.dataset.state = m.status;
  const done = m.games.filter((g) => 'winner' in g).length;
  el.textContent = t(`match.status.${m.status}`, { done, planned: m.planned, game: t(`match.game.${m.game}`) });
  const ol = $('#match-players');
  if (ol.childElementCount !== m.players.length) {
    ol.replaceChildren(...m.players.map((p) => {
      const li = document.createElement('li');
      li.textContent = playerLabel(p);
      return li;
    }));
  }
}

function renderScore(m) {
  const s = m.score;
  const played = s.wins + s.draws + s.losses;
  cells('#match-score', {
    wins: s.wins, draws: s.draws, losses: s.losses, played,
    points: played ? `${((s.wins + s.draws / 2) / played * 100).toFixed(1)}%` : '–',
  });
  const pairs = m.pairs || [0, 0, 0, 0, 0];
  $('#match-pairs tbody').replaceChildren(row(pairs.map(String)));
}

function row(values) {
  const tr = document.createElement('tr');
  for (const v of values) {
    const td = document.createElement('td');
    if (v instanceof Node) td.append(v); else td.textContent = v;
    tr.append(td);
  }
  return tr;
}

function renderElo(m) {
  const e = m.elo;
  const inf = m.score.wins - m.score.losses;
  cells('#match-elo', e ? {
    value: signed(e.value, inf),
    ci: `[${signed(e.ci95[0], inf)}, ${signed(e.ci95[1], inf)}]`,
    los: `${(e.los * 100).toFixed(1)}%`,
    nelo: e.nelo === undefined ? '–' : signed(e.nelo, inf),
  } : { value: '–', ci: '–', los: '–', nelo: '–' });
  $('#match-elo').dataset.model = e ? e.model : '';
  const s = m.sprt;
  const box = $('#match-sprt');
  box.hidden = !s;
  if (!s) return;
  box.dataset.decision = s.decision || '';
  cells('#match-sprt', {
    llr: num(s.llr, 2),
    bounds: `[${num(s.lower, 2)}, ${num(s.upper, 2)}]`,
    hyp: t('match.sprt.hyps', { elo0: s.elo0, elo1: s.elo1, alpha: s.alpha, beta: s.beta }),
    decision: s.decision ? t(`match.sprt.${s.decision}`) : t('match.sprt.none'),
  });
  // The mark's place between the bounds (0 in the middle when they are symmetric).
  const at = (x) => `${Math.min(100, Math.max(0, (x - s.lower) / (s.upper - s.lower) * 100))}%`;
  box.querySelector('.sprt-mark').style.left = at(s.llr);
  box.querySelector('.sprt-zero').style.left = at(0);
}

function link(href, text, testid) {
  const a = document.createElement('a');
  a.href = href;
  a.textContent = text;
  a.dataset.testid = testid;
  return a;
}

// recordLink is a download of an ended game's record (its first format).
function recordLink(g) {
  const [fmt, text] = Object.entries(g.record || {}).find(([, v]) => typeof v === 'string') || [];
  if (!fmt) return null;
  const a = link(URL.createObjectURL(new Blob([text], { type: 'text/plain' })), t('match.g.record'), 'match-record');
  a.download = `match-${id}-${g.index + 1}.${RECORD_EXT[fmt] || 'txt'}`;
  return a;
}

let urls = [];
function renderGames(m) {
  for (const u of urls) URL.revokeObjectURL(u);
  urls = [];
  const rows = m.games.map((g) => {
    const ended = 'winner' in g;
    const links = document.createElement('span');
    links.append(link(g.watch, ended ? t('match.g.replay') : t('match.g.watch'), 'match-watch'));
    const rec = ended && recordLink(g);
    if (rec) { urls.push(rec.href); links.append(rec); }
    const first = m.players[g.first];
    const tr = row([String(g.index + 1), `${g.first + 1}. ${first ? first.engine : ''}`,
      ended ? resultText(g, m.players) : t('match.g.playing'), String(g.position.moves.length), links]);
    tr.dataset.state = ended ? 'ended' : 'playing';
    tr.dataset.testid = 'match-game';
    if (ended) tr.title = g.detail || '';
    return tr;
  });
  $('#match-games tbody').replaceChildren(...rows);
}

let last = '';
function render(m) {
  const key = JSON.stringify(m);
  if (key === last) return;
  last = key;
  renderHead(m);
  renderScore(m);
  renderElo(m);
  renderGames(m);
}

async function start() {
  for (;;) {
    let m;
    try {
      if (!/^[0-9a-f]{24}$/.test(id)) throw new api.ApiError(404, { code: 'not_found' });
      m = await api.request('GET', `/v1/matches/${id}`);
    } catch (e) {
      if (e.status === 404) {
        $('#match-status').dataset.state = 'notfound';
        $('#match-status').textContent = t('match.notfound');
        return;
      }
      showErrors($('#match-error'), [{ code: e.code, message: e.message }], { title: t('err.unreachable') });
      await new Promise((r) => setTimeout(r, POLL_MS * 3));
      continue;
    }
    showErrors($('#match-error'), m.error ? [m.error] : [], { title: t('match.failed') });
    render(m);
    if (m.status !== 'queued' && m.status !== 'running') return;
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}

start();
