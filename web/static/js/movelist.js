// The move list in the game's notation: "1 ☗７六歩" (or "1. e4", "1 ●f5"), the main line (the game)
// in two columns, each variation inline under the move it replaces, and
// under a move an analysis judged its mark (?!, ?, ??) and the best
// alternative. A record's annotations show beside their move: its NAGs as
// glyphs (e4!?, ±) and, where the game's module says so (chess, as
// lichess does), its comments, in the main line under the move and inline
// in a variation. Click an entry to jump to it.

import { shogi } from './games/shogi.js';
import { escapeHtml } from './dom.js';
import { t as tr } from './i18n.js';

export const GLYPH = { inaccuracy: '?!', mistake: '?', blunder: '??' };

// NAG_GLYPH: the glyphs of PGN's NAGs (the standard's table; lichess's
// symbols), with the word a reader hears (title); a NAG without one shows
// as $n. NAG_CLASS colours the move NAGs as the judgements are.
export const NAG_GLYPH = {
  1: '!', 2: '?', 3: '!!', 4: '??', 5: '!?', 6: '?!', 7: '□', 10: '=', 13: '∞', 14: '⩲', 15: '⩱', 16: '±', 17: '∓', 18: '+−', 19: '−+',
  22: '⨀', 23: '⨀', 32: '⟳', 33: '⟳', 36: '→', 37: '→', 40: '↑', 41: '↑', 132: '⇆', 133: '⇆', 140: '∆', 146: 'N',
};
const NAG_CLASS = { 1: 'good', 2: 'mistake', 3: 'brilliant', 4: 'blunder', 5: 'interesting', 6: 'inaccuracy' };

// nagsHtml writes a move's NAGs as glyphs.
export function nagsHtml(nags) {
  return (nags || []).map((n) => `<span class="nag ${NAG_CLASS[n] || 'pos'}" data-testid="nag" data-nag="${n}">${escapeHtml(NAG_GLYPH[n] || `$${n}`)}</span>`).join('');
}

export class MoveList {
  // onPick(id) is called with the tree node id of the clicked entry (0:
  // the start).
  constructor(ol, onPick, mod = shogi) {
    this.ol = ol;
    this.mod = mod;
    ol.addEventListener('click', (e) => {
      const li = e.target.closest('[data-node]');
      if (li) onPick(Number(li.dataset.node));
    });
  }

