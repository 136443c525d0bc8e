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

  let token = sessionStorage.getItem(TOKEN_KEY);
  let filters = {};
  let pageCursor = null; // the cursor of the page shown (null: the first)
  let nextCursor = null;
  let storyLeaseId = null;
  let storyLease = null;
  let refreshing = false;
  const countdowns = new Map(); // element -> deadline on performance.now()'s clock

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
    children.forEach((child) => node.append(child === null || child === undefined ? '' : child));
    return node;
  }

  function showProblem(error) {
    const problem = error.problem || {title: 'The request failed', detail: String(error.message || error)};
    const box = $('problem');
    box.replaceChildren(el('strong', {}, problem.title), problem.detail ? problem.detail : '');
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
  }

  function target(lease) {
    return lease.target.type + ':' + lease.target.value;
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
    $('who').textContent = 'Signed in as ' + (c.sub || '?') + ' of tenant ' + (c.tenant || '?') + ' (' +
      scopes(token).join(', ') + ')';
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
    const rows = page.items.map((lease) => el('tr', {'data-lease-id': lease.leaseId},
      el('td', {}, el('button', {type: 'button', className: 'link open-lease', 'data-lease-id': lease.leaseId,
        onclick: () => openStory(lease.leaseId)}, lease.key)),
      el('td', {}, lease.holder),
      el('td', {}, lease.owner),
      el('td', {className: 'number'}, String(lease.fencingToken)),
      el('td', {className: 'state state-' + lease.state}, lease.state),
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
    let keyLeases;
    try {
      lease = await api('GET', '/v1/leases/' + storyLeaseId);
      events = await allEvents(storyLeaseId);
      keyLeases = await api('GET', '/v1/leases?' + query({
        state: 'any', program: lease.program, actor: lease.actor, targetType: lease.target.type,
        target: lease.target.value, limit: 100
      }));
    } catch (error) {
      showProblem(error);
      return;
    }
    clearProblem();
    storyLease = lease;
    $('story-title').textContent = 'Lease of ' + lease.key;
    const fields = [
      ['State', el('span', {className: 'state state-' + lease.state}, lease.state)],
      ['Expires in', countdown(lease)],
      ['Holder', lease.holder], ['Owner', lease.owner], ['Fencing token', String(lease.fencingToken)],
      ['Key', lease.key], ['Target', target(lease)], ['Acquired', lease.acquiredAt],
      ['Renewed', lease.renewedAt || '—'], ['Expires at', lease.expiresAt], ['Ends at the latest', lease.maxExpiresAt],
      ['Ended', lease.endedAt ? lease.endedAt + ' (' + lease.endReason + ')' : '—'],
      ['TTL', lease.ttlSeconds + ' s'], ['Lease id', lease.leaseId], ['Trace id', lease.traceId || '—'],
      ['Job id', lease.jobId || '—']
    ];
    $('story-summary').replaceChildren(...fields.flatMap(([name, value]) => [el('dt', {}, name), el('dd', {}, value)]));
    $('revoke-form').hidden = !(isAdmin() && lease.state === 'active');
    $('timeline').replaceChildren(...timeline(events));
    const sameKey = keyLeases.items.filter((other) => other.operation === lease.operation);
    $('key-leases').tBodies[0].replaceChildren(...sameKey.map((other) => el('tr',
      other.leaseId === lease.leaseId ? {'aria-current': 'true', className: 'current'} : {},
      el('td', {className: 'number'}, other.leaseId === lease.leaseId ? String(other.fencingToken)
        : el('button', {type: 'button', className: 'link', onclick: () => openStory(other.leaseId)},
          String(other.fencingToken))),
      el('td', {}, other.owner), el('td', {}, other.holder),
      el('td', {className: 'state state-' + other.state}, other.state),
      el('td', {}, other.acquiredAt), el('td', {}, other.endedAt || '—'))));
  }

  /** The events as list items, consecutive renewals grouped with their count and interval. */
  function timeline(events) {
    const items = [];
    for (let i = 0; i < events.length; i++) {
      const event = events[i];
      if (event.type === 'RENEWED') {
        let j = i;
        while (j + 1 < events.length && events[j + 1].type === 'RENEWED') {
          j++;
        }
        items.push(renewals(events.slice(i, j + 1)));
        i = j;
      } else {
        items.push(transition(event));
      }
    }
    return items;
  }

  function renewals(group) {
    const first = group[0];
    const last = group[group.length - 1];
    if (group.length === 1) {
      return el('li', {className: 'event-RENEWED'}, 'Renewed by ' + first.principal + ' at ' + first.at,
        meta(first));
    }
    // The interval between the group's renewals, from the server's instants (never the browser's clock).
    const interval = (Date.parse(last.at) - Date.parse(first.at)) / (group.length - 1);
    const every = interval < 1000 ? Math.round(interval) + ' ms' : (interval / 1000).toFixed(1) + ' s';
    return el('li', {className: 'event-RENEWED', 'data-count': String(group.length)},
      'Renewed ' + group.length + ' times by ' + first.principal + ', about every ' + every + ', from ' + first.at +
      ' to ' + last.at, meta(last));
  }

  function transition(event) {
    const text = {
      ACQUIRED: 'Granted to ' + event.principal + ' with fencing token ' + event.fencingToken + ' at ' + event.at,
      RELEASED: 'Released by ' + event.principal + ' at ' + event.at,
      EXPIRED: 'Expired' + (event.details && event.details.expiresAt ? ' at ' + event.details.expiresAt : '') +
        ', recorded by ' + event.principal + ' at ' + event.at,
      REVOKED: 'Revoked by ' + event.principal + ' at ' + event.at + ': ' +
        (event.details && event.details.reason ? event.details.reason : '')
    }[event.type] || event.type + ' by ' + event.principal + ' at ' + event.at;
    return el('li', {className: 'event-' + event.type}, text, meta(event));
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
    $('confirm-text').textContent = 'Revoke the lease of key ' + storyLease.key + ', held by ' + storyLease.holder +
      ' (owner ' + storyLease.owner + ', fencing token ' + storyLease.fencingToken + ')? Its holder loses it at ' +
      'once, and the key is free.';
    $('confirm-revoke').showModal();
    $('confirm-no').focus();
  }

  async function revoke() {
    $('confirm-revoke').close();
    try {
      const revoked = await api('POST', '/v1/admin/leases/' + storyLeaseId + '/revoke',
        {reason: $('revoke-reason').value.trim()});
      $('revoke-result').textContent = 'Revoked: the lease is now ' + revoked.state + '.';
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
