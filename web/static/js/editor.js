// A board editor for setting up a tsume problem on the board itself: pick a
// piece from the palette, click squares to put it there (click the same piece
// again to take it away), click a hand to add one to it. Checking that the
// result is a legal problem stays with usid when the editor is done.

import { HAND_KINDS } from './sfen.js';
import { pieceSvg } from './board.js';

const KINDS = ['K', 'R', 'B', 'G', 'S', 'N', 'L', 'P', '+R', '+B', '+S', '+N', '+L', '+P'];
const FULL_SET = { R: 2, B: 2, G: 4, S: 4, N: 4, L: 4, P: 18 };

export class Editor {
  // board is the page's Board; box the element for the palette and buttons;
  // onDone(pos) receives the edited position, onCancel() is called otherwise.
  constructor(board, box, { onDone, onCancel }) {
    this.board = board;
    this.box = box;
    this.onDone = onDone;
    this.onCancel = onCancel;
    this.pos = null;
    this.brush = 'b:P';
    this.active = false;
    this.build();
    board.root.addEventListener('pointerdown', (e) => { if (this.active) this.onPress(e); });
  }

  build() {
    let html = '<div class="palette" data-testid="editor-palette">';
    for (const color of ['b', 'w']) {
      html += `<div class="palette-row pieces" data-color="${color}">`;
      for (const k of KINDS) {
        html += `<button type="button" class="brush" data-brush="${color}:${k}" title="${color === 'b' ? 'sente' : 'gote'} ${k}">` +
          `<span class="piece ${color}" data-piece="${k}">${pieceSvg(k, color)}</span></button>`;
      }
      html += '</div>';
    }
    html += '<div class="palette-row tools"><button type="button" class="brush eraser" data-brush="erase" title="remove pieces">Remove</button>' +
      '<button type="button" data-act="clear">Clear board</button>' +
      '<button type="button" data-act="rest" title="gote holds every piece not on the board or in sente\'s hand">Rest to gote\'s hand</button>' +
      '<span class="spacer"></span>' +
      '<button type="button" data-act="cancel">Cancel</button>' +
      '<button type="button" class="primary" data-act="done" data-testid="editor-done">Use this position</button></div></div>' +
      '<p class="editor-hint">Pick a piece, then click squares. Click a hand to add the picked piece to it; remove takes pieces off board and hands.</p>';
    this.box.innerHTML = html;
    this.box.addEventListener('click', (e) => {
      const b = e.target.closest('button');
      if (!b) return;
      if (b.dataset.brush) { this.setBrush(b.dataset.brush); return; }
      switch (b.dataset.act) {
        case 'clear': this.clear(); break;
        case 'rest': this.restToGote(); break;
        case 'cancel': this.stop(); this.onCancel?.(); break;
        case 'done': { const pos = this.pos; this.stop(); this.onDone?.(pos); break; }
      }
    });
    this.setBrush(this.brush);
  }

  start(pos) {
    this.pos = {
      board: pos.board.slice(),
      hands: { b: { ...pos.hands.b }, w: { ...pos.hands.w } },
      turn: 'b', // the attacker moves first in a tsume problem
      moveNumber: 1,
    };
    this.active = true;
    this.box.hidden = false;
    this.board.root.classList.add('editing');
    this.show();
  }

  stop() {
    this.active = false;
    this.box.hidden = true;
    this.board.root.classList.remove('editing');
  }

  setBrush(brush) {
    this.brush = brush;
    this.box.querySelectorAll('.brush').forEach((b) => b.classList.toggle('selected', b.dataset.brush === brush));
  }

  show() { this.board.setPosition(this.pos); }

  onPress(e) {
    const sq = e.target.closest('[data-square]');
    const hand = e.target.closest('.hand');
    const pos = this.pos;
    if (sq) {
      const i = this.board.squares.indexOf(sq);
      if (i < 0) return;
      const cur = pos.board[i];
      if (this.brush === 'erase') {
        pos.board[i] = null;
      } else {
        const [color, kind] = this.brush.split(':');
        if (cur && cur.color === color && cur.kind === kind) {
          pos.board[i] = null;
        } else {
          // One king per side: placing a king moves it.
          if (kind === 'K') pos.board.forEach((p, j) => { if (p && p.kind === 'K' && p.color === color) pos.board[j] = null; });
          pos.board[i] = { color, kind };
        }
      }
    } else if (hand) {
      const color = hand.dataset.color;
      const hp = e.target.closest('.hand-piece');
      if (this.brush === 'erase') {
        if (hp) pos.hands[color][hp.dataset.handPiece] = Math.max(0, pos.hands[color][hp.dataset.handPiece] - 1);
      } else {
        const kind = this.brush.split(':')[1].replace('+', '');
        if (HAND_KINDS.includes(kind)) pos.hands[color][kind]++;
      }
    } else {
      return;
    }
    e.preventDefault();
    this.show();
  }

  clear() {
    this.pos.board.fill(null);
    for (const c of ['b', 'w']) for (const k of HAND_KINDS) this.pos.hands[c][k] = 0;
    this.show();
  }

  // restToGote gives gote every piece of the set not used elsewhere, the
  // usual convention of tsume problems.
  restToGote() {
    const used = Object.fromEntries(HAND_KINDS.map((k) => [k, 0]));
    for (const p of this.pos.board) if (p && p.kind !== 'K') used[p.kind.replace('+', '')]++;
    for (const k of HAND_KINDS) this.pos.hands.w[k] = Math.max(0, FULL_SET[k] - used[k] - this.pos.hands.b[k]);
    this.show();
  }
}
