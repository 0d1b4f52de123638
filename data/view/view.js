// numcheck view: the front end. Every piece of data (model text, ids, file names) reaches the page
// through textContent or a text node, never as markup. The whole state lives in the URL hash
// (#tab=runs&run=a&view=percent&orbit=CV-0001), so a state can be linked and reloaded.
'use strict';

const state = { catalog: null, rowsNext: null, claimsNext: null };

// el('td', {class: 'x'}, 'text', child): attributes set one by one, strings become text nodes.
function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v !== undefined && v !== null) e.setAttribute(k, String(v));
  }
  for (const c of children) {
    if (c === null || c === undefined) continue;
    e.appendChild(typeof c === 'string' || typeof c === 'number' ? document.createTextNode(String(c)) : c);
  }
  return e;
}

function clear(node) {
  while (node.firstChild) node.removeChild(node.firstChild);
}

function hashState() {
  return Object.fromEntries(new URLSearchParams(location.hash.slice(1)));
}

function setHash(changes) {
  const s = hashState();
  for (const [k, v] of Object.entries(changes)) {
    if (v === '' || v === null || v === undefined) delete s[k];
    else s[k] = v;
  }
  location.hash = new URLSearchParams(s).toString();
}

async function api(path, params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params || {})) if (v) q.set(k, v);
  const r = await fetch(path + '?' + q.toString(), { headers: { Accept: 'application/json' } });
  const j = await r.json();
  if (!r.ok) throw new Error(j.error || ('HTTP ' + r.status));
  return j;
}

function outcomeCell(grade) {
  if (!grade) return el('td', { class: 'outcome unscored' }, 'unscored');
  const value = grade.value === null || grade.value === undefined ? '' : ' ' + grade.value;
  return el('td', { class: 'outcome ' + (grade.outcome === 'correct' ? 'correct' : 'wrong') }, grade.outcome + value);
}

function responseCell(row) {
  const td = el('td', { class: 'response' }, row.response);
  if (row.response_cut) td.appendChild(el('span', { class: 'cut' }, ' [... ' + row.response_bytes + ' bytes in all]'));
  return td;
}

function rowElement(row) {
  if (row.broken !== undefined) {
    return el('tr', { class: 'broken' }, el('td', {}, row.line),
      el('td', { colspan: 7 }, 'broken line (' + row.bytes + ' bytes): ' + row.broken));
  }
  if (row.error !== undefined) {
    return el('tr', { class: 'broken', 'data-view': row.view }, el('td', {}, row.line), el('td', { class: 'pid' }, row.prompt_id),
      el('td', {}, row.view), el('td', { colspan: 5 }, 'request failed: ' + row.error));
  }
  const open = el('button', { type: 'button', class: 'open-orbit' }, 'orbit');
  open.addEventListener('click', () => setHash({ orbit: row.base_id }));
  const label = row.expected !== undefined ? row.expected + ' ' + row.answer_unit : '';
  return el('tr', { 'data-view': row.view }, el('td', {}, row.line), el('td', { class: 'pid' }, row.prompt_id),
    el('td', {}, row.view), outcomeCell(row.strict), outcomeCell(row.audit), el('td', { class: 'label' }, label),
    responseCell(row), el('td', {}, open));
}

async function loadRows(append) {
  const s = hashState();
  const body = document.querySelector('#rows tbody');
  const status = document.getElementById('rows-status');
  if (!append) {
    clear(body);
    state.rowsNext = null;
  }
  try {
    let cursor = append ? state.rowsNext : '';
    let page = null;
    // A page that read its budget (64 MiB) without a match goes on by itself, a page at a time.
    for (let pages = 0; pages < 1000; ++pages) {
      page = await api('/api/rows', {
        run: s.run, template: s.template, view: s.view, outcome: s.outcome, layer: s.layer, q: s.q, cursor,
      });
      if (page.rows.length || !page.next) break;
      cursor = page.next;
      status.textContent = 'searching: read to line ' + page.scanned_to_line + ' ...';
    }
    for (const row of page.rows) body.appendChild(rowElement(row));
    state.rowsNext = page.next;
    document.getElementById('more').hidden = !page.next;
    status.textContent = body.children.length + ' rows shown; read to line ' + page.scanned_to_line +
      (page.next ? ' (more below)' : ' (end of file)');
  } catch (e) {
    status.textContent = 'error: ' + e.message;
  }
}

