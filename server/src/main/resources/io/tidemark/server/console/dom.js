// Tiny DOM helpers: every value is set as text or attribute, never parsed as HTML.

export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === 'class') el.className = v;
    else if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

/** A link inside the console (a hash route); the parts are encoded. */
export function link(text, ...parts) {
  return h('a', { href: '#/' + parts.map(p => encodeURIComponent(String(p))).join('/') }, text);
}

/**
 * A table: columns are {title, value(row) -> text or node, num: right-aligned, key: data-col name};
 * each row carries data-key for tests and bookmarks.
 */
export function table(name, columns, rows, keyOf, empty) {
  if (!rows.length) return h('p', { class: 'note', 'data-empty': name }, empty || 'Nothing to show.');
  return h('table', { 'data-list': name },
    h('thead', null, h('tr', null, columns.map(c => h('th', { class: c.num ? 'num' : null }, c.title)))),
    h('tbody', null, rows.map(r => h('tr', { 'data-key': keyOf(r) },
      columns.map(c => h('td', { class: c.num ? 'num' : null, 'data-col': c.key }, c.value(r)))))));
}

export function cards(items) {
  return h('div', { class: 'cards' }, items.map(([label, value, key]) =>
    h('div', { class: 'card', 'data-card': key || null },
      h('div', { class: 'label' }, label), h('div', { class: 'value' }, value))));
}

export function badge(text, kind) {
  return h('span', { class: 'badge' + (kind ? ' ' + kind : '') }, text);
}

const unknown = '—';

export function num(v) {
  return v === null || v === undefined ? unknown : Number(v).toLocaleString('en-US');
}

export function bytes(v) {
  if (v === null || v === undefined) return unknown;
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
  let n = Number(v), i = 0;
  while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
  return (i === 0 ? n.toFixed(0) : n.toFixed(1)) + ' ' + units[i];
}

export function rate(v, unit) {
  if (v === null || v === undefined) return unknown;
  const n = Number(v);
  return (unit === 'B' ? bytes(n) : (n >= 100 ? n.toFixed(0) : n.toFixed(1))) + (unit === 'B' ? '/s' : ' /s');
}

export function percent(v) {
  return v === null || v === undefined ? unknown : (Number(v) * 100).toFixed(1) + ' %';
}

export function duration(ms) {
  if (ms === null || ms === undefined || ms < 0) return unknown;
  const s = Math.round(ms / 1000);
  if (s < 60) return s + ' s';
  if (s < 3600) return Math.floor(s / 60) + ' min ' + (s % 60) + ' s';
  if (s < 86400) return Math.floor(s / 3600) + ' h ' + Math.floor((s % 3600) / 60) + ' min';
  return Math.floor(s / 86400) + ' d ' + Math.floor((s % 86400) / 3600) + ' h';
}

export function ago(atMs, nowMs) {
  if (atMs === null || atMs === undefined || atMs < 0) return 'never';
  return duration(Math.max(0, nowMs - atMs)) + ' ago';
}

export function pager(route, page) {
  const from = page.total === 0 ? 0 : page.offset + 1;
  const to = page.offset + (page.topics || page.groups || page.subjects || []).length;
  const go = off => {
    const p = new URLSearchParams(route.params);
    p.set('offset', String(Math.max(0, off)));
    return '#/' + route.page + '?' + p.toString();
  };
  return h('div', { class: 'pager' },
    h('span', { class: 'muted' }, `${from}–${to} of ${page.total}`),
    page.offset > 0 ? h('a', { href: go(page.offset - page.limit) }, '← previous') : null,
    to < page.total ? h('a', { href: go(page.offset + page.limit) }, 'next →') : null);
}
