// gpuledger dashboard: the month and each rental of one user's ledger.
// Plain script, no build step; data from the JSON answers of api/ (see
// dashboard/api.go), charts by uPlot. Money stays the API's exact strings:
// numbers are parsed only to draw.
(function () {
  'use strict';

  var TOKEN_KEY = 'gpuledger.token';
  var THEME_KEY = 'gpuledger.theme';

  var S = {
    en: {
      loading: 'Loading…', month: 'Month', spent: 'Spent', budget: 'Budget', ofBudget: '{0}% used',
      noBudget: 'No budget set', projection: 'Month-end projection', idle: 'Idle cost', burn: 'Burning {0}/h',
      perDay: 'Spend per day', cumulative: 'The month so far', byPlatform: 'By platform',
      byRental: 'By rental', balances: 'Balances', platform: 'Platform', rental: 'Rental', state: 'State',
      total: 'Total', compute: 'Compute', storage: 'Storage', traffic: 'Traffic', other: 'Other',
      balance: 'Balance', runway: 'Runs out', noBurn: 'nothing burns',
      csv: 'Download CSV', noPrice: 'no price',
      unpriced: '{0} line(s) without a price left out', nothing: 'Nothing spent in {0}.',
      noBalances: 'No balances recorded. Type one with /balance in the chat.', back: '← Month',
      gpu: 'GPU', mode: 'Billing', price: 'Price', started: 'Started', released: 'Released',
      agent: 'Agent', yes: 'yes', no: 'no', money: 'Money', timeline: 'Timeline', hoursPerDay: 'Hours per day',
      running: 'running', stopped: 'stopped', released_: 'released', busy: 'busy', idle_: 'idle',
      unknown: 'unknown', silent: 'silent', hours: 'h', minutes: 'min', cumLine: 'spent', budgetLine: 'budget', projLine: 'projection',
      signinTitle: 'Please sign in',
      signinText: 'Open the dashboard from the bot\'s menu button in Telegram, or send /dashboard to the bot for a sign-in link.',
      errorTitle: 'Something went wrong', retry: 'Try again', notFound: 'No such page.', downloadFailed: 'The download failed: {0}',
      timeout: 'The server did not answer within {0} seconds. Check the connection and try again.',
      asOfNow: 'Figures as of {0}', asOfEnd: 'As the month was at its end ({0})', spentSoFar: 'Spent so far',
      budgetPast: 'Not kept for past months', budgetNow: 'today\'s budget: {0}', cumulativePast: 'Spent over the month',
      noAgent: 'no agent', noAgentCount: '{0} rental(s) without an agent: their idle time is unknown',
      atMonthEnd: '{0} at month end', stateSince: '{0} since',
      balRead: 'Read from the platform at {0}', balTyped: 'Typed in with /balance at {0}',
      balFromRead: 'Computed for {0}: the platform\'s reading at {2} ({1}){3}, minus spend since',
      balFromTyped: 'Computed for {0}: the balance typed in at {2} ({1}){3}, minus spend since',
      balFromTopups: 'Computed for {0}: top-ups since {2}{3}, minus spend since', plusTopups: ', plus {0} top-up(s)',
      balancesEnd: 'Balances at month end', moneyAsOf: 'Money over its life, as of {0}', lastPrice: 'Last price',
      receipt: 'Receipt', compare: 'Compare', compareTitle: 'Your own price/performance', warnings: 'Warnings',
      notMeasured: 'Not measured', host: 'Host', jobs: 'Your jobs on it', job: 'Job', setupTax: 'Setup tax', allLabels: 'All jobs',
      team: 'Team {0}', noTeam: 'You were admitted to a team only, and you are in no team now.'
    },
    zh: {
      loading: '加载中…', month: '月份', spent: '已花费', budget: '预算', ofBudget: '已用 {0}%',
      noBudget: '未设置预算', projection: '月末预计', idle: '空闲花费', burn: '每小时 {0}',
      perDay: '每日花费', cumulative: '本月至今', byPlatform: '按平台',
      byRental: '按实例', balances: '余额', platform: '平台', rental: '实例', state: '状态',
      total: '合计', compute: '计算', storage: '存储', traffic: '流量', other: '其他',
      balance: '余额', runway: '预计用完', noBurn: '无消耗',
      csv: '下载 CSV', noPrice: '未定价',
      unpriced: '{0} 条记录未定价，未计入', nothing: '{0}没有花费。',
      noBalances: '没有余额记录。在聊天中用 /balance 录入。', back: '← 月份',
      gpu: 'GPU', mode: '计费方式', price: '价格', started: '开始', released: '释放',
      agent: '代理', yes: '有', no: '无', money: '费用', timeline: '时间线', hoursPerDay: '每日小时数',
      running: '运行中', stopped: '已停止', released_: '已释放', busy: '忙碌', idle_: '空闲',
      unknown: '未知', silent: '失联', hours: '小时', minutes: '分钟', cumLine: '已花费', budgetLine: '预算', projLine: '预计',
      signinTitle: '请先登录',
      signinText: '请在 Telegram 中通过机器人的菜单按钮打开仪表盘，或向机器人发送 /dashboard 获取登录链接。',
      errorTitle: '出错了', retry: '重试', notFound: '没有这个页面。', downloadFailed: '下载失败：{0}',
      timeout: '服务器在 {0} 秒内没有回应。请检查网络后重试。',
      asOfNow: '数据截至 {0}', asOfEnd: '按月末（{0}）的状况', spentSoFar: '目前已花费',
      budgetPast: '往月的预算不保存', budgetNow: '当前预算：{0}', cumulativePast: '本月累计花费',
      noAgent: '无代理', noAgentCount: '{0} 个实例没有代理，空闲时间未知',
      atMonthEnd: '月末{0}', stateSince: '之后{0}',
      balRead: '{0} 从平台读取', balTyped: '{0} 用 /balance 录入',
      balFromRead: '按 {0} 计算：{2} 的平台读数（{1}）{3}，减去此后花费',
      balFromTyped: '按 {0} 计算：{2} 录入的余额（{1}）{3}，减去此后花费',
      balFromTopups: '按 {0} 计算：{2} 以来的充值{3}，减去此后花费', plusTopups: '，加上 {0} 笔充值',
      balancesEnd: '月末余额', moneyAsOf: '整个租期的费用，截至 {0}', lastPrice: '最后价格',
      receipt: '收据', compare: '对比', compareTitle: '你自己的性价比', warnings: '警告',
      notMeasured: '未测得', host: '主机', jobs: '在其上的任务', job: '任务', setupTax: '启动成本', allLabels: '全部任务',
      team: '团队 {0}', noTeam: '你仅被邀请加入团队，而现在不在任何团队中。'
    }
  };

  var app = { lang: 'en', me: null, token: null, initData: null, charts: [], rendered: false, shown: 0 };

  function t(key) {
    var s = (S[app.lang] || S.en)[key];
    var args = arguments;
    return s.replace(/\{(\d)\}/g, function (_, i) { return args[+i + 1]; });
  }
  // The state names of the API, translated.
  function stateName(s) {
    var k = { idle: 'idle_', released: 'released_' }[s] || s;
    return S.en[k] ? t(k) : s;
  }

  // h builds an element: h('p', {class: 'x', test: 'y'}, 'text', child...).
  function h(tag, attrs) {
    var e = document.createElement(tag);
    for (var k in attrs || {}) {
      var v = attrs[k];
      if (v == null || v === false) continue;
      if (k === 'class') e.className = v;
      else if (k === 'test') e.dataset.test = v;
      else if (k === 'on') for (var ev in v) e.addEventListener(ev, v[ev]);
      else e.setAttribute(k, v);
    }
    for (var i = 2; i < arguments.length; i++) add(e, arguments[i]);
    return e;
  }
  function add(e, c) {
    if (c == null || c === false) return;
    if (Array.isArray(c)) c.forEach(function (x) { add(e, x); });
    else e.appendChild(typeof c === 'object' ? c : document.createTextNode(String(c)));
  }

  function money(s, cur) { return s == null ? t('noPrice') : s + ' ' + cur; }
  // idleMoney is a row's idle cost: null means no agent watched it (its
  // idle time is unknown), or, with one, that its compute has no price.
  function idleMoney(r, cur, hasAgent) { return r.idle == null && !hasAgent ? t('noAgent') : money(r.idle, cur); }
  // stateAt names a rental's state on a month's page: as it was at the
  // end of a past month, with its state now when that differs.
  function stateAt(pg, r) {
    var s = stateName(r.state);
    if (pg.current || r.state === 'released') return s;
    s = t('atMonthEnd', s);
    return r.state_now ? s + ' · ' + t('stateSince', stateName(r.state_now)) : s;
  }
  function num(s) { var n = parseFloat(s); return isFinite(n) ? n : 0; }
  function locale() { return app.lang === 'zh' ? 'zh-CN' : 'en-GB'; }
  // formatter makes an Intl.DateTimeFormat once per language, zone and
  // options: each one costs milliseconds to make, and a page formats
  // dozens of times.
  var formatters = {};
  function formatter(opts, tz) {
    var key = locale() + '|' + (tz || '') + '|' + JSON.stringify(opts);
    var f = formatters[key];
    if (!f) {
      var o = Object.assign({}, opts);
      if (tz) o.timeZone = tz;
      // A zone this browser does not know falls back to its own.
      try { f = new Intl.DateTimeFormat(locale(), o); } catch (e) { delete o.timeZone; f = new Intl.DateTimeFormat(locale(), o); }
      formatters[key] = f;
    }
    return f;
  }
  function fmt(iso, opts) {
    if (!iso) return '';
    return formatter(opts || { dateStyle: 'medium', timeStyle: 'short' }, app.me && app.me.tz).format(new Date(iso));
  }
  var MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
  function monthName(ym) {
    var p = ym.split('-');
    return app.lang === 'zh' ? +p[0] + '年' + +p[1] + '月' : MONTHS[+p[1] - 1] + ' ' + +p[0];
  }
  function duration(sec) {
    var hh = Math.floor(sec / 3600), mm = Math.floor(sec % 3600 / 60);
    return hh + ' ' + t('hours') + (mm ? ' ' + mm + ' ' + t('minutes') : '');
  }

  // ---- Telegram bridge, without Telegram's script ----

  var THEME_VARS = ['bg_color', 'text_color', 'hint_color', 'link_color', 'button_color', 'button_text_color',
    'secondary_bg_color', 'header_bg_color', 'bottom_bar_bg_color', 'accent_text_color', 'section_bg_color',
    'section_header_text_color', 'section_separator_color', 'subtitle_text_color', 'destructive_text_color'];

  function applyTheme(params) {
    if (!params || typeof params !== 'object') return;
    var root = document.documentElement.style;
    THEME_VARS.forEach(function (k) {
      var v = params[k];
      if (typeof v === 'string' && /^#[0-9a-fA-F]{3,8}$/.test(v)) root.setProperty('--tg-theme-' + k.replace(/_/g, '-'), v);
    });
    // Colours Telegram does not send (chart grid, stopped segments) follow
    // its background's lightness rather than the device's scheme.
    var m = /^#([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/i.exec(params.bg_color || '');
    if (m) {
      var lum = 0.2126 * parseInt(m[1], 16) + 0.7152 * parseInt(m[2], 16) + 0.0722 * parseInt(m[3], 16);
      document.documentElement.dataset.scheme = lum < 128 ? 'dark' : 'light';
    }
    try { sessionStorage.setItem(THEME_KEY, JSON.stringify(params)); } catch (e) { /* storage off */ }
  }

  function postEvent(type, data) {
    var payload = data === undefined ? '' : JSON.stringify(data);
    try {
      if (window.TelegramWebviewProxy && window.TelegramWebviewProxy.postEvent) {
        window.TelegramWebviewProxy.postEvent(type, payload);
      } else if (window.parent && window.parent !== window) {
        window.parent.postMessage(JSON.stringify({ eventType: type, eventData: data || '' }), '*');
      }
    } catch (e) { /* not inside Telegram */ }
  }

  window.Telegram = window.Telegram || {};
  window.Telegram.WebView = window.Telegram.WebView || {};
  window.Telegram.WebView.receiveEvent = function (type, data) {
    if (type === 'back_button_pressed') location.hash = '#/month/' + (app.lastMonth || (app.me && app.me.month) || '');
        if (type === 'theme_changed' && data && data.theme_params) {
      applyTheme(data.theme_params);
      // Canvas colours are read when a chart is made: draw the page again.
      if (app.redraw) { var y = window.scrollY; app.redraw(); window.scrollTo(0, y); }
    }
  };
  window.addEventListener('message', function (ev) {
    if (ev.source !== window.parent) return;
    try {
      var m = typeof ev.data === 'string' ? JSON.parse(ev.data) : ev.data;
      if (m && m.eventType) window.Telegram.WebView.receiveEvent(m.eventType, m.eventData);
    } catch (e) { /* not ours */ }
  });

  // ---- data ----

  function Refusal(status, body) { this.status = status; this.body = body || {}; }

  // A request with no whole answer within its time is given up, and the
  // page says so with a retry button: on a phone that lost its network a
  // fetch can otherwise hang for minutes behind the loading bar. The
  // browser tests shorten it (window.gpuledgerTimeoutMs, set before the
  // page loads).
  var TIMEOUT_MS = +window.gpuledgerTimeoutMs || 20000;
  var DOWNLOAD_TIMEOUT_MS = 3 * TIMEOUT_MS;
  function TimedOut(ms) { this.message = t('timeout', Math.round(ms / 1000)); }

  // timed fetches url and reads its body with read(response), both within
  // ms; it rejects with TimedOut after that.
  function timed(url, opts, ms, read) {
    var ac = typeof AbortController === 'function' ? new AbortController() : null;
    var late = false;
    var timer = setTimeout(function () { late = true; if (ac) ac.abort(); }, ms);
    if (ac) opts.signal = ac.signal;
    return fetch(url, opts).then(read).then(function (v) {
      clearTimeout(timer);
      if (late) throw new TimedOut(ms);
      return v;
    }, function (err) {
      clearTimeout(timer);
      throw late ? new TimedOut(ms) : err;
    });
  }

  // answer reads a JSON answer, or throws the server's refusal.
  function answer(r) {
    if (r.ok) return r.json();
    return r.json().catch(function () { return {}; }).then(function (b) { throw new Refusal(r.status, b); });
  }

  // api GETs path with the session; raw answers a Blob and the response's
  // headers instead of JSON.
  function api(path, raw) {
    var headers = {};
    if (app.token) headers.Authorization = 'Bearer ' + app.token;
    var opts = { credentials: 'same-origin', headers: headers };
    if (!raw) return timed(path, opts, TIMEOUT_MS, answer);
    return timed(path, opts, DOWNLOAD_TIMEOUT_MS, function (r) {
      if (!r.ok) return answer(r);
      return r.blob().then(function (b) { return { blob: b, headers: r.headers }; });
    });
  }

  function signIn(hash) {
    var q = new URLSearchParams(hash.replace(/^#/, ''));
    var theme = q.get('tgWebAppThemeParams');
    if (theme) { try { applyTheme(JSON.parse(theme)); } catch (e) { /* ignore a bad theme */ } }
    else { try { applyTheme(JSON.parse(sessionStorage.getItem(THEME_KEY))); } catch (e) { /* none */ } }
    try { app.token = sessionStorage.getItem(TOKEN_KEY); } catch (e) { /* storage off */ }
    var data = q.get('tgWebAppData');
    if (!data) return Promise.resolve();
    // Take initData out of the address before anything else can read it.
    history.replaceState(null, '', location.pathname + location.search);
    return exchange(data);
  }

  // exchange trades initData for a session. If the exchange got no
  // answer, the data is kept (in memory only) for the retry button: the
  // server may never have seen it. A refusal drops it.
  function exchange(data) {
    app.initData = null;
    return timed('api/session', { method: 'POST', credentials: 'same-origin', headers: { 'Content-Type': 'text/plain' }, body: data },
      TIMEOUT_MS, answer)
      .then(function (s) {
        app.token = s.token;
        try { sessionStorage.setItem(TOKEN_KEY, s.token); } catch (e) { /* kept in memory only */ }
      }, function (err) {
        if (!(err instanceof Refusal)) app.initData = data;
        throw err;
      });
  }

  // ---- pages ----

  var main = function () { return document.getElementById('main'); };

  function route() {
    var tm = /^#\/team\/(\d{1,16})(?:\/(\d{4}-\d{2}))?$/.exec(location.hash);
    if (tm) return { page: 'team', id: tm[1], month: tm[2] || '' };
    var c = /^#\/compare(?:\/([A-Za-z0-9._-]{1,64}))?$/.exec(location.hash);
    if (c) return { page: 'compare', label: c[1] || '' };
    var m = /^#\/(month|rental)\/([^/]+)$/.exec(location.hash);
    if (m && m[1] === 'month' && /^\d{4}-\d{2}$/.test(m[2])) return { page: 'month', month: m[2] };
    if (m && m[1] === 'rental' && /^\d{1,18}$/.test(m[2])) return { page: 'rental', id: m[2] };
    return { page: 'month', month: app.me ? app.me.month : '' };
  }

  // fetchFor asks for a route's data; without a month the server answers
  // this month, so the first page need not wait for api/me.
  function fetchFor(r) {
    if (r.page === 'team') return api('api/team?team=' + r.id + (r.month ? '&month=' + r.month : ''));
    if (r.page === 'compare') return api('api/compare' + (r.label ? '?label=' + encodeURIComponent(r.label) : ''));
    return r.page === 'rental' ? api('api/rental?id=' + r.id) : api('api/month' + (r.month ? '?month=' + r.month : ''));
  }

  // show draws the page of the address, from data already asked for when
  // given.
  //
  // The first page sets two performance marks (read by the browser tests
  // and the first-render benchmark; dashboard/static.RenderedMark): when
  // the first screen is drawn, and when every chart is. uPlot draws in a
  // microtask, so a task after making a chart it is on screen.
  function show(data) {
    var r = route();
    document.body.dataset.state = 'loading';
    var first = !app.rendered, shown = ++app.shown;
    app.rendered = true;
    // An answer that comes after the address changed again belongs to a
    // page that is not shown any more: it draws nothing and says nothing.
    var current = function () { return shown === app.shown; };
    var p = (data || fetchFor(r)).then(function (pg) {
      // A page returns { rest }, not the promise itself, which would make
      // this wait for it.
      return current() ? ({ rental: renderRental, compare: renderCompare, team: renderTeam }[r.page] || renderMonth)(pg) : { rest: null };
    });
    return p.then(function (drawn) {
      if (first && current()) setTimeout(function () { performance.mark('gpuledger-rendered'); }, 0);
      return drawn.rest;
    }).then(function () {
      if (!current()) return;
      document.body.dataset.state = 'ready';
      if (first) setTimeout(function () { performance.mark('gpuledger-complete'); }, 0);
    }).catch(function (err) { if (current()) fail(err); });
  }

  function clear() {
    drawGen++;
    app.charts.forEach(function (c) { if (c.ro) c.ro.disconnect(); c.u.destroy(); });
    app.charts = [];
    var m = main();
    while (m.firstChild) m.removeChild(m.firstChild);
    return m;
  }

  function fail(err) {
    var m = clear();
    // A person with no ledger of their own (admitted to a team only) is
    // signed in: their refusal is said, not a sign-in page.
    if (err instanceof Refusal && (err.status === 401 || (err.status === 403 && err.body.error !== 'not_personal'))) {
      try { sessionStorage.removeItem(TOKEN_KEY); } catch (e) { /* none */ }
      app.token = null;
      // Both languages: whoever is not signed in has no language yet.
      add(m, h('section', { class: 'card signin', test: 'signin' },
        h('h1', null, S.en.signinTitle), h('p', null, S.en.signinText),
        h('h1', { lang: 'zh' }, S.zh.signinTitle), h('p', { lang: 'zh' }, S.zh.signinText),
        err.body.message ? h('p', { class: 'hint' }, err.body.message) : null));
      document.body.dataset.state = 'signin';
      return;
    }
    var msg = err instanceof Refusal ? (err.body.message || ('HTTP ' + err.status)) : String(err && err.message || err);
    if (err instanceof Refusal && err.status === 404 && !err.body.message) msg = t('notFound');
    add(m, h('section', { class: 'card error', test: 'error' }, h('h1', null, t('errorTitle')), h('p', null, msg),
      h('button', { type: 'button', test: 'retry', on: { click: function () { retry(); } } }, t('retry'))));
    document.body.dataset.state = 'error';
  }

  // figure is a labelled value; words (not an amount) are set smaller.
  function figure(label, value, test, extra, words) {
    return h('div', { class: 'fig' }, h('div', { class: 'label' }, label),
      h('div', { class: 'value' + (words ? ' words' : ''), test: test }, value), extra ? h('div', { class: 'hint' }, extra) : null);
  }

  // table: the first column is text, the rest numbers; columns from
  // wideFrom on are left out on a phone (the CSV has them).
  function table(head, rows, cls, wideFrom) {
    return h('div', { class: 'scroll' }, h('table', { class: cls || '' },
      h('thead', null, h('tr', null, head.map(function (x, i) {
        return h('th', { class: (i ? 'num' : '') + (wideFrom && i >= wideFrom ? ' wide' : '') }, x);
      }))),
      h('tbody', null, rows)));
  }

  function renderMonth(pg) {
    var m = clear();
    app.lastMonth = pg.month;
    app.redraw = function () { renderMonth(pg); };
    postEvent('web_app_setup_back_button', { is_visible: false });
    var months = (app.me.months || []).slice();
    if (months.indexOf(pg.month) < 0) months.push(pg.month);
    if (months.indexOf(app.me.month) < 0) months.unshift(app.me.month);
    months.sort().reverse();
    var pick = h('select', { id: 'month', test: 'month-picker', 'aria-label': t('month'), on: {
      change: function (e) { location.hash = '#/month/' + e.target.value; } } },
    months.map(function (x) { return h('option', { value: x, selected: x === pg.month ? 'selected' : null }, monthName(x)); }));
    add(m, h('div', { class: 'bar' }, h('h1', null, monthName(pg.month)),
      h('p', { class: 'hint asof', test: 'as-of' }, pg.current ? t('asOfNow', fmt(pg.as_of)) : t('asOfEnd', fmt(pg.as_of))), pick,
      h('button', { type: 'button', class: 'csv', test: 'csv', on: { click: function () { download(pg.month, pg.export_url); } } }, t('csv')),
      h('a', { class: 'csv', href: '#/compare', test: 'compare-link' }, t('compare')),
      teamLinks(0),
      h('p', { class: 'hint', id: 'csv-note', test: 'csv-note', role: 'status' })));

    if (!pg.currencies || !pg.currencies.length) add(m, h('p', { class: 'card note', test: 'empty' }, t('nothing', monthName(pg.month))));
    (pg.currencies || []).forEach(function (c) { add(m, currencyCard(pg, c)); });

    if (pg.platforms && pg.platforms.length) {
      add(m, h('section', { class: 'card' }, h('h2', null, t('byPlatform')),
        table([t('platform'), t('total'), t('idle'), t('compute'), t('storage'), t('traffic'), t('other')],
          pg.platforms.map(function (p) {
            var c = p.currency;
            return h('tr', { test: 'platform-' + p.platform + '-' + c }, h('td', null, plat(p)),
              [p.total, p.idle, p.compute, p.storage, p.traffic, p.other].map(function (v, i) {
                return h('td', { class: 'num' + (i ? '' : ' strong') + (i >= 2 ? ' wide' : '') }, money(v, c));
              }));
          }), '', 3)));
    }
    if (pg.rentals && pg.rentals.length) {
      add(m, h('section', { class: 'card' }, h('h2', null, t('byRental')),
        table([t('rental'), t('total')], pg.rentals.map(function (r) {
          var href = '#/rental/' + r.id;
          return h('tr', { class: 'link', test: 'rental-row-' + r.id, on: { click: function () { location.hash = href; } } },
            h('td', null, h('a', { href: href }, r.ref || r.name || ('#' + r.id)),
              h('div', { class: 'hint' }, plat(r) + ' · ' + gpu(r) + ' · ', h('span', { class: 'st st-' + r.state, test: 'row-state' }, stateAt(pg, r))),
              r.unpriced ? h('div', { class: 'hint' }, t('unpriced', r.unpriced)) : null),
            h('td', { class: 'num' }, h('div', { class: 'strong' }, money(r.total, r.currency)),
              h('div', { class: 'hint' }, t('idle') + ' ' + idleMoney(r, r.currency, r.has_agent))));
        }), 'rentals')));
    }
    var bal = h('section', { class: 'card' }, h('h2', null, t(pg.current ? 'balances' : 'balancesEnd')));
    if (!pg.balances || !pg.balances.length) add(bal, h('p', { class: 'note' }, t('noBalances')));
    else add(bal, h('div', { class: 'balances' }, pg.balances.map(function (b) {
      return h('div', { class: 'fig', test: 'balance-' + b.platform + (pg.balances.filter(function (x) { return x.platform === b.platform; }).length > 1 ? '-' + b.currency : '') },
        h('div', { class: 'label' }, plat(b)),
        h('div', { class: 'value' }, money(b.balance, b.currency)),
        h('div', { class: 'hint', test: 'balance-says' }, balanceSays(b)),
        b.burn_per_hour != null ? h('div', { class: 'hint' }, t('burn', money(b.burn_per_hour, b.currency)) + ' · ' + t('runway') + ': ' +
          (b.runs_out_at ? fmt(b.runs_out_at) : t('noBurn'))) : null,
        b.unpriced ? h('div', { class: 'hint' }, t('unpriced', b.unpriced)) : null);
    })));
    add(m, bal);
    drawMonthCharts(pg);
    return { rest: drawPlots() };
  }

  // balanceSays tells what a balance figure is: a reading as it was read
  // or typed, or one the ledger worked out from a reading (or top-ups).
  function balanceSays(b) {
    if (!b.computed) return t(b.source === 'api' ? 'balRead' : 'balTyped', fmt(b.reading_at));
    var key = { api: 'balFromRead', typed: 'balFromTyped' }[b.source] || 'balFromTopups';
    return t(key, fmt(b.as_of), b.reading != null ? money(b.reading, b.currency) : '', fmt(b.reading_at),
      b.top_ups ? t('plusTopups', b.top_ups) : '');
  }

  // plat names a platform as the chat does (the API's platform_name),
  // its key when the answer has no name.
  function plat(x) { return x.platform_name || x.platform; }

  function gpu(r) { return (r.gpu_count > 1 ? r.gpu_count + '× ' : '') + (r.gpu || '?'); }

  // kinds are the categories a currency's daily chart stacks: compute, and
  // the others only in a month that spent on them. lines are the
  // cumulative chart's: the budget and the projection only where there
  // is one. Both the charts and their legends follow them, so a legend
  // never names a line that is not drawn.
  function kinds(c) {
    return ['compute', 'storage', 'traffic', 'other'].filter(function (k, i) {
      return i === 0 || c.days.some(function (d) { return num(d[k]) !== 0; });
    });
  }
  function lines(c) {
    return ['cumLine', 'budgetLine', 'projLine'].filter(function (k) {
      return k === 'cumLine' || (k === 'budgetLine' ? c.budget != null : c.projection != null && c.days.length > 0);
    });
  }

  function currencyCard(pg, c) {
    var cur = c.currency, tot = c.totals;
    var pct = c.budget_percent;
    var barEl = null;
    if (c.budget != null) {
      var fill = h('div', { class: 'fill' + (pct >= 100 ? ' over' : pct >= 80 ? ' warn' : '') });
      fill.style.width = Math.min(100, Math.max(0, pct || 0)) + '%';
      barEl = h('div', { class: 'meter', role: 'progressbar', 'aria-valuenow': pct, 'aria-valuemin': 0, 'aria-valuemax': 100 }, fill);
    }
    var card = h('section', { class: 'card', test: 'currency-' + cur },
      h('h2', null, cur),
      h('div', { class: 'figs' },
        figure(t(pg.current ? 'spentSoFar' : 'spent'), money(tot.total, cur), 'total-' + cur, tot.unpriced ? t('unpriced', tot.unpriced) : null),
        pg.current ? figure(t('budget'), c.budget != null ? money(c.budget, cur) : t('noBudget'), 'budget-' + cur,
          c.budget != null ? t('ofBudget', pct) : null, c.budget == null)
          : figure(t('budget'), t('budgetPast'), 'budget-' + cur, c.budget_now != null ? t('budgetNow', money(c.budget_now, cur)) : null, true),
        c.projection != null ? figure(t('projection'), money(c.projection, cur), 'projection-' + cur,
          c.burn_per_hour != null ? t('burn', money(c.burn_per_hour, cur)) : null) : null,
        figure(t('idle'), money(tot.idle, cur), 'idle-' + cur, c.no_agent ? t('noAgentCount', c.no_agent) : null)),
      barEl,
      h('div', { class: 'charts' },
        h('div', null, h('h3', null, t('perDay')),
          legend(kinds(c)),
          h('div', { class: 'chart', test: 'chart-daily-' + cur, id: 'daily-' + cur, 'aria-label': t('perDay') + ' ' + cur })),
        h('div', null, h('h3', null, t(pg.current ? 'cumulative' : 'cumulativePast')),
          legend(lines(c)),
          h('div', { class: 'chart', test: 'chart-cumulative-' + cur, id: 'cum-' + cur, 'aria-label': t('cumulative') + ' ' + cur }))));
    return card;
  }

  // legend lists chart series: name(key) is its label, .sw-KEY its colour.
  function legend(keys, name) {
    return h('ul', { class: 'legend' }, keys.map(function (k) {
      return h('li', null, h('span', { class: 'sw sw-' + k }), (name || t)(k));
    }));
  }

  // ---- charts ----

  function css(name) { return getComputedStyle(document.documentElement).getPropertyValue(name).trim(); }

  function daysIn(ym) { var p = ym.split('-'); return new Date(Date.UTC(+p[0], +p[1], 0)).getUTCDate(); }

  // axes are drawn in the page's small text (13 px, as .hint), so that
  // the canvas uses a font the page has already loaded.
  function axes(xvals) {
    var fg = css('--hint'), grid = css('--grid');
    var font = '13px ' + getComputedStyle(document.body).fontFamily;
    return [
      { stroke: fg, font: font, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid }, values: xvals },
      { stroke: fg, font: font, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid }, size: 52 }
    ];
  }

  // stacked turns per-category series (bottom first) into running sums,
  // drawn tallest first so each bar shows its part.
  function stacked(cols) {
    var sums = [], acc = cols[0].map(function () { return 0; });
    cols.forEach(function (col) {
      // A day without data (null) stays without a bar.
      acc = acc.map(function (a, i) { return col[i] == null || a == null ? null : a + col[i]; });
      sums.push(acc);
    });
    return sums.reverse();
  }

  // plot queues a chart; drawPlots makes them all. Reading a size or a
  // colour after the page changed lays the page out again, so every
  // colour is read (by the callers, before any chart exists) and every
  // chart's box measured in one pass first.
  //
  // The charts on the first screen are made at once; those below it once
  // the browser has shown that screen, so that nobody waits for what they
  // cannot see yet. drawPlots' promise settles when every chart is made;
  // a page returns it as { rest: promise }.
  var queued = [], drawGen = 0;
  function plot(id, opts, data) { queued.push({ id: id, opts: opts, data: data }); }
  function drawPlots() {
    var q = queued, gen = drawGen;
    queued = [];
    if (typeof uPlot !== 'function') return Promise.resolve();
    q.forEach(function (c) {
      c.el = document.getElementById(c.id);
      if (!c.el) return;
      var box = c.el.getBoundingClientRect();
      c.width = Math.floor(box.width);
      c.now = box.top < window.innerHeight;
    });
    q.forEach(function (c) { if (c.el && c.now) makePlot(c); });
    var rest = q.filter(function (c) { return c.el && !c.now; });
    if (!rest.length) return Promise.resolve();
    return afterPaint().then(function () {
      if (gen === drawGen) rest.forEach(makePlot);
    });
  }
  // afterPaint settles once the browser has had a frame to paint; in a
  // tab that paints no frames (hidden), after 100 ms.
  function afterPaint() {
    return new Promise(function (resolve) {
      var done = false, go = function () { if (!done) { done = true; setTimeout(resolve, 0); } };
      requestAnimationFrame(go);
      setTimeout(go, 100);
    });
  }
  // A chart is never narrower than this, however narrow its box: below
  // it the axes leave no room for bars.
  var MIN_CHART = 160;
  function makePlot(c) {
    var opts = c.opts;
    opts.width = Math.max(MIN_CHART, c.width);
    opts.height = opts.height || 200;
    // Nothing reads the cursor: there is no legend to show its values.
    opts.legend = { show: false };
    opts.cursor = { show: false };
    opts.select = { show: false };
    c.el.setAttribute('role', 'img');
    var ch = { el: c.el, u: new uPlot(opts, c.data, c.el), ro: null };
    // A canvas has a fixed size: the chart follows its box whenever the
    // box changes, not only when the window does (a scroll bar that
    // appears, Telegram's panel resized, a grid column that narrows).
    if (typeof ResizeObserver === 'function') {
      ch.ro = new ResizeObserver(function () { fitChart(ch); });
      ch.ro.observe(c.el);
    }
    app.charts.push(ch);
  }
  function fitChart(c) {
    var w = Math.max(MIN_CHART, Math.floor(c.el.clientWidth));
    if (w !== c.u.width) c.u.setSize({ width: w, height: c.u.height });
  }

  function bars(keys, prefix) {
    return keys.slice().reverse().map(function (k) {
      var c = css(prefix + k);
      return { label: k, fill: c, stroke: c, width: 0, paths: window.uPlot && uPlot.paths.bars({ size: [0.72, 48] }), points: { show: false } };
    });
  }

  // Bars and money start at zero, whatever the smallest day.
  function fromZero(u, min, max) { return [0, max > 0 ? max * 1.08 : 1]; }

  function dayTicks(labels) {
    return function (u, splits) { return splits.map(function (v) { return Number.isInteger(v) && labels[v - 1] ? labels[v - 1] : ''; }); };
  }

  function drawMonthCharts(pg) {
    var n = daysIn(pg.month);
    (pg.currencies || []).forEach(function (c) {
      var keys = kinds(c);
      // The whole month on the axis, as on the cumulative chart below it:
      // on the 2nd, two bars of a month rather than two bars filling the
      // chart. Days to come have none.
      var xs = [], labels = [];
      for (var day = 1; day <= n; day++) { xs.push(day); labels.push(String(day)); }
      var cols = keys.map(function (k) {
        return xs.map(function (x) { var d = c.days[x - 1]; return d ? num(d[k]) : null; });
      });
      plot('daily-' + c.currency, {
        scales: { x: { time: false, range: [0.5, n + 0.5] }, y: { range: fromZero } },
        axes: axes(dayTicks(labels)), series: [{}].concat(bars(keys, '--c-'))
      }, [xs].concat(stacked(cols)));

      var all = [], cum = [], budget = [], proj = [], run = 0;
      for (var i = 1; i <= n; i++) {
        all.push(i);
        var d = c.days[i - 1];
        if (d) { run += num(d.total); cum.push(run); } else cum.push(null);
        budget.push(c.budget != null ? num(c.budget) : null);
        proj.push(null);
      }
      var last = c.days.length;
      if (c.projection != null && last > 0) {
        proj[last - 1] = cum[last - 1];
        proj[n - 1] = num(c.projection);
      }
      var shown = lines(c), series = [{}], data = [all];
      var line = {
        cumLine: [{ label: 'spent', stroke: css('--c-compute'), width: 2, fill: css('--c-fill'), points: { show: false } }, cum],
        budgetLine: [{ label: 'budget', stroke: css('--warn'), width: 1.5, dash: [6, 4], points: { show: false } }, budget],
        projLine: [{ label: 'projection', stroke: css('--hint'), width: 1.5, dash: [3, 3], spanGaps: true, points: { show: false } }, proj]
      };
      shown.forEach(function (k) { series.push(line[k][0]); data.push(line[k][1]); });
      plot('cum-' + c.currency, {
        // The same axis as the bars above, so that a day's point sits
        // under its bar.
        scales: { x: { time: false, range: [0.5, n + 0.5] }, y: { range: fromZero } },
        axes: axes(function (u, splits) { return splits.map(function (v) { return Number.isInteger(v) ? v : ''; }); }),
        series: series
      }, data);
    });
  }

  // Without ResizeObserver, the window's resize is all there is to go by.
  var resizeTimer = null;
  if (typeof ResizeObserver !== 'function') {
    window.addEventListener('resize', function () {
      clearTimeout(resizeTimer);
      resizeTimer = setTimeout(function () { app.charts.forEach(fitChart); }, 100);
    });
  }

  // ---- rental ----

  var STATES = ['busy', 'idle', 'unknown', 'silent', 'running', 'stopped'];

  // receiptFigure is one figure of a receipt, as the server labelled it:
  // the value with its unit, and beneath it the reference and ratio.
  function receiptFigure(f, prefix) {
    var extra = f.ratio_text || (f.measured ? '' : null);
    return h('div', { class: 'fig' + (f.low ? ' low' : ''), test: prefix + f.name },
      h('div', { class: 'label' }, f.label),
      h('div', { class: 'value words' }, f.text), extra ? h('div', { class: 'hint' }, extra) : null);
  }

  // receiptCard is the rental's receipt: what its agent's first bench
  // measured (the agent's claim, said so), warnings first.
  function receiptCard(pg, cur) {
    var rc = pg.receipt;
    if (!rc) return h('section', { class: 'card' }, h('h2', null, t('receipt')), h('p', { class: 'note', test: 'no-receipt' }, pg.no_receipt || ''));
    return h('section', { class: 'card', test: 'receipt' },
      h('h2', null, t('receipt')),
      h('p', { class: 'strong', test: 'receipt-head' }, rc.headline),
      rc.warnings.length ? h('ul', { class: 'warnings', test: 'receipt-warnings' }, rc.warnings.map(function (w) { return h('li', null, w.text); })) : null,
      h('p', { test: 'receipt-per-unit' }, (rc.price_text ? rc.price_text + ' → ' : '') + rc.price_per_tflop_hour_text),
      rc.setup_tax ? h('p', { test: 'receipt-setup' }, t('setupTax') + ': ' + rc.setup_tax.text) : null,
      rc.gpus.map(function (g) {
        return h('div', { test: 'receipt-gpu-' + g.index }, h('h3', null, 'GPU ' + g.index + ' · ' + g.model),
          h('p', { class: 'hint' }, g.reference_text),
          h('div', { class: 'figs' }, g.figures.map(function (f) { return receiptFigure(f, 'fig-' + g.index + '-'); })));
      }),
      h('h3', null, t('host')),
      h('div', { class: 'figs' }, rc.host.map(function (f) { return receiptFigure(f, 'fig-host-'); })),
      rc.skipped.length ? [h('h3', null, t('notMeasured')),
        h('ul', { class: 'hint', test: 'receipt-skipped' }, rc.skipped.map(function (x) { return h('li', null, x.text); }))] : null,
      rc.jobs.length ? [h('h3', null, t('jobs')), table([t('job'), t('money')], rc.jobs.map(function (j) {
        return h('tr', null, h('td', null, (j.label || '—') + ' · ' + duration(j.seconds) + (j.succeeded ? '' : ' (' + j.exit_code + ')')),
          h('td', { class: 'num' }, money(j.money, cur)));
      }))] : null,
      h('p', { class: 'hint', test: 'receipt-claim' }, rc.claim));
  }

  // teamLinks links the user's teams' views, all but team id's (0: all).
  function teamLinks(id) {
    return ((app.me && app.me.teams) || []).filter(function (tm) { return tm.id !== id; }).map(function (tm) {
      return h('a', { class: 'csv', href: '#/team/' + tm.id, test: 'team-link-' + tm.id }, t('team', tm.name));
    });
  }

  // renderTeam is a team's month: its totals per currency and the split
  // by person, by project and by platform (ledger.Split). The server
  // words every heading with the month, and each amount has its currency.
  function renderTeam(pg) {
    var m = clear(), l = pg.labels || {};
    app.redraw = function () { renderTeam(pg); };
    var personal = !app.me || app.me.personal !== false;
    postEvent('web_app_setup_back_button', { is_visible: personal });
    if (personal) add(m, h('a', { class: 'back', href: '#/month/' + (app.lastMonth || app.me.month) }, t('back')));
    var months = (pg.months || []).slice();
    if (months.indexOf(pg.month) < 0) months.push(pg.month);
    months.sort().reverse();
    var pick = h('select', { test: 'team-month-picker', 'aria-label': t('month'), on: {
      change: function (e) { location.hash = '#/team/' + pg.team.id + '/' + e.target.value; } } },
    months.map(function (x) { return h('option', { value: x, selected: x === pg.month ? 'selected' : null }, monthName(x)); }));
    add(m, h('div', { class: 'bar' }, h('h1', { test: 'team-title' }, l.title),
      h('p', { class: 'hint asof', test: 'as-of' }, pg.current ? t('asOfNow', fmt(pg.as_of)) : t('asOfEnd', fmt(pg.as_of))), pick,
      teamLinks(pg.team.id)));
    if (!pg.totals.length) add(m, h('p', { class: 'card note', test: 'empty' }, t('nothing', monthName(pg.month))));
    else {
      add(m, h('section', { class: 'card' }, h('h2', null, l.totals), table([l.currency, l.amount], pg.totals.map(function (c) {
        return h('tr', { test: 'team-total-' + c.currency }, h('td', null, c.currency),
          h('td', { class: 'num strong' }, money(c.total, c.currency), c.unpriced ? h('div', { class: 'hint' }, t('unpriced', c.unpriced)) : null));
      }))));
    }
    var share = function (title, head, rows, key) {
      if (!rows || !rows.length) return;
      add(m, h('section', { class: 'card', test: key }, h('h2', null, title), table([head, l.amount], rows.map(function (r) {
        return h('tr', null, h('td', null, r.name), h('td', { class: 'num' }, money(r.amount, r.currency),
          r.unpriced ? h('div', { class: 'hint' }, t('unpriced', r.unpriced)) : null));
      }))));
    };
    share(l.by_person, l.person, pg.people, 'team-people');
    share(l.by_project, l.project, pg.projects, 'team-projects');
    share(l.by_platform, l.platform, (pg.platforms || []).map(function (p) {
      return { name: plat(p), amount: p.total, currency: p.currency };
    }), 'team-platforms');
    add(m, h('p', { class: 'hint', test: 'team-note' }, l.note));
    return { rest: null };
  }

  // renderCompare is the user's own price/performance table: the cards
  // they rented, the setup tax per platform, and each label's runs.
  function renderCompare(pg) {
    var m = clear(), col = pg.columns || {};
    app.redraw = function () { renderCompare(pg); };
    postEvent('web_app_setup_back_button', { is_visible: true });
    add(m, h('a', { class: 'back', href: '#/month/' + (app.lastMonth || app.me.month) }, t('back')));
    var pick = h('select', { test: 'label-picker', 'aria-label': col.label, on: {
      change: function (e) { location.hash = '#/compare' + (e.target.value ? '/' + e.target.value : ''); } } },
    [h('option', { value: '' }, t('allLabels'))].concat((pg.labels || []).map(function (l) {
      return h('option', { value: l, selected: l === pg.label ? 'selected' : null }, l);
    })));
    add(m, h('div', { class: 'bar' }, h('h1', null, t('compareTitle')), pick));
    if (pg.empty) add(m, h('p', { class: 'card note', test: 'compare-empty' }, pg.empty));
    if (pg.cards.length) {
      add(m, h('section', { class: 'card' }, h('h2', null, t('gpu')),
        table([col.platform, col.per_tflop_hour, col.tensor_tflops, col.hour_per_gpu, col.mem_gbps, col.pcie, col.rentals],
          pg.cards.map(function (c) {
            return h('tr', { test: 'card-' + c.platform + '-' + c.gpu }, h('td', null, plat(c) + ' · ' + c.gpu),
              h('td', { class: 'num strong', title: c.per_tflop_hour_text }, c.per_tflop_hour_price || '—'), h('td', { class: 'num' }, c.tensor_tflops ? String(c.tensor_tflops) : '—'),
              h('td', { class: 'num wide' }, c.hour_per_gpu_text), h('td', { class: 'num wide' }, c.mem_gbps ? String(c.mem_gbps) : '—'),
              h('td', { class: 'num wide' }, c.pcie || '—'), h('td', { class: 'num wide' }, c.rentals + ' (' + c.benched + ')'));
          }), 'cmp', 3)));
    }
    if (pg.setup.length) {
      add(m, h('section', { class: 'card' }, h('h2', null, col.setup),
        table([col.platform, col.setup], pg.setup.map(function (x) {
          return h('tr', { test: 'setup-' + x.platform + '-' + x.currency }, h('td', null, plat(x)), h('td', { class: 'num' }, x.text));
        }), 'cmp')));
    }
    pg.tables.forEach(function (lt) {
      add(m, h('section', { class: 'card', test: 'label-' + lt.label }, h('h2', null, col.label + ': ' + lt.label),
        table([col.platform, col.money, col.time, col.runs], lt.rows.map(function (r) {
          return h('tr', null, h('td', null, plat(r) + ' · ' + r.gpu), h('td', { class: 'num strong' }, r.money_text),
            h('td', { class: 'num' }, r.time_text), h('td', { class: 'num wide' }, h('span', { class: 'hint' }, r.rests_on)));
        }), 'cmp', 3)));
    });
    add(m, h('p', { class: 'hint', test: 'compare-claim' }, pg.claim));
    return { rest: null };
  }

  function renderRental(pg) {
    var m = clear(), r = pg.rental, cur = r.currency;
    app.redraw = function () { renderRental(pg); };
    // Inside Telegram its own back button leads back to the month.
    postEvent('web_app_setup_back_button', { is_visible: true });
    var back = '#/month/' + (app.lastMonth || app.me.month);
    add(m, h('a', { class: 'back', href: back }, t('back')));
    add(m, h('section', { class: 'card', test: 'rental-' + r.id },
      h('h1', { test: 'rental-name' }, r.ref || r.name || ('#' + r.id)),
      h('dl', { class: 'facts' },
        h('dt', null, t('platform')), h('dd', { test: 'rental-platform' }, plat(r) + (r.platform_id ? ' · ' + r.platform_id : '')),
        h('dt', null, t('gpu')), h('dd', null, gpu(r)),
        h('dt', null, t('state')), h('dd', { test: 'rental-state' }, h('span', { class: 'st st-' + r.state }, stateName(r.state))),
        h('dt', null, t('mode')), h('dd', { test: 'rental-mode' }, pg.mode_name || pg.mode),
        h('dt', null, t(pg.released_at ? 'lastPrice' : 'price')), h('dd', { test: 'rental-price' }, pg.price == null ? t('noPrice') : pg.price_text || money(pg.price, cur) + (pg.price_unit ? '/' + pg.price_unit : '')),
        h('dt', null, t('started')), h('dd', { test: 'rental-started' }, fmt(pg.started_at)),
        pg.released_at ? [h('dt', null, t('released')), h('dd', null, fmt(pg.released_at))] : null,
        h('dt', null, t('agent')), h('dd', null, pg.has_agent ? t('yes') : t('no')))));
    add(m, h('section', { class: 'card' }, h('h2', { test: 'rental-money-head' }, pg.as_of ? t('moneyAsOf', fmt(pg.as_of)) : t('money')),
      h('div', { class: 'figs' },
        ['compute', 'storage', 'traffic', 'other', 'total'].map(function (k) {
          return figure(t(k), money(r[k], cur), 'rental-' + k);
        }),
        figure(t('idle'), idleMoney(r, cur, pg.has_agent), 'rental-idle', pg.has_agent ? duration(r.idle_seconds) + ' / ' + duration(r.running_seconds) : null)),
      r.unpriced ? h('p', { class: 'hint' }, t('unpriced', r.unpriced)) : null));
    add(m, receiptCard(pg, cur));
    add(m, h('section', { class: 'card' }, h('h2', null, t('timeline')), strip(pg.timeline || []), legend(STATES, stateName),
      h('h3', null, t('hoursPerDay')),
      h('div', { class: 'chart', test: 'chart-hours', id: 'hours', 'aria-label': t('hoursPerDay') })));
    var days = pg.days || [];
    var xs = days.map(function (_, i) { return i + 1; });
    var labels = days.map(function (d) { return d.day.slice(5); });
    var cols = STATES.map(function (s) { return days.map(function (d) { return (d[s + '_s'] || 0) / 3600; }); });
    plot('hours', {
      scales: { x: { time: false, range: [0.5, Math.max(xs.length, 1) + 0.5] }, y: { range: [0, 24] } },
      axes: axes(dayTicks(labels)), series: [{}].concat(bars(STATES, '--s-'))
    }, [xs].concat(stacked(cols)));
    return { rest: drawPlots() };
  }

  function strip(segs) {
    var wrap = h('div', { class: 'strip', test: 'timeline', role: 'img', 'aria-label': t('timeline') });
    if (!segs.length) return wrap;
    var t0 = Date.parse(segs[0].from), t1 = Date.parse(segs[segs.length - 1].to), span = Math.max(1, t1 - t0);
    segs.forEach(function (s) {
      var a = Date.parse(s.from), b = Date.parse(s.to);
      var e = h('div', { class: 'seg st-bg-' + s.state, test: 'segment', 'data-state': s.state,
        title: stateName(s.state) + ': ' + fmt(s.from) + ' – ' + fmt(s.to) });
      e.style.width = ((b - a) / span * 100) + '%';
      wrap.appendChild(e);
    });
    return h('div', null, wrap, h('div', { class: 'ends hint' }, h('span', null, fmt(segs[0].from)), h('span', null, fmt(segs[segs.length - 1].to))));
  }

  // ---- CSV: fetched with the same sign-in, saved as a Blob (a plain link
  // would not carry the bearer token) ----

  function download(month, path) {
    var note = document.getElementById('csv-note');
    if (note) note.textContent = '';
    var name = 'gpuledger-' + month + '.csv';
    api(path || 'api/export.csv?month=' + month, true).then(function (got) {
      var m = /filename="?([^";]+)"?/.exec(got.headers.get('Content-Disposition') || '');
      if (m) name = m[1];
      var url = URL.createObjectURL(got.blob);
      var a = h('a', { href: url, download: name, class: 'hidden' });
      document.body.appendChild(a);
      a.click();
      setTimeout(function () { URL.revokeObjectURL(url); a.remove(); }, 1000);
    }).catch(function (err) {
      if (err instanceof Refusal && (err.status === 401 || err.status === 403)) return fail(err);
      if (note) note.textContent = t('downloadFailed', err instanceof Refusal ? (err.body.message || 'HTTP ' + err.status) : (err && err.message || err));
    });
  }

  // ---- start ----

  // domReady settles once the document is parsed.
  var domReady = new Promise(function (resolve) {
    if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', resolve);
    else resolve();
  });

  // loadCharts runs the chart library, which index.html has the browser
  // fetch early (rel=preload) but not run: running it costs the page tens
  // of milliseconds (it sets up the browser's number formatting), so it
  // runs once the page's own requests are on their way and overlaps with
  // them instead of holding them back.
  var chartsLoaded = null;
  function loadCharts() {
    if (!chartsLoaded) {
      chartsLoaded = new Promise(function (resolve) {
        var s = document.createElement('script');
        s.src = 'static/uPlot.iife.min.js';
        // Without the library the page still shows every figure.
        s.onload = s.onerror = function () { resolve(); };
        document.head.appendChild(s);
      });
    }
    return chartsLoaded;
  }

  function start() {
    var nav = (navigator.language || '').toLowerCase();
    app.lang = nav.indexOf('zh') === 0 ? 'zh' : 'en';
    var hash = location.hash;
    // Telegram shows its placeholder until the page says it is ready.
    postEvent('web_app_ready');
    postEvent('web_app_expand');
    var signed = signIn(hash);
    teamFromQuery();
    // The library runs while Telegram's sign-in is on its way (a link's
    // cookie needs none): the requests below go out first either way, as
    // a script added now runs a task later.
    loadCharts();
    boot(signed);
  }

  // teamFromQuery moves the team of a first load's query (?team=ID: the
  // bot's button under a reply about a team's ledger) to the team's
  // route, #/team/ID. The bot cannot put the route in the fragment, where
  // Telegram writes its launch data (signIn has taken that out by now).
  // An address that names a page already keeps it. The query is dropped,
  // so a reload shows the page the user is on. A team they are not in is
  // the team page's own 404, said as any error: never another page.
  function teamFromQuery() {
    var q = new URLSearchParams(location.search), id = q.get('team');
    if (id === null) return;
    q.delete('team');
    var rest = q.toString(), hash = location.hash;
    if (!/^#\//.test(hash) && /^\d{1,16}$/.test(id)) hash = '#/team/' + id;
    history.replaceState(null, '', location.pathname + (rest ? '?' + rest : '') + hash);
  }

  // boot loads the first page once signed: its data and the user's
  // facts (api/me) together. A failure shows the error, whose retry
  // button boots again until the user's facts have come.
  var listening = false;
  function boot(signed) {
    var first;
    return signed
      .then(function () {
        first = fetchFor(route());
        var me = api('api/me');
        // A person admitted to a team only has no month of their own
        // (403 not_personal): their team's page comes instead, below.
        var firstOK = first.then(null, function (err) {
          if (err instanceof Refusal && err.body.error === 'not_personal') return null;
          throw err;
        });
        return Promise.all([me, firstOK, loadCharts(), domReady]);
      })
      .then(function (got) {
        var me = got[0];
        app.me = me;
        app.lang = S[me.lang] ? me.lang : 'en';
        document.documentElement.lang = app.lang === 'zh' ? 'zh-CN' : 'en';
        var who = document.getElementById('who');
        if (who) who.textContent = me.name || '';
        if (!listening) {
          listening = true;
          window.addEventListener('hashchange', function () { show(); });
        }
        if (me.personal === false && route().page !== 'team') {
          first.catch(function () { /* replaced by the team's page */ });
          var tm = (me.teams || [])[0];
          if (!tm) return fail(new Refusal(403, { error: 'not_personal', message: t('noTeam') }));
          history.replaceState(null, '', location.pathname + location.search + '#/team/' + tm.id);
          return show();
        }
        return show(first);
      })
      .catch(function (err) { return domReady.then(function () { fail(err); }); });
  }

  // retry is the error's button: the page again, or, when the first load
  // failed, the first load (with the sign-in, if that was what failed).
  function retry() {
    if (app.me) return show();
    add(clear(), h('p', { class: 'loading', id: 'loading', role: 'status', 'aria-label': t('loading') }));
    document.body.dataset.state = 'loading';
    return boot(app.initData && !app.token ? exchange(app.initData) : Promise.resolve());
  }

  // For the browser test: both languages must have the same strings.
  window.gpuledgerStrings = S;

  start();
})();
