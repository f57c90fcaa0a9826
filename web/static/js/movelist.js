// The move list in Japanese notation: "1 ☗７六歩", one entry per move, with
// the KIF origin square dimmed. Click an entry to jump to it.

import { splitKif, MARK } from './notation.js';
import { escapeHtml } from './dom.js';

export class MoveList {
  constructor(ol, onPick) {
    this.ol = ol;
    ol.addEventListener('click', (e) => {
      const li = e.target.closest('[data-ply]');
      if (li) onPick(Number(li.dataset.ply));
    });
  }

  // render draws the whole list. moves are USI (shown until the KIF
  // arrives), kif the matching KIF strings, turn0 the side to move at ply 0.
  render(moves, kif, turn0, firstNumber = 1) {
    let html = '<li class="start" data-testid="move-start" data-ply="0">開始局面 <small>start</small></li>';
    moves.forEach((usi, i) => {
      const side = (i % 2 === 0) === (turn0 === 'b') ? 'b' : 'w';
      const k = kif[i] ? splitKif(kif[i]) : { text: usi, origin: '' };
      html += `<li data-testid="move" data-ply="${i + 1}" data-usi="${escapeHtml(usi)}" class="${side}">` +
        `<span class="num">${firstNumber + i}</span><span class="mark">${MARK[side]}</span>` +
        `<span class="mv">${escapeHtml(k.text)}</span>` +
        (k.origin ? `<span class="origin">${k.origin}</span>` : '') + '</li>';
    });
    this.ol.innerHTML = html;
  }

  setCurrent(ply) {
    const prev = this.ol.querySelector('.current');
    prev?.classList.remove('current');
    prev?.removeAttribute('aria-current');
    const li = this.ol.querySelector(`[data-ply="${ply}"]`);
    if (!li) return;
    li.classList.add('current');
    li.setAttribute('aria-current', 'step');
    // Keep the current move in view inside the list without scrolling the page.
    const box = this.ol;
    const top = li.offsetTop; // the list is position: relative
    if (top < box.scrollTop) box.scrollTop = top;
    else if (top + li.offsetHeight > box.scrollTop + box.clientHeight) box.scrollTop = top + li.offsetHeight - box.clientHeight;
  }
}