function gradeBlock(name, grade, flip) {
  const div = el('div', { class: 'grade ' + name + (flip ? ' flip' : '') });
  if (!grade) {
    div.appendChild(el('span', { class: name + '-outcome' }, 'unscored'));
    return div;
  }
  div.appendChild(el('b', {}, name + ': '));
  div.appendChild(el('span', { class: name + '-outcome ' + (grade.outcome === 'correct' ? 'correct' : 'wrong') }, grade.outcome));
  if (grade.value !== null && grade.value !== undefined) div.appendChild(el('span', { class: 'value' }, ' read ' + grade.value));
  const rule = name === 'strict' ? 'rule: one FINAL line, strict grammar' +
      (grade.multiple_final ? ' (several FINAL lines)' : '') :
    'rule: ' + (grade.rules && grade.rules.length ? grade.rules.join(', ') : 'none needed') +
      (grade.recovered ? ' (recovered)' : '') + (grade.magnitude_k ? ' (x10^' + grade.magnitude_k + ')' : '');
  div.appendChild(el('div', { class: 'rule' }, rule));
  if (flip) div.appendChild(el('span', { class: 'flip-mark' }, 'FLIP vs base'));
  return div;
}

function textBlock(title, text, cut, bytes) {
  return el('details', { open: '' }, el('summary', {}, title),
    el('pre', {}, text, cut ? el('span', { class: 'cut' }, '\n[... ' + bytes + ' bytes in all]') : null));
}

async function loadOrbit() {
  const s = hashState();
  const box = document.getElementById('orbit');
  clear(box);
  if (!s.orbit) return;
  const close = el('button', { type: 'button', id: 'close-orbit' }, 'close');
  close.addEventListener('click', () => setHash({ orbit: '' }));
  box.appendChild(el('h2', {}, 'Orbit ', el('span', { id: 'orbit-id' }, s.orbit), ' ', close));
  try {
    const o = await api('/api/orbit', { run: s.run, base: s.orbit });
    const grid = el('div', { class: 'orbit-grid' });
    o.members.forEach((m, i) => {
      const flip = m.flip_strict || m.flip_audit;
      const card = el('div', { class: 'card' + (i === 0 ? ' base' : '') + (flip ? ' flipped' : ''), 'data-view': m.view });
      card.appendChild(el('h3', {}, (i === 0 ? 'base: ' : 'view: ') + m.view, el('small', {}, ' ' + m.prompt_id)));
      if (m.expected !== undefined) {
        card.appendChild(el('div', { class: 'expected' }, 'label: ', el('code', {}, m.expected + ' ' + m.answer_unit)));
      }
      card.appendChild(gradeBlock('strict', m.strict, m.flip_strict));
      card.appendChild(gradeBlock('audit', m.audit, m.flip_audit));
      card.appendChild(textBlock('prompt', m.prompt, m.prompt_cut, m.prompt_bytes));
      card.appendChild(textBlock('response (finish: ' + m.finish_reason + ')', m.response, m.response_cut, m.response_bytes));
      grid.appendChild(card);
    });
    box.appendChild(grid);
    box.appendChild(el('p', { class: 'note' }, 'index: ' + o.index.records + ' records, ' +
      Math.round(o.index.build_ms) + ' ms to build'));
  } catch (e) {
    box.appendChild(el('p', { class: 'error' }, 'error: ' + e.message));
  }
}

function segmentsElement(segments) {
  const p = el('span', { class: 'variant-text' });
  for (const seg of segments) {
    if (seg.value !== undefined) p.appendChild(el('mark', { title: 'was: ' + seg.original + ' (= ' + seg.value + ')' }, seg.text));
    else p.appendChild(document.createTextNode(seg.text));
  }
  return p;
}

function verdictList(verdicts) {
  const ul = el('ul', { class: 'verdicts' });
  for (const v of verdicts) ul.appendChild(el('li', {}, v.verifier + ': ', el('b', {}, v.label === null ? 'none' : v.label)));
  return ul;
}

function claimElement(c) {
  if (c.broken !== undefined) return el('div', { class: 'claim broken' }, 'line ' + c.line + ': broken line: ' + c.broken);
  const div = el('div', { class: 'claim' });
  div.appendChild(el('h3', {}, c.claim));
  div.appendChild(el('div', { class: 'meta' }, 'id ' + c.id + (c.label !== undefined ? ' · gold ' + c.label : '')));
  div.appendChild(verdictList(c.verdicts));
  if (c.evidence.length) {
    const ol = el('ol', { class: 'evidence' });
    for (const e of c.evidence) ol.appendChild(el('li', {}, el('small', {}, e.doc_id + ' '), e.text));
    div.appendChild(el('details', {}, el('summary', {}, 'evidence (' + c.evidence.length + ', ' + c.evidence_source + ')'), ol));
  }
  for (const v of c.variants) {
    div.appendChild(el('div', { class: 'variant' }, el('b', {}, v.form + ': '), segmentsElement(v.segments),
      v.spans_ok ? null : el('span', { class: 'cut' }, ' [spans do not fit the text]'), verdictList(v.verdicts)));
  }
  return div;
}

