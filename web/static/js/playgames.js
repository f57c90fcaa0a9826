// The player's games in progress (GET /v1/play/games), in the play panel:
// games of closed tabs and reloads hold the client's slots (two at most)
// with their clocks running until their grace runs out, so the panel lists
// every game but the one this tab shows, to resume (here, or on its game's
// page) or resign each.

import { t } from './i18n.js';
import { $, escapeHtml, twoStep } from './dom.js';
import { errorText } from './errwords.js';
import * as api from './api.js';

// Where each game's page is, and the key its play panel keeps the game's
// id under in sessionStorage (play.js: shogi's under the old name).
const PAGES = { shogi: '/', chess: '/chess', othello: '/othello' };
const NAMES = { shogi: 'play.games.shogi', chess: 'play.games.chess', othello: 'play.games.othello' };
export const playKey = (scope) => (scope ? `usid.play.${scope}` : 'usid.play');

// sideKey names side s ("b", "w") in game rules' words.
const sideKey = (rules, s) => (rules === 'shogi' ? (s === 'b' ? 'side.sente' : 'side.gote') : (s === 'b' ? 'side.black' : 'side.white'));

export class GamesInProgress {
  // deps: sock, mod (the page's game), current() (this tab's game id, or
  // ''), busy() (this tab plays or starts a game: no resume here),
  // resume(id) (the play panel takes the game up).
  constructor(root, deps) {
    Object.assign(this, deps);
    this.root = root;
    this.list = [];
    this.seq = 0;
    this.pending = new Map(); // request id -> {game, step}
    this.sock.addEventListener('message', (e) => this.onMessage(e.detail));
    this.sock.addEventListener('open', () => this.refresh());
    document.addEventListener('visibilitychange', () => { if (!document.hidden) this.refresh(); });
  }

  // refresh reads the list again; a server without games against the
  // engine (404), or one out of reach, lists nothing.
  async refresh() {
    try {
      this.list = (await api.request('GET', '/v1/play/games')).games || [];
    } catch {
      this.list = [];
    }
    this.render();
  }

  render() {
    const others = this.list.filter((g) => g.game !== this.current());
    this.root.hidden = !others.length;
    this.root.dataset.count = String(others.length);
    const ul = $('#play-games-list', this.root);
    ul.innerHTML = '';
    for (const g of others) {
      const li = document.createElement('li');
      li.dataset.game = g.game;
      li.dataset.testid = 'play-game';
      const turn = t(g.turn === g.human ? 'play.games.yourturn' : 'play.games.engineturn');
      li.innerHTML = `<span class="what">${escapeHtml(t('play.games.item', {
        game: NAMES[g.rules] ? t(NAMES[g.rules]) : g.rules, engine: g.engine, side: t(sideKey(g.rules, g.human)), n: g.plies,
      }))} · ${escapeHtml(turn)}</span><span class="row"></span>`;
      const row = $('.row', li);
      if (PAGES[g.rules] && !this.busy()) {
        const b = document.createElement('button');
        b.type = 'button';
        b.dataset.testid = 'play-game-resume';
        b.dataset.i18n = 'play.games.resume';
        b.textContent = t(b.dataset.i18n);
        b.addEventListener('click', () => this.resumeGame(g));
        row.append(b);
      }
      const r = document.createElement('button');
      r.type = 'button';
      r.dataset.testid = 'play-game-resign';
      r.dataset.i18n = 'play.games.resign';
      r.textContent = t(r.dataset.i18n);
      twoStep(r, () => this.resign(g.game));
      row.append(r);
      ul.append(li);
    }
  }

  // resumeGame takes g up: here when it is this page's game, else on its
  // game's page (which resumes the game its tab remembers).
  resumeGame(g) {
    if (g.rules === this.mod.name) { this.resume(g.game); return; }
    try { sessionStorage.setItem(playKey(g.rules === 'shogi' ? '' : g.rules), g.game); } catch { /* private mode */ }
    location.assign(PAGES[g.rules]);
  }

  // resign resigns a game by its id; a game another instance drives
  // (not_found here) is taken over first (play_resume), then resigned.
  resign(game) {
    const id = `pl-${++this.seq}`;
    this.pending.set(id, { game, step: 'resign' });
    this.error('');
    this.sock.send({ type: 'play_resign', id, game });
  }

  onMessage(m) {
    const p = m.id && this.pending.get(m.id);
    if (!p) return;
    if (m.type === 'error') {
      if (p.step === 'resign' && m.code === 'not_found') {
        p.step = 'resume';
        this.sock.send({ type: 'play_resume', id: m.id, game: p.game });
        return;
      }
      this.pending.delete(m.id);
      this.error(errorText(m));
      this.refresh();
      return;
    }
    if (m.type !== 'play' || !m.play) return;
    if (m.play.status === 'ended') {
      this.pending.delete(m.id);
      this.refresh();
    } else if (p.step === 'resume') {
      p.step = 'resigning';
      this.sock.send({ type: 'play_resign', id: `pl-${++this.seq}`, game: p.game });
    }
  }

  error(text) {
    const box = $('#play-games-error', this.root);
    box.hidden = !text;
    box.textContent = text;
  }
}
