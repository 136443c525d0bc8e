// Leasekeeper's operator console: the public API of this service, called with the operator's bearer token, which is
// kept in this tab's session storage only. No framework, nothing from other hosts (the page's Content-Security-Policy
// allows this origin alone). Countdowns run from each lease's remainingMs and the browser's monotonic clock, never
// from the browser's wall clock against serverTime.
'use strict';

(() => {
  const TOKEN_KEY = 'leasekeeper.console.token';
  const POLL_MS = 5000;
  const PAGE = 50;
  const $ = (id) => document.getElementById(id);
  const TITLE = document.title;

  let token = sessionStorage.getItem(TOKEN_KEY);
  let filters = {};
  let pageCursor = null; // the cursor of the page shown (null: the first)
  let nextCursor = null;
  let storyLeaseId = null;
  let storyLease = null;
  let refreshing = false;
  const countdowns = new Map(); // element -> deadline on performance.now()'s clock
  const relatives = new Map(); // element -> {at: an instant, clock: the server's clock of its answer}

  // ---- the API ----

  async function api(method, path, body) {
    const headers = {Accept: 'application/json, application/problem+json', Authorization: 'Bearer ' + token};
    if (body !== undefined) {
      headers['Content-Type'] = 'application/json';
    }
    const response = await fetch(path, {
      method, headers, cache: 'no-store', body: body === undefined ? undefined : JSON.stringify(body)
    });
    let data = null;
    try {
      data = await response.json();
    } catch (ignored) {
      // no JSON body
    }
    if (!response.ok) {
      const problem = data && data.title ? data : {title: 'HTTP ' + response.status, status: response.status};
      const error = new Error(problem.title);
      error.problem = problem;
      throw error;
    }
    return data;
  }

  function query(params) {
    const search = new URLSearchParams();
    Object.entries(params).forEach(([name, value]) => {
      if (value !== undefined && value !== null && value !== '') {
        search.set(name, value);
      }
    });
    return search.toString();
  }

  function claims(jwt) {
    try {
      const part = jwt.split('.')[1].replace(/-/g, '+').replace(/_/g, '/');
      return JSON.parse(new TextDecoder().decode(Uint8Array.from(atob(part), (c) => c.charCodeAt(0))));
    } catch (ignored) {
      return {};
    }
  }

  function scopes(jwt) {
    const c = claims(jwt);
    const s = c.scope !== undefined ? c.scope : c.scp;
    return Array.isArray(s) ? s : (typeof s === 'string' ? s.split(' ') : []);
  }

  function isAdmin() {
    return scopes(token).includes('leases:admin');
  }

  // ---- what the page shows ----

  function el(tag, attributes, ...children) {
    const node = document.createElement(tag);
    Object.entries(attributes || {}).forEach(([name, value]) => {
      if (name === 'className') {
        node.className = value;
      } else if (name.startsWith('data-') || name.startsWith('aria-')) {
        node.setAttribute(name, value);
      } else {
        node[name] = value;
      }
    });
    children.flat(Infinity).forEach((child) => {
      if (typeof child === 'string') {
        node.append(...shown(child));
      } else if (child !== null && child !== undefined) {
        node.append(child);
      }
    });
    return node;
  }

  // ---- characters a person cannot see ----

  // Format and control characters (bidi controls among them), line and paragraph separators, what Unicode says
  // to render as nothing (U+200B, U+2060, U+FEFF, variation selectors, Hangul fillers, tags), spaces other than
  // U+0020, surrogates left alone, private-use and unassigned code points: none of them reads as itself.
  const INVISIBLE_CLASS = '[\\p{Cc}\\p{Cf}\\p{Zl}\\p{Zp}\\p{Cs}\\p{Co}\\p{Cn}\\p{Default_Ignorable_Code_Point}' +
    '\\u00A0\\u1680\\u2000-\\u200A\\u202F\\u205F\\u3000]';
  const INVISIBLE = new RegExp(INVISIBLE_CLASS, 'u');
  const INVISIBLE_ALL = new RegExp(INVISIBLE_CLASS, 'gu');
  const NAMES = {
    0x00A0: 'no-break space', 0x00AD: 'soft hyphen', 0x061C: 'Arabic letter mark', 0x200B: 'zero width space',
    0x200C: 'zero width non-joiner', 0x200D: 'zero width joiner', 0x200E: 'left-to-right mark',
    0x200F: 'right-to-left mark', 0x202A: 'left-to-right embedding', 0x202B: 'right-to-left embedding',
    0x202C: 'pop directional formatting', 0x202D: 'left-to-right override', 0x202E: 'right-to-left override',
    0x2060: 'word joiner', 0x2066: 'left-to-right isolate', 0x2067: 'right-to-left isolate',
    0x2068: 'first strong isolate', 0x2069: 'pop directional isolate', 0xFEFF: 'zero width no-break space'
  };

  /** "⟨U+202E⟩": how a character a person cannot see is written in the page. */
  function escape(character) {
    return '⟨U+' + character.codePointAt(0).toString(16).toUpperCase().padStart(4, '0') + '⟩';
  }

  /** The text with every invisible character written as its escape: for attributes (titles) and comparisons. */
  function visible(text) {
    return String(text).replace(INVISIBLE_ALL, escape);
  }

  /**
   * The text as nodes: its runs as text, each invisible character as a marked escape naming it. A bidi control
   * is never in the page as itself, so "abc\u202Edef" reads "abc⟨U+202E⟩def", never "abcfed".
   */
  function shown(text) {
    const nodes = [];
    let run = '';
    for (const character of String(text)) {
      if (INVISIBLE.test(character)) {
        if (run) {
          nodes.push(document.createTextNode(run));
          run = '';
        }
        const code = character.codePointAt(0);
        const escaped = document.createElement('span');
        escaped.className = 'invisible';
        escaped.title = 'U+' + code.toString(16).toUpperCase().padStart(4, '0') + ', an invisible character' +
          (NAMES[code] ? ' (' + NAMES[code] + ')' : '');
        escaped.textContent = escape(character);
        nodes.push(escaped);
      } else {
        run += character;
      }
    }
    if (run || nodes.length === 0) {
      nodes.push(document.createTextNode(run));
    }
    return nodes;
  }

  /** A value from the API, isolated from the text around it (a right-to-left value does not reorder it). */
  function value(text) {
    return el('bdi', {}, text === null || text === undefined ? '—' : String(text));
  }

  function showProblem(error) {
    const problem = error.problem || {title: 'The request failed', detail: String(error.message || error)};
    const box = $('problem');
    box.replaceChildren(el('strong', {}, problem.title), el('span', {}, problem.detail ? problem.detail : ''));
    box.hidden = false;
    if (problem.status === 401) {
      signOut(false);
    }
  }

  function clearProblem() {
    $('problem').hidden = true;
    $('problem').replaceChildren();
  }

  function show(section) {
    ['sign-in', 'leases', 'story'].forEach((id) => {
      $(id).hidden = id !== section;
    });
    $('sign-out').hidden = section === 'sign-in';
    if (section !== 'story') {
      document.title = TITLE;
    }
  }

  function remaining(ms) {
    if (ms <= 0) {
      return 'expired';
    }
    const seconds = ms / 1000;
    if (seconds < 60) {
      return seconds.toFixed(1) + ' s';
    }
    const minutes = Math.floor(seconds / 60);
    if (minutes < 60) {
      return minutes + ' min ' + Math.floor(seconds % 60) + ' s';
    }
    return Math.floor(minutes / 60) + ' h ' + (minutes % 60) + ' min';
  }

  /** A cell counting down to the lease's expiry, from the remainingMs of the answer just read. */
  function countdown(lease) {
    const cell = el('span', {className: 'countdown'});
    if (lease.state !== 'active') {
      cell.textContent = '—';
      return cell;
    }
    countdowns.set(cell, performance.now() + lease.remainingMs);
    cell.textContent = remaining(lease.remainingMs);
    return cell;
  }

  function tick() {
    const now = performance.now();
    countdowns.forEach((deadline, cell) => {
      if (!cell.isConnected) {
        countdowns.delete(cell);
      } else {
        cell.textContent = remaining(deadline - now);
      }
    });
    relatives.forEach((instant, cell) => {
      if (!cell.isConnected) {
        relatives.delete(cell);
      } else {
        cell.textContent = relative(instant.at - instant.clock.now());
      }
    });
  }

  // ---- times ----

  /**
   * The server's clock as an answer read it: its serverTime, moved on by the browser's monotonic clock since. How
   * long ago an instant was is told from it, never from the browser's wall clock.
   */
  function serverClock(serverTime) {
    const server = Date.parse(serverTime);
    const read = performance.now();
    return {now: () => server + (performance.now() - read)};
  }

  /** "2 min ago", "in 25 s". */
  function relative(ms) {
    const seconds = Math.floor(Math.abs(ms) / 1000);
    if (seconds < 1) {
      return 'now';
    }
    let text;
    if (seconds < 60) {
      text = seconds + ' s';
    } else if (seconds < 3600) {
      text = Math.floor(seconds / 60) + ' min';
    } else if (seconds < 86400) {
      text = Math.floor(seconds / 3600) + ' h';
    } else {
      text = Math.floor(seconds / 86400) + ' d';
    }
    return ms < 0 ? text + ' ago' : 'in ' + text;
  }

  const ZONE = Intl.DateTimeFormat().resolvedOptions().timeZone;
  const LOCAL = new Intl.DateTimeFormat('en-GB', {
    year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit',
    fractionalSecondDigits: 3, hourCycle: 'h23', timeZoneName: 'shortOffset'
  });

  /** The instant in the viewer's time zone: date, time to the millisecond, and the zone's offset. */
  function local(ms) {
    const part = Object.fromEntries(LOCAL.formatToParts(new Date(ms)).map((p) => [p.type, p.value]));
    return {
      date: part.year + '-' + part.month + '-' + part.day,
      time: part.hour + ':' + part.minute + ':' + part.second,
      millis: part.fractionalSecond,
      zone: part.timeZoneName
    };
  }

  /**
   * An instant of the API as a time element: in the viewer's time zone with how long ago (or how soon) it is, and
   * the exact instant, local and UTC, on hover. {@code short}: the time alone when it is the day of the server's
   * now, for the list.
   */
  function when(instant, clock, short) {
    if (!instant) {
      return el('span', {className: 'no-time'}, '—');
    }
    const at = Date.parse(instant);
    const day = local(at);
    const today = local(clock.now()).date === day.date;
    const text = short ? (today ? day.time : day.date + ' ' + day.time) : day.date + ' ' + day.time + ' ' + day.zone;
    const ago = el('span', {className: 'ago'}, relative(at - clock.now()));
    relatives.set(ago, {at, clock});
    return el('time', {
      dateTime: instant, className: short ? 'when short' : 'when',
      title: day.date + ' ' + day.time + '.' + day.millis + ' ' + day.zone + ' (' + ZONE + ')\n' + instant + ' (UTC)'
    }, el('span', {className: 'at'}, text), short ? [' ', ago] : [' (', ago, ')']);
  }

  // ---- keys ----

  /** The key's parts as a person reads them: the target decoded, then actor, program and operation. */
  function keyParts(lease) {
    const parts = [lease.target.type, 'actor ' + lease.actor];
    if (lease.program && lease.program !== 'default') {
      parts.push('program ' + lease.program);
    }
    if (lease.operation) {
      parts.push('operation ' + lease.operation);
    }
    return parts;
  }

  /** The whole key, readable and canonical, for a title attribute: every invisible character escaped. */
  function keyTitle(lease) {
    return visible('Target ' + lease.target.type + ' ' + lease.target.value + '\nActor ' + lease.actor + '\nProgram ' +
      lease.program + (lease.operation ? '\nOperation ' + lease.operation : '') + '\nCanonical key ' + lease.key);
  }

  /** "opaque:repo/main (actor indexer)": the key in one line of text, for titles. */
  function keyName(lease) {
    return [lease.target.type + ':', value(lease.target.value), ' (' + keyParts(lease).slice(1).join(', ') + ')'];
  }

  /** A value cut to its column with an ellipsis, the whole of it on hover. */
  function cut(text, className) {
    return el('span', {className: 'cut ' + (className || ''), title: visible(text)}, value(text));
  }

  // ---- signing in ----

  async function signIn(candidate) {
    token = candidate;
    try {
      await api('GET', '/v1/leases?limit=1');
    } catch (error) {
      token = null;
      sessionStorage.removeItem(TOKEN_KEY);
      showProblem(error);
      return;
    }
    sessionStorage.setItem(TOKEN_KEY, token);
    clearProblem();
    const c = claims(token);
    $('who').replaceChildren(el('span', {}, 'Signed in as ', value(c.sub || '?'), ' of tenant ', value(c.tenant || '?'),
      ' (' + scopes(token).join(', ') + ')'));
    show('leases');
    await loadLeases();
    $('leases-title').setAttribute('tabindex', '-1');
    $('leases-title').focus();
  }

  function signOut(clear) {
    token = null;
    sessionStorage.removeItem(TOKEN_KEY);
    $('who').textContent = '';
    $('token').value = '';
    show('sign-in');
    if (clear) {
      clearProblem();
    }
  }

  async function mintLocalToken(event) {
    event.preventDefault();
    const chosen = ['scope-read', 'scope-write', 'scope-admin'].filter((id) => $(id).checked).map((id) => $(id).value);
    try {
      const response = await fetch('/local/token', {
        method: 'POST', headers: {'Content-Type': 'application/json'},
        body: JSON.stringify({subject: $('local-subject').value, tenant: $('local-tenant').value, scopes: chosen})
      });
      if (!response.ok) {
        throw Object.assign(new Error('HTTP ' + response.status), {problem: await response.json().catch(() => null)});
      }
      await signIn((await response.json()).accessToken);
    } catch (error) {
      showProblem(error);
    }
  }

  // ---- the leases ----

  function readFilters() {
    return {
      state: $('f-state').value, program: $('f-program').value.trim(), actor: $('f-actor').value.trim(),
      targetType: $('f-target-type').value, target: $('f-target').value.trim(), owner: $('f-owner').value.trim(),
      holder: $('f-holder').value.trim()
    };
  }

  async function loadLeases() {
    let page;
    try {
      page = await api('GET', '/v1/leases?' + query({...filters, limit: PAGE, cursor: pageCursor}));
    } catch (error) {
      showProblem(error);
      return;
    }
    clearProblem();
    nextCursor = page.nextCursor;
    // Every lease of one answer carries the same serverTime.
    const clock = page.items.length > 0 ? serverClock(page.items[0].serverTime) : null;
    const rows = page.items.map((lease) => el('tr', {'data-lease-id': lease.leaseId},
      el('td', {className: 'key'}, el('button', {
        type: 'button', className: 'link open-lease', 'data-lease-id': lease.leaseId, title: keyTitle(lease),
        onclick: () => openStory(lease.leaseId)
      }, el('span', {className: 'cut key-value'}, value(lease.target.value)),
      el('span', {className: 'cut key-parts'}, keyParts(lease).join(' · ')))),
      el('td', {className: 'holder'}, cut(lease.holder)),
      el('td', {className: 'owner'}, cut(lease.owner)),
      el('td', {className: 'number'}, String(lease.fencingToken)),
      el('td', {className: 'state state-' + lease.state}, lease.state),
      el('td', {className: 'acquired'}, when(lease.acquiredAt, clock, true)),
      el('td', {className: 'ended'}, when(lease.endedAt, clock, true)),
      el('td', {className: 'number'}, countdown(lease))));
    $('lease-table').tBodies[0].replaceChildren(...rows);
    $('lease-count').textContent = page.items.length === 0 ? 'No lease matches.'
      : page.items.length + (page.items.length === 1 ? ' lease' : ' leases') + (nextCursor ? ' on this page.' : '.');
    $('next-page').hidden = !nextCursor;
    $('first-page').hidden = pageCursor === null;
  }

  // ---- a lease's story ----

  async function openStory(leaseId) {
    storyLeaseId = leaseId;
    $('revoke-result').textContent = '';
    $('revoke-reason').value = '';
    show('story');
    await loadStory();
    $('story-title').focus();
  }

  async function allEvents(leaseId) {
    const events = [];
    let cursor = null;
    for (let pages = 0; pages < 20; pages++) {
      const page = await api('GET', '/v1/leases/' + leaseId + '/events?' + query({limit: 1000, cursor}));
      events.push(...page.items);
      cursor = page.nextCursor;
      if (!cursor) {
        break;
      }
    }
    return events;
  }

  async function loadStory() {
    let lease;
    let events;
    try {
      lease = await api('GET', '/v1/leases/' + storyLeaseId);
      events = await allEvents(storyLeaseId);
    } catch (error) {
      showProblem(error);
      return;
    }
    // A key stored before revision 1.2 may hold a character the list's filter now refuses (a bidi control):
    // the story is told without the key's other leases then, and says why.
    let keyLeases = null;
    let keyLeasesRefused = null;
    try {
      keyLeases = await api('GET', '/v1/leases?' + query({
        state: 'any', program: lease.program, actor: lease.actor, targetType: lease.target.type,
        target: lease.target.value, limit: 100
      }));
    } catch (error) {
      keyLeasesRefused = error;
    }
    clearProblem();
    storyLease = lease;
    const clock = serverClock(lease.serverTime);
    $('story-title').replaceChildren(storyTitle(lease));
    document.title = visible(lease.target.type + ':' + lease.target.value + ' · ' + lease.holder) +
      ' — Leasekeeper console';
    const fields = [
      ['State', el('span', {className: 'state state-' + lease.state}, lease.state)],
      ['Expires in', countdown(lease)],
      ['Target', [lease.target.type + ' ', value(lease.target.value)]], ['Actor', value(lease.actor)],
      ['Program', value(lease.program)], ['Operation', value(lease.operation)],
      ['Holder', value(lease.holder)], ['Owner', value(lease.owner)], ['Fencing token', String(lease.fencingToken)],
      ['Canonical key', value(lease.key)], ['Acquired', when(lease.acquiredAt, clock)],
      ['Renewed', when(lease.renewedAt, clock)], ['Expires at', when(lease.expiresAt, clock)],
      ['Ends at the latest', when(lease.maxExpiresAt, clock)],
      ['Ended', lease.endedAt ? [when(lease.endedAt, clock), ' (' + lease.endReason + ')'] : '—'],
      ['TTL', lease.ttlSeconds + ' s'], ['Lease id', lease.leaseId], ['Trace id', value(lease.traceId)],
      ['Job id', value(lease.jobId)]
    ];
    $('story-summary').replaceChildren(...fields.flatMap(([name, shownValue]) => [el('dt', {}, name),
      el('dd', {}, shownValue)]));
    $('revoke-form').hidden = !(isAdmin() && lease.state === 'active');
    $('timeline').replaceChildren(...timeline(events, clock));
    if (keyLeasesRefused) {
      const problem = keyLeasesRefused.problem || {};
      $('key-leases').tBodies[0].replaceChildren(el('tr', {}, el('td', {colSpan: 6},
        'The key\'s leases cannot be listed: ' + (problem.detail || problem.title || keyLeasesRefused.message))));
      return;
    }
    const sameKey = keyLeases.items.filter((other) => other.operation === lease.operation);
    $('key-leases').tBodies[0].replaceChildren(...sameKey.map((other) => el('tr',
      other.leaseId === lease.leaseId ? {'aria-current': 'true', className: 'current'} : {},
      el('td', {className: 'number'}, other.leaseId === lease.leaseId ? String(other.fencingToken)
        : el('button', {type: 'button', className: 'link', onclick: () => openStory(other.leaseId)},
          String(other.fencingToken))),
      el('td', {}, cut(other.owner)), el('td', {}, cut(other.holder)),
      el('td', {className: 'state state-' + other.state}, other.state),
      el('td', {}, when(other.acquiredAt, clock, true)), el('td', {}, when(other.endedAt, clock, true)))));
  }

  /** The lease the story tells: its key and its holder, the whole key on hover. */
  function storyTitle(lease) {
    return el('span', {title: keyTitle(lease)}, 'Lease of ', keyName(lease), ', holder ', value(lease.holder));
  }

  /** The events as list items, consecutive renewals grouped with their count and interval. */
  function timeline(events, clock) {
    const items = [];
    for (let i = 0; i < events.length; i++) {
      const event = events[i];
      if (event.type === 'RENEWED') {
        let j = i;
        while (j + 1 < events.length && events[j + 1].type === 'RENEWED') {
          j++;
        }
        items.push(renewals(events.slice(i, j + 1), clock));
        i = j;
      } else {
        items.push(transition(event, clock));
      }
    }
    return items;
  }

  function renewals(group, clock) {
    const first = group[0];
    const last = group[group.length - 1];
    if (group.length === 1) {
      return el('li', {className: 'event-RENEWED'}, 'Renewed by ', value(first.principal), ' at ',
        when(first.at, clock), meta(first));
    }
    // The interval between the group's renewals, from the server's instants (never the browser's clock).
    const interval = (Date.parse(last.at) - Date.parse(first.at)) / (group.length - 1);
    const every = interval < 1000 ? Math.round(interval) + ' ms' : (interval / 1000).toFixed(1) + ' s';
    return el('li', {className: 'event-RENEWED', 'data-count': String(group.length)},
      'Renewed ' + group.length + ' times by ', value(first.principal), ', about every ' + every + ', from ',
      when(first.at, clock), ' to ', when(last.at, clock), meta(last));
  }

  function transition(event, clock) {
    const by = value(event.principal);
    const at = when(event.at, clock);
    const details = event.details || {};
    const parts = {
      ACQUIRED: ['Granted to ', by, ' with fencing token ' + event.fencingToken + ' at ', at],
      RELEASED: ['Released by ', by, ' at ', at],
      EXPIRED: ['Expired', details.expiresAt ? [' at ', when(details.expiresAt, clock)] : '', ', recorded by ', by,
        ' at ', at],
      REVOKED: ['Revoked by ', by, ' at ', at, ': ', value(details.reason || '')]
    }[event.type] || [event.type + ' by ', by, ' at ', at];
    return el('li', {className: 'event-' + event.type}, parts, meta(event));
  }

  function meta(event) {
    const parts = ['trace ' + (event.traceId || '—')];
    if (event.requestId) {
      parts.push('request ' + event.requestId);
    }
    return el('div', {className: 'meta'}, parts.join(' · '));
  }

  // ---- revoke ----

  function askRevoke(event) {
    event.preventDefault();
    if (!$('revoke-reason').value.trim()) {
      $('revoke-reason').focus();
      return;
    }
    $('confirm-text').replaceChildren(el('span', {}, 'Revoke the lease of ', keyName(storyLease), ', held by ',
      value(storyLease.holder), ' (owner ', value(storyLease.owner), ', fencing token ' + storyLease.fencingToken +
      ')? Its holder loses it at once, and the key is free.'));
    $('confirm-revoke').showModal();
    $('confirm-no').focus();
  }

  async function revoke() {
    $('confirm-revoke').close();
    try {
      const revoked = await api('POST', '/v1/admin/leases/' + storyLeaseId + '/revoke',
        {reason: $('revoke-reason').value.trim()});
      $('revoke-result').replaceChildren(el('span', {}, 'Revoked: the lease is now ' + revoked.state + '.'));
      clearProblem();
    } catch (error) {
      showProblem(error);
    }
    await loadStory();
  }

  // ---- updates without reloading ----

  async function refresh() {
    if (refreshing || !token) {
      return;
    }
    refreshing = true;
    try {
      if (!$('leases').hidden) {
        await loadLeases();
      } else if (!$('story').hidden && !$('confirm-revoke').open) {
        await loadStory();
      }
    } finally {
      refreshing = false;
    }
  }

  async function start() {
    $('token-form').addEventListener('submit', (event) => {
      event.preventDefault();
      signIn($('token').value.trim());
    });
    $('local-form').addEventListener('submit', mintLocalToken);
    $('sign-out').addEventListener('click', () => signOut(true));
    $('filters').addEventListener('submit', (event) => {
      event.preventDefault();
      filters = readFilters();
      pageCursor = null;
      loadLeases();
    });
    $('next-page').addEventListener('click', () => {
      pageCursor = nextCursor;
      loadLeases();
    });
    $('first-page').addEventListener('click', () => {
      pageCursor = null;
      loadLeases();
    });
    $('back').addEventListener('click', async () => {
      const from = storyLeaseId;
      storyLeaseId = null;
      show('leases');
      await loadLeases();
      // Back where the operator left: the lease's row when the page still lists it.
      const row = [...document.querySelectorAll('#lease-table .open-lease')].find((b) => b.dataset.leaseId === from);
      (row || $('leases-title')).focus();
    });
    $('revoke-form').addEventListener('submit', askRevoke);
    $('confirm-yes').addEventListener('click', revoke);
    $('confirm-no').addEventListener('click', () => $('confirm-revoke').close());
    filters = readFilters();
    $('zone').textContent = 'Times are in your time zone, ' + ZONE + ' (' + local(Date.now()).zone + '). Hover a ' +
      'time for the exact instant, a key or a name for the whole of it.';
    setInterval(tick, 200);
    setInterval(refresh, POLL_MS);
    try {
      const settings = await (await fetch('settings.json', {cache: 'no-store'})).json();
      $('local-form').hidden = !settings.localTokens;
    } catch (ignored) {
      $('local-form').hidden = true;
    }
    if (token) {
      await signIn(token);
    } else {
      show('sign-in');
    }
  }

  start();
})();
