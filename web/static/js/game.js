// The game being looked at: a start position, one line of moves and a
// cursor into it. Positions along the line are computed locally for instant
// navigation; everything that needs the rules — legality, legal moves, check,
// canonical SFEN, KIF notation — comes from usid's /v1/validate and is
// cached per position.

import { parseSfen, applyMove, usiPosition, toSfen, STARTPOS } from './sfen.js';
import * as api from './api.js';

export class Game extends EventTarget {
  constructor() {
    super();
    this.reset('startpos', parseSfen(STARTPOS));
    this.verdicts = new Map(); // key -> Promise<verdict>
  }

  reset(root, rootPos, moves = [], errors = null) {
    this.root = root; // 'startpos' or a canonical SFEN, as sent to usid
    this.moves = moves;
    this.kif = [];
    this.positions = [rootPos];
    for (const m of moves) this.positions.push(applyMove(this.positions.at(-1), m));
    this.cursor = moves.length;
    this.errors = errors; // non-null: the start position itself is illegal
  }

  get length() { return this.moves.length; }
  get position() { return this.positions[this.cursor]; }
  get legalPosition() { return !this.errors; }

  // agrees tells whether the shown position is the one usid reports (board,
  // side to move and hands; the move number may be counted differently).
  agrees(sfen) {
    const head = (s) => s.split(' ').slice(0, 3).join(' ');
    return head(toSfen(this.position)) === head(sfen);
  }

  replacePosition(pos) { this.positions[this.cursor] = pos; }

  lastMove(ply = this.cursor) { return ply > 0 ? this.moves[ply - 1] : null; }

  // positionAt is the JSON position usid wants for the position after ply moves.
  positionAt(ply = this.cursor) {
    return { sfen: this.root, moves: this.moves.slice(0, ply) };
  }

  key(ply = this.cursor) {
    return `${this.root}|${this.moves.slice(0, ply).join(' ')}`;
  }

  usi(ply = this.cursor) { return usiPosition(this.root, this.moves.slice(0, ply)); }

  // verdict asks usid about the position after ply moves, once per position.
  verdict(ply = this.cursor) {
    const key = this.key(ply);
    let v = this.verdicts.get(key);
    if (!v) {
      v = api.validate(this.positionAt(ply));
      v.catch(() => this.verdicts.delete(key)); // let a failed request be retried
      this.verdicts.set(key, v);
      if (this.verdicts.size > 2000) this.verdicts.delete(this.verdicts.keys().next().value);
    }
    return v;
  }

  emit(what) { this.dispatchEvent(new CustomEvent('change', { detail: { what } })); }

  goto(ply) {
    ply = Math.max(0, Math.min(this.moves.length, ply));
    if (ply === this.cursor) return;
    this.cursor = ply;
    this.emit('cursor');
  }

  // play adds a move at the cursor. The same move as the line's next one just
  // steps forward; any other move replaces the rest of the line.
  play(usi) { this.playLine([usi]); }

  playLine(list) {
    let changed = false;
    for (const usi of list) {
      if (this.moves[this.cursor] === usi) { this.cursor++; continue; }
      this.moves = this.moves.slice(0, this.cursor).concat(usi);
      this.kif = this.kif.slice(0, this.cursor);
      this.positions = this.positions.slice(0, this.cursor + 1);
      this.positions.push(applyMove(this.positions[this.cursor], usi));
      this.cursor++;
      changed = true;
    }
    this.emit(changed ? 'line' : 'cursor');
    if (changed) this.refreshKif();
  }

  // refreshKif fetches the KIF of the whole line (one request) and sends a
  // 'kif' change when it arrives, unless the line changed meanwhile.
  async refreshKif() {
    const key = this.key(this.moves.length);
    const v = await this.verdict(this.moves.length);
    if (key !== this.key(this.moves.length)) return;
    if (Array.isArray(v.moves_kif)) this.kif = v.moves_kif;
    this.emit('kif');
    return v;
  }

  // load validates and installs a start position and moves. It resolves to
  // {ok: true} or {ok: false, errors, kept} where kept is how many moves were
  // legal and are shown (the position before the refused move).
  async load(sfen, moves) {
    const v0 = await api.validate({ sfen, moves: [] });
    if (!v0.valid) {
      let pos = null;
      try { pos = v0.sfen ? parseSfen(v0.sfen) : null; } catch { pos = null; }
      if (pos) { this.reset(v0.sfen, pos, [], v0.errors); this.emit('load'); }
      return { ok: false, errors: v0.errors || [], shown: !!pos };
    }
    const root = sfen === 'startpos' || v0.sfen === STARTPOS ? 'startpos' : v0.sfen;
    const rootPos = parseSfen(v0.sfen);
    let result = { ok: true };
    if (moves.length) {
      const v = await api.validate({ sfen: root, moves });
      if (!v.valid) {
        const bad = (v.errors || []).find((e) => typeof e.move_index === 'number');
        moves = bad ? moves.slice(0, bad.move_index) : [];
        result = { ok: false, errors: v.errors || [], shown: true, kept: moves.length };
      }
    }
    this.reset(root, rootPos, moves);
    this.emit('load');
    this.refreshKif();
    return result;
  }
}