  // render draws the whole list from a Game. annotate(node), when given,
  // returns {judgement, best} for a move an analysis judged (best: the
  // better move's KIF, or '').
  render(game, annotate = () => null) {
    const mod = this.mod;
    const MARK = mod.mark;
    const turn0 = game.positions[0].turn;
    const sideOf = (ply) => ((ply % 2 === 1) === (turn0 === 'b') ? 'b' : 'w'); // the side that plays move number ply
    const text = (n, before) => mod.moveText(n.kif, n.move, before);
    // after is the position after n's move (null if it cannot be worked out).
    const after = (before, n) => { try { return before && mod.apply(before, n.move); } catch { return null; } };
    const shown = new Set(game.line.map((n) => n.id));
    const comments = !!mod.commentsInList;
    let html = `<li class="start" data-testid="move-start" data-ply="0" data-node="0">${escapeHtml(tr('moves.start'))}</li>`;
    let col = 0; // grid column the next move falls in (0 left, 1 right)
    const full = (inner) => { html += inner; col = 0; };
    // commentRow is a comment under its move (node id), the width of the list.
    const commentRow = (text, id) => full(`<li class="comment" data-testid="comment" data-node="${id}">${escapeHtml(text)}</li>`);
    if (comments && game.record?.comment) commentRow(game.record.comment, 0);

    // inline writes a variation from n on, with its own variations in
    // parentheses.
    const inline = (n, ply, start) => {
      let out = '';
      let before = start;
      let resume = false; // after a comment or a sub-variation, a move says its number again
      for (let p = n, k = ply, first = true; p; p = p.children[0], k++, first = false) {
        const t = text(p, before);
        const here = before;
        before = after(before, p);
        const side = sideOf(k);
        // A variation's first move says its number even when the second side plays it ("4… dxe5").
        const label = mod.moveNumber(k, turn0) || ((first || resume) && mod.continuedNumber ? mod.continuedNumber(k, turn0) : '');
        const num = (first || resume || side === mod.firstSide) && label ? `<span class="num">${label}</span>` : '';
        resume = false;
        const a = annotate(p, here);
        const g = a && a.judgement ? `<span class="glyph ${a.judgement}">${GLYPH[a.judgement]}</span>` : '';
        if (first && comments && p.before) out += `<span class="vcomment" data-testid="var-comment">${escapeHtml(p.before)}</span> `;
        out += `<span class="vmove ${side}${shown.has(p.id) ? ' shown' : ''}" data-testid="var-move" data-node="${p.id}" data-ply="${k}" data-usi="${escapeHtml(p.move)}">` +
          `${num}${MARK[side]}${escapeHtml(t.text)}${nagsHtml(p.nags)}${g}</span> `;
        if (comments && p.comment) {
          out += `<span class="vcomment" data-testid="var-comment" data-node="${p.id}">${escapeHtml(p.comment)}</span> `;
          resume = true;
        }
        for (const alt of p.parent.children.slice(1)) {
          if (p.parent.children[0] === p) {
            out += `<span class="sub">(${inline(alt, k, here)})</span> `;
            resume = true;
          }
        }
      }
      return out.trim();
    };

    let pos = game.positions[0];
    game.mainLine().forEach((n, i) => {
      const ply = i + 1;
      const before = pos;
      pos = after(pos, n);
      const side = sideOf(ply);
      const want = side === turn0 ? 0 : 1;
      if (col !== want) html += '<li class="gap" aria-hidden="true">…</li>';
      const t = text(n, before);
      const a = annotate(n, before);
      const j = a && a.judgement;
      html += `<li data-testid="move" data-ply="${ply}" data-node="${n.id}" data-usi="${escapeHtml(n.move)}" class="${side}${j ? ` judged ${j}` : ''}"` +
        `${j ? ` data-judgement="${j}"` : ''}>` +
        `<span class="num">${mod.moveNumber(ply, turn0)}</span><span class="mark">${MARK[side]}</span>` +
        `<span class="mv">${escapeHtml(t.text)}</span>${nagsHtml(n.nags)}` +
        (t.origin ? `<span class="origin">${t.origin}</span>` : '') +
        (j ? `<span class="glyph ${j}" title="${escapeHtml(tr(`judge.${j}`))}">${GLYPH[j]}</span>` : '') + '</li>';
      col = 1 - want;
      if (j) {
        full(`<li class="note ${j}" data-testid="judgement-note" data-ply="${ply}" data-node="${n.id}">` +
          `<span class="glyph ${j}">${GLYPH[j]}</span> ${escapeHtml(tr(`judge.${j}`))}` +
          (a.best ? ` — ${escapeHtml(tr('judge.bestwas'))} <span class="best" data-testid="best-move">${escapeHtml(a.best)}</span>` : '') + '</li>');
      }
      if (comments && n.comment) commentRow(n.comment, n.id);
      const alts = n.parent.children.slice(1);
      if (alts.length) {
        full('<li class="variations" data-testid="variations">' +
          alts.map((v) => `<div class="variation" data-testid="variation">${inline(v, ply, before)}</div>`).join('') + '</li>');
      }
    });
    const end = game.record?.end;
    if (end && mod.endText) {
      const n = game.mainLine().length;
      full(`<li class="result" data-testid="game-result" data-end="${escapeHtml(end)}">${escapeHtml(tr('result.after', { n, what: mod.endText(end) }))}</li>`);
    } else if (end) {
      // How the game ended, as a KIF says it: "まで76手で先手の勝ち".
      const n = game.mainLine().length;
      const toMove = sideOf(n + 1);
      const other = toMove === 'b' ? 'w' : 'b';
      const winner = ['declare_win', 'illegal_win'].includes(end) ? toMove : other;
      const loser = winner === toMove ? other : toMove;
      const names = mod.sideKeys(mod.isHandicap(game.root));
      const name = (s) => tr(names[s]);
      const what = tr(`result.${end}`, { winner: name(winner), loser: name(loser) });
      full(`<li class="result" data-testid="game-result" data-end="${escapeHtml(end)}">${escapeHtml(tr('result.after', { n, what }))}</li>`);
    }
    this.ol.innerHTML = html;
  }

  // setCurrent marks the entry of the shown node (id; 0 for the start).
  setCurrent(id) {
    for (const el of this.ol.querySelectorAll('.current')) {
      el.classList.remove('current');
      el.removeAttribute('aria-current');
    }
    const el = this.ol.querySelector(`[data-testid="move"][data-node="${id}"], [data-testid="var-move"][data-node="${id}"], [data-node="${id}"].start`);
    if (!el) return;
    el.classList.add('current');
    el.setAttribute('aria-current', 'step');
    // Keep the current move in view inside the list without scrolling the page.
    const box = this.ol;
    const li = el.closest('li');
    const top = li.offsetTop; // the list is position: relative
    if (top < box.scrollTop) box.scrollTop = top;
    else if (top + li.offsetHeight > box.scrollTop + box.clientHeight) box.scrollTop = top + li.offsetHeight - box.clientHeight;
  }
}
