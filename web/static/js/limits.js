// The server's caps (GET /v1/limits) and the choices of a page that fit
// within them: a page offers only what usid accepts, whatever its
// configuration says, instead of choices that end in a 422. If usid cannot
// say (an older server, a network error), a page keeps its built-in
// choices; usid still refuses what is over a cap, with a clear error.

import { request } from './api.js';

let pending = null;

// serverLimits is GET /v1/limits's answer ({caps, quota}), or null when it
// cannot be had; asked once per page.
export function serverLimits() {
  if (!pending) pending = request('GET', '/v1/limits').catch(() => null);
  return pending;
}

// fit picks, of choices in increasing order, those for which fits holds,
// and which of them to choose: the one chosen before if kept, else the
// nearest kept one before it, else the first kept. It returns
// {keep: [choice...], pick: choice or undefined}; keep is empty when none
// fits (the caller then offers the cap itself).
export function fit(choices, chosen, fits) {
  const keep = choices.filter(fits);
  if (keep.includes(chosen)) return { keep, pick: chosen };
  const before = choices.slice(0, Math.max(choices.indexOf(chosen), 0)).reverse().find((c) => keep.includes(c));
  return { keep, pick: before ?? keep[0] };
}

// fitSelect keeps the options of a <select> for which fits(option) holds
// (see fit). When none does, it offers the one option atCap() returns
// ({value, text}): the cap itself is accepted, and a page must offer
// something. The choice is changed without a change event: what the user
// saved stays saved for a server with higher caps.
export function fitSelect(sel, fits, atCap) {
  const opts = [...sel.options];
  let { keep, pick } = fit(opts, opts[sel.selectedIndex], fits);
  if (keep.length === opts.length) return;
  if (!keep.length) {
    const { value, text } = atCap();
    pick = new Option(text, value);
    keep = [pick];
  }
  sel.replaceChildren(...keep);
  sel.value = pick.value;
}