async function loadClaims(append) {
  const s = hashState();
  const list = document.getElementById('claim-list');
  if (!append) {
    clear(list);
    state.claimsNext = null;
  }
  try {
    const page = await api('/api/claims', { file: s.cfile, q: s.cq, cursor: append ? state.claimsNext : '' });
    for (const c of page.claims) list.appendChild(claimElement(c));
    state.claimsNext = page.next;
    document.getElementById('c-more').hidden = !page.next;
    document.getElementById('claims-status').textContent = list.children.length + ' claims shown';
  } catch (e) {
    document.getElementById('claims-status').textContent = 'error: ' + e.message;
  }
}

function fillSelect(select, items, selected) {
  clear(select);
  for (const it of items) select.appendChild(el('option', { value: it.id }, it.label));
  if (selected) select.value = selected;
}

function renderReports() {
  const ul = document.getElementById('report-list');
  clear(ul);
  for (const r of state.catalog.reports) {
    const li = el('li', {}, r.id + ' ');
    if (r.html) li.appendChild(el('a', { href: '/api/report?id=' + encodeURIComponent(r.id), target: '_blank', rel: 'noopener' }, 'report.html'));
    else li.appendChild(el('span', {}, '(metrics.json only)'));
    ul.appendChild(li);
  }
}

async function render() {
  document.body.dataset.state = 'loading';
  const s = hashState();
  const c = state.catalog;
  const tab = s.tab || (c.runs.length ? 'runs' : c.claims.length ? 'claims' : 'reports');
  for (const t of ['runs', 'claims', 'reports']) {
    document.getElementById(t).hidden = t !== tab;
    document.getElementById('tab-' + t).className = t === tab ? 'active' : '';
  }
  if (tab === 'runs' && c.runs.length) {
    if (!s.run) return setHash({ run: c.runs[0].id });
    fillSelect(document.getElementById('f-run'), c.runs.map(r => ({ id: r.id, label: r.name + (r.scored ? '' : ' (not scored)') })), s.run);
    for (const k of ['template', 'view', 'outcome', 'q']) document.getElementById('f-' + k).value = s[k] || '';
    document.getElementById('f-layer').value = s.layer || 'strict';
    await Promise.all([loadRows(false), loadOrbit()]);
  } else if (tab === 'claims') {
    const files = c.claims.filter(f => f.kind === 'orbits').concat(c.claims.filter(f => f.kind === 'evidence'));
    if (!s.cfile && files.length) return setHash({ tab: 'claims', cfile: files[0].id });
    fillSelect(document.getElementById('c-file'), files.map(f => ({ id: f.id, label: f.id + ' (' + f.kind + ')' })), s.cfile);
    document.getElementById('c-q').value = s.cq || '';
    await loadClaims(false);
  } else {
    renderReports();
  }
  document.body.dataset.state = 'ready';
}

async function start() {
  try {
    state.catalog = await api('/api/catalog');
  } catch (e) {
    document.body.appendChild(el('p', { class: 'error' }, 'cannot read the catalog: ' + e.message));
    return;
  }
  document.getElementById('root').textContent = state.catalog.root;
  document.getElementById('filters').addEventListener('submit', ev => {
    ev.preventDefault();
    const v = id => document.getElementById(id).value;
    setHash({ tab: 'runs', run: v('f-run'), template: v('f-template'), view: v('f-view'), outcome: v('f-outcome'),
      layer: v('f-layer') === 'strict' ? '' : v('f-layer'), q: v('f-q'), orbit: '' });
  });
  document.getElementById('claim-filters').addEventListener('submit', ev => {
    ev.preventDefault();
    setHash({ tab: 'claims', cfile: document.getElementById('c-file').value, cq: document.getElementById('c-q').value });
  });
  document.getElementById('more').addEventListener('click', () => loadRows(true));
  document.getElementById('c-more').addEventListener('click', () => loadClaims(true));
  window.addEventListener('hashchange', render);
  await render();
}

document.addEventListener('DOMContentLoaded', start);
