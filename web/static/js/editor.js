// A board editor for setting up a position on the board itself (the tsume
// page's problems, the analysis board's positions): pick a piece from the
// palette, click squares to put it there (click the same piece again to take
// it away), click a hand to add one to it; choose the side to move, a
// standard start (平手, the handicaps) or an empty board. The position is
// checked by usid (validate) as it is built, and its reasons shown.

import { HAND_KINDS, HANDICAPS, STARTPOS, parseSfen, toSfen } from './sfen.js';
import { pieceSvg } from './board.js';
import { t } from './i18n.js';
import { escapeHtml, showErrors } from './dom.js';

// STARTS are the standard starting positions.
const STARTS = { even: STARTPOS, ...HANDICAPS, tsume: '4k4/9/9/9/9/9/9/9/9 b 2r2b4g4s4n4l18p 1' };

const KINDS = ['K', 'R', 'B', 'G', 'S', 'N', 'L', 'P', '+R', '+B', '+S', '+N', '+L', '+P'];
const FULL_SET = { R: 2, B: 2, G: 4, S: 4, N: 4, L: 4, P: 18 };

export class Editor {
  // board is the page's Board; box the element for the palette and buttons;
  // onDone(pos) receives the edited position, onCancel() is called
  // otherwise; validate(sfen), when given, resolves to usid's verdict
  // ({valid, errors}) on the position being built. full: offer the side to
  // move and the standard starts (the analysis board); without it the
  // attacker (sente) moves, as in a tsume problem.
  constructor(board, box, { onDone, onCancel, validate = null, full = false }) {
    this.board = board;
    this.box = box;
    this.onDone = onDone;
    this.onCancel = onCancel;
    this.validate = validate;
    this.full = full;
    this.checks = 0; // the number of the latest check: older answers are stale
    this.pos = null;
    this.brush = 'b:P';
    this.active = false;
    this.build();
    board.root.addEventListener('pointerdown', (e) => { if (this.active) this.onPress(e); });
  }

  build() {
    const e = (k) => escapeHtml(t(k));
    // The tools, Done and usid's verdict come first: on a screen where the
    // editor starts below the board, they are in sight without a scroll.
    let html = '<div class="palette" data-testid="editor-palette">';
    html += `<div class="palette-row tools"><button type="button" class="brush eraser" data-brush="erase" title="${e('editor.remove.title')}">${e('editor.remove')}</button>` +
      `<button type="button" data-act="clear">${e('editor.clear')}</button>` +
      `<button type="button" data-act="rest" title="${e('editor.rest.title')}">${e('editor.rest')}</button>` +
      '<span class="spacer"></span>' +
      `<button type="button" data-act="cancel" data-testid="editor-cancel">${e('editor.cancel')}</button>` +
      `<button type="button" class="primary" data-act="done" data-testid="editor-done">${e('editor.done')}</button></div>` +
      // usid's verdict next to Done, where it is read.
      '<div class="editor-check" data-testid="editor-check" data-state="idle" aria-live="polite"></div>' +
      '<div class="error-box" data-testid="editor-errors" role="alert" hidden></div>';
    for (const color of ['b', 'w']) {
      html += `<div class="palette-row pieces" data-color="${color}">`;
      for (const k of KINDS) {
        html += `<button type="button" class="brush" data-brush="${color}:${k}" title="${escapeHtml(t(color === 'b' ? 'side.sente' : 'side.gote'))} ${k}">` +
          `<span class="piece ${color}" data-piece="${k}">${pieceSvg(k, color)}</span></button>`;
      }
      html += '</div>';
    }
    if (this.full) {
      html += '<div class="palette-row setup">' +
        `<select data-act="start" data-testid="editor-start" aria-label="${e('editor.start')}"><option value="">${e('editor.start')}</option>` +
        Object.keys(STARTS).map((k) => `<option value="${k}">${e(`editor.start.${k}`)}</option>`).join('') + '</select>' +
        `<span class="turn" role="radiogroup" aria-label="${e('editor.turn')}">` +
        `<button type="button" data-turn="b" data-testid="editor-turn-b">☗${e('editor.turn.b')}</button>` +
        `<button type="button" data-turn="w" data-testid="editor-turn-w">☖${e('editor.turn.w')}</button></span></div>`;
    }
    html += '</div>' +
      `<p class="editor-hint">${e('editor.hint')}</p>`;
    this.box.innerHTML = html;
    this.box.querySelector('[data-act="start"]')?.addEventListener('change', (ev) => {
      const k = ev.target.value;
      ev.target.value = '';
      if (!STARTS[k]) return;
      const p = parseSfen(STARTS[k]);
      Object.assign(this.pos, { board: p.board, hands: p.hands, turn: p.turn });
      this.show();
    });
    this.box.addEventListener('click', (e) => {
      const b = e.target.closest('button');
      if (!b) return;
      if (b.dataset.brush) { this.setBrush(b.dataset.brush); return; }
      if (b.dataset.turn) { this.pos.turn = b.dataset.turn; this.show(); return; }
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
      turn: this.full ? pos.turn : 'b', // the attacker moves first in a tsume problem
      moveNumber: 1,
    };
    this.active = true;
    this.box.hidden = false;
    this.board.root.classList.add('editing');
    this.board.editing = true;
    this.show();
  }

  stop() {
    this.active = false;
    this.checks++; // answers still on their way are stale
    clearTimeout(this.checkTimer);
    this.box.hidden = true;
    this.board.root.classList.remove('editing', 'illegal');
    this.board.editing = false;
  }

  setBrush(brush) {
    this.brush = brush;
    this.box.querySelectorAll('.brush').forEach((b) => b.classList.toggle('selected', b.dataset.brush === brush));
  }

  show() {
    this.board.setPosition(this.pos);
    this.box.querySelectorAll('[data-turn]').forEach((b) => b.setAttribute('aria-pressed', String(b.dataset.turn === this.pos.turn)));
    this.check();
  }

  // check asks usid about the position a moment after the last edit and
  // shows its reasons; an answer about an older position is dropped.
  check() {
    if (!this.validate) return;
    const n = ++this.checks;
    const box = this.box.querySelector('[data-testid="editor-check"]');
    box.dataset.state = 'checking';
    box.textContent = t('editor.checking');
    clearTimeout(this.checkTimer);
    this.checkTimer = setTimeout(async () => {
      const sfen = toSfen(this.pos);
      let v;
      try { v = await this.validate(sfen); } catch (err) { v = { valid: false, errors: [{ code: err.code, message: err.message }] }; }
      if (n !== this.checks || !this.active) return;
      box.dataset.state = v.valid ? 'valid' : 'invalid';
      box.dataset.sfen = sfen;
      box.textContent = v.valid ? t('editor.valid') : t('editor.invalid');
      this.board.root.classList.toggle('illegal', !v.valid);
      showErrors(this.box.querySelector('[data-testid="editor-errors"]'), v.valid ? [] : v.errors || []);
      const done = this.box.querySelector('[data-act="done"]');
      if (done) done.disabled = !v.valid;
    }, 150);
  }

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
