// ratelab's one browser script. The pages carry no inline script (their
// Content-Security-Policy forbids it): this file draws every chart from the
// option JSON in its element's data-option attribute, streams run progress
// over Server-Sent Events, and makes the new-sweep form friendlier. Every
// page works without it; it only adds.
(function () {
  'use strict';

  document.documentElement.classList.add('js');

  // Charts: <div class="chart" data-option="{...}">. echarts (1 MB) is
  // loaded only by a page that has one, from the hashed URL the page names
  // (<html data-echarts>).
  var charts = [];
  function loadCharts() {
    if (!document.querySelector('div.chart[data-option]')) {
      return;
    }
    if (typeof echarts !== 'undefined') {
      drawCharts();
      return;
    }
    var src = document.documentElement.getAttribute('data-echarts');
    if (!src) {
      return;
    }
    var s = document.createElement('script');
    s.src = src;
    s.addEventListener('load', drawCharts);
    document.head.appendChild(s);
  }
  // A value axis' pointer label (the tooltip's header) prints the value as
  // the option gives it (the server rounds each to its measure's places, a
  // swept value stays as the config gives it): echarts' own label pads
  // every value to the most places any has (85.00 beside 70.25).
  function exactAxisValues(option) {
    [].concat(option.xAxis || [], option.yAxis || []).forEach(function (ax) {
      if (!ax || (ax.type !== 'value' && ax.type !== 'log')) {
        return;
      }
      ax.axisPointer = ax.axisPointer || {};
      ax.axisPointer.label = ax.axisPointer.label || {};
      if (!ax.axisPointer.label.formatter) {
        ax.axisPointer.label.formatter = function (p) {
          return echarts.format.addCommas(Number(Number(p.value).toPrecision(12)));
        };
      }
    });
  }
  // A point's tooltip (items with a "tip": the Pareto dots, the
  // settings' lines): its series, its lines (point, setting, scenario) as
  // text, then each axis' name with the item's value there.
  function pointTips(option) {
    (option.series || []).forEach(function (s) {
      if (!(s.data || []).some(function (d) { return d && d.tip; })) {
        return;
      }
      s.tooltip = s.tooltip || {};
      s.tooltip.formatter = function (p) {
        var enc = echarts.format.encodeHTML;
        var lines = [p.marker + enc(p.seriesName)];
        ((p.data && p.data.tip) || []).forEach(function (t) { lines.push(enc(t)); });
        var axes = option.parallelAxis || [].concat(option.xAxis || [], option.yAxis || []).slice(0, 2);
        var vals = Array.isArray(p.value) ? p.value : [];
        axes.forEach(function (ax, i) {
          var d = ax.dim !== undefined ? ax.dim : i;
          if (ax.name && typeof vals[d] === 'number') {
            lines.push(enc(ax.name) + ': ' + echarts.format.addCommas(vals[d]));
          }
        });
        return lines.map(function (l) { return '<div>' + l + '</div>'; }).join('');
      };
    });
  }
  // Clicking an item that is a sweep point (a Pareto dot, a setting's
  // line) shows it in Deploy and Over time: the page's address with
  // ?point=N, as the results table's links.
  function selectOnClick(chart) {
    chart.on('click', function (p) {
      if (!p.data || typeof p.data.point !== 'number') {
        return;
      }
      var u = new URL(window.location.href);
      u.searchParams.set('point', String(p.data.point));
      u.hash = 'deploy';
      window.location.assign(u.toString());
    });
  }
  // drawCharts draws every chart not inside a closed <details> (the run
  // page's sections open on demand): the others when their section opens.
  var resizing = false;
  function drawCharts() {
    if (typeof echarts === 'undefined') {
      return;
    }
    drawIn(document);
    document.querySelectorAll('details').forEach(function (d) {
      d.addEventListener('toggle', function () {
        if (d.open) {
          drawIn(d);
        }
      });
    });
    if (resizing) {
      return;
    }
    resizing = true;
    var pending = null;
    window.addEventListener('resize', function () {
      clearTimeout(pending);
      pending = setTimeout(function () {
        charts.forEach(function (c) { c.resize(); });
      }, 100);
    });
  }
  function drawIn(root) {
    root.querySelectorAll('div.chart[data-option]:not([data-drawn])').forEach(function (el) {
      if (el.closest('details:not([open])')) {
        return;
      }
      var option;
      try {
        option = JSON.parse(el.getAttribute('data-option'));
      } catch (e) {
        el.textContent = 'This chart could not be read: ' + e.message;
        return;
      }
      exactAxisValues(option);
      pointTips(option);
      var chart = echarts.init(el, null, { renderer: 'canvas' });
      chart.setOption(option);
      selectOnClick(chart);
      el.setAttribute('data-drawn', 'true');
      charts.push(chart);
    });
  }
  // An address pointing into a closed section (#results, a sort link's
  // #settings, the page's own section links) opens it.
  function openTarget() {
    var id = decodeURIComponent(window.location.hash.slice(1));
    var el = id && document.getElementById(id);
    if (!el) {
      return;
    }
    var opened = false;
    for (var d = el.closest('details'); d; d = d.parentElement && d.parentElement.closest('details')) {
      if (!d.open) {
        d.open = true;
        opened = true;
      }
    }
    if (opened) {
      el.scrollIntoView();
    }
  }
  window.addEventListener('hashchange', openTarget);

  // Live progress: <section data-events="/runs/ID/events">.
  function followProgress() {
    var box = document.querySelector('[data-events]');
    if (!box || !window.EventSource) {
      return;
    }
    var bar = document.getElementById('run-progress');
    var text = document.getElementById('run-progress-text');
    var badge = document.querySelector('#run-status .badge');
    var source = new EventSource(box.getAttribute('data-events'));
    var finished = false;
    var seen = 0;
    source.addEventListener('progress', function (msg) {
      var ev = JSON.parse(msg.data);
      box.setAttribute('data-seen', String(++seen)); // events received, for tests and curious readers
      // reading: how far a streamed pass has got, in points (runner.Event).
      var reading = ev.reading || 0;
      if (bar) {
        bar.max = Math.max(ev.total, 1);
        bar.value = ev.done + reading;
      }
      if (text) {
        var streamed = '';
        if (reading > 0 && ev.total > 0) {
          // 99% at most: a pass that has read everything still measures its points.
          streamed = ' · ' + Math.min(99, Math.floor(100 * (ev.done + reading) / ev.total)) + '% done';
        }
        text.textContent = ev.done + ' / ' + ev.total + ' points' + streamed + ' · ' + ev.status;
      }
      if (badge) {
        badge.textContent = ev.status;
        badge.className = 'badge status-' + ev.status;
      }
      if (['done', 'failed', 'cancelled', 'interrupted'].indexOf(ev.status) >= 0) {
        finished = true;
        source.close();
        window.location.reload();
      }
    });
    source.addEventListener('error', function () {
      // The stream ended (server restart or end of run): reload to show the
      // stored state, unless a final event already did.
      if (!finished && source.readyState === EventSource.CLOSED) {
        setTimeout(function () { window.location.reload(); }, 2000);
      }
    });
  }

  // Form: show only the inputs of each row's chosen type.
  function kindRow(row) {
    var select = row.querySelector('select[data-kind]');
    if (!select) {
      return;
    }
    var doc = row.querySelector('.doc');
    function apply() {
      var kind = select.value;
      row.querySelectorAll('[data-for]').forEach(function (field) {
        var kinds = field.getAttribute('data-for').split(' ');
        field.hidden = kinds.indexOf(kind) < 0;
      });
      if (doc && select.selectedOptions.length) {
        doc.textContent = select.selectedOptions[0].title || '';
      }
    }
    select.addEventListener('change', apply);
    apply();
  }
  function typeFields() {
    document.querySelectorAll('[data-kind-row]').forEach(kindRow);
  }

  // "+ Add limiter" and "+ Add workload part" copy the row in their
  // <template> (rendered by the server with the number 987654) under the
  // next free row number, without posting the form; without JavaScript
  // they post it and the server adds the row.
  var templateIndex = '987654';
  function addRows() {
    document.querySelectorAll('button[data-add]').forEach(function (b) {
      var tpl = document.getElementById(b.getAttribute('data-add'));
      var prefix = b.getAttribute('data-prefix');
      if (!tpl || !prefix || !b.form) {
        return;
      }
      b.addEventListener('click', function (e) {
        e.preventDefault();
        var next = 0;
        var re = new RegExp('^' + prefix + '\\.(\\d+)\\.');
        Array.prototype.forEach.call(b.form.elements, function (el) {
          var m = re.exec(el.name || '');
          if (m) {
            next = Math.max(next, Number(m[1]) + 1);
          }
        });
        var holder = document.createElement('div');
        holder.innerHTML = tpl.innerHTML.split(templateIndex).join(String(next));
        var row = holder.querySelector('fieldset.row');
        if (!row) {
          return;
        }
        tpl.parentNode.insertBefore(row, tpl); // after the last row
        var count = tpl.parentNode.querySelectorAll('fieldset.row').length;
        var legend = row.querySelector('legend .row-name') || row.querySelector('legend');
        if (legend) {
          legend.textContent = legend.textContent.replace(/\d+$/, String(count));
        }
        kindRow(row);
        var first = row.querySelector('select, input, textarea');
        if (first) {
          first.focus();
        }
      });
    });
  }

  // "+ Add objective" appends the picked metric, op and target to the
  // objectives' text in place; without JavaScript it posts the form and
  // the server appends the line.
  function objectivePicker() {
    var b = document.getElementById('add-objective');
    if (!b || !b.form) {
      return;
    }
    var text = document.getElementById(b.getAttribute('data-objective-target'));
    var metric = b.form.elements['objective_metric'];
    var op = b.form.elements['objective_op'];
    var value = b.form.elements['objective_value'];
    if (!text || !metric || !op || !value) {
      return;
    }
    b.addEventListener('click', function (e) {
      e.preventDefault();
      if (!metric.value) {
        metric.focus();
        return;
      }
      var body = text.value.replace(/[\r\n]+$/, '');
      text.value = (body ? body + '\n' : '') + metric.value + ' ' + op.value + ' ' + value.value.trim() + '\n';
      value.value = '';
      metric.value = '';
      text.dispatchEvent(new Event('input', { bubbles: true }));
      text.focus();
    });
  }

  // The error summary's links focus their fields (opening a closed
  // <details> around one).
  function errorLinks() {
    document.querySelectorAll('.error-summary a[data-focus]').forEach(function (a) {
      a.addEventListener('click', function (e) {
        var el = document.getElementById(a.getAttribute('data-focus'));
        if (!el) {
          return;
        }
        e.preventDefault();
        for (var p = el.parentElement; p; p = p.parentElement) {
          if (p.tagName === 'DETAILS') {
            p.open = true;
          }
        }
        el.scrollIntoView({ block: 'center' });
        el.focus();
      });
    });
  }

  // The form's folded sections say what they hold in their summary line,
  // by the rule web/form/sections.go writes them with as served: each
  // shown input given, in page order, "Label value unit" (a select
  // "Label value"; a text area its label, its lines (data-summary="lines")
  // or its JSON object's keys, sorted, with each list's length
  // (data-summary="keys")), joined by ", "; else the empty text.
  function ownText(el) {
    var t = '';
    el.childNodes.forEach(function (n) {
      if (n.nodeType === 3) {
        t += n.textContent;
      }
    });
    return t.trim();
  }
  function areaText(input, label) {
    var v = input.value;
    if (!v.trim()) {
      return '';
    }
    if (input.dataset.summary === 'lines') {
      return v.split('\n').map(function (l) { return l.trim(); }).filter(Boolean).join(', ');
    }
    if (input.dataset.summary === 'keys') {
      var o;
      try {
        o = JSON.parse(v);
      } catch (e) {
        return label;
      }
      if (o === null) {
        return '';
      }
      if (typeof o !== 'object' || Array.isArray(o)) {
        return label;
      }
      return Object.keys(o).sort().map(function (k) {
        return Array.isArray(o[k]) ? k + ' ' + o[k].length : k;
      }).join(', ');
    }
    return label;
  }
  function sectionText(d) {
    var items = [];
    d.querySelectorAll('.field').forEach(function (field) {
      if (field.closest('[data-section]') !== d) {
        return;
      }
      for (var p = field; p && p !== d; p = p.parentElement) {
        if (p.hidden) {
          return;
        }
      }
      var input = field.querySelector('select, textarea, input:not([type=file])');
      var label = field.querySelector('label');
      if (!input || !label) {
        return;
      }
      var name = ownText(label);
      var item = '';
      if (input.tagName === 'SELECT') {
        item = input.value ? name + ' ' + input.value : '';
      } else if (input.tagName === 'TEXTAREA') {
        item = areaText(input, name);
      } else if (input.value.trim()) {
        var unit = label.querySelector('.unit');
        item = name + ' ' + input.value.trim() + (unit ? ' ' + unit.textContent.trim() : '');
      }
      if (item) {
        items.push(item);
      }
    });
    var out = d.querySelector('.section-summary');
    return items.length ? items.join(', ') : (out ? out.dataset.empty : '');
  }
  function sectionSummaries(form) {
    form.querySelectorAll('[data-section]').forEach(function (d) {
      var out = d.querySelector('.section-summary');
      if (out) {
        out.textContent = sectionText(d);
      }
    });
  }

  // The live count: the form posted to the lab as the user types (400 ms
  // after the last key), which counts it by the engine's rule
  // (POST /api/form/count) and answers the line to show.
  function liveCount() {
    var line = document.getElementById('sweep-count');
    var form = document.getElementById('sweep-form');
    if (!line || !form || !window.fetch || !window.FormData) {
      return;
    }
    var timer = null;
    var asked = 0;
    function count() {
      var n = ++asked;
      line.setAttribute('aria-busy', 'true');
      fetch(line.dataset.countUrl, { method: 'POST', body: new FormData(form), credentials: 'same-origin' })
        .then(function (r) {
          if (!r.ok) {
            throw new Error('HTTP ' + r.status);
          }
          return r.json();
        })
        .then(function (c) {
          if (n !== asked) {
            return;
          }
          line.textContent = c.text;
          line.dataset.points = String(c.points);
          form.querySelectorAll('.multiplies').forEach(function (el) { el.classList.remove('multiplies'); });
          (c.lists || []).forEach(function (id) {
            var el = document.getElementById(id);
            if (el) {
              el.classList.add('multiplies'); // the inputs the line names
            }
          });
          line.classList.toggle('not-counted', !c.runs);
          line.removeAttribute('aria-busy');
        })
        .catch(function () {
          if (n === asked) {
            line.textContent = 'Not counted: the lab did not answer.';
            line.classList.add('not-counted');
            line.removeAttribute('aria-busy');
          }
        });
    }
    function changed() {
      sectionSummaries(form);
      clearTimeout(timer);
      timer = setTimeout(count, 400);
    }
    form.addEventListener('input', changed);
    form.addEventListener('change', changed);
    form.addEventListener('click', function (e) {
      if (e.target.closest('button[data-add]')) { // a row added in place
        setTimeout(changed, 0);
      }
    });
  }

  // Preset menu and point pickers submit on change.
  function autoSubmit() {
    document.querySelectorAll('select[data-autosubmit]').forEach(function (select) {
      select.addEventListener('change', function () {
        if (select.value !== '') {
          select.form.submit();
        }
      });
    });
  }

  // Forms with a Run button: say that it is working, and do not post twice.
  function busyButtons() {
    document.querySelectorAll('form').forEach(function (form) {
      form.addEventListener('submit', function (e) {
        var b = e.submitter;
        if (!b || b.classList.contains('default-submit') && form.dataset.busy) {
          return;
        }
        if (form.dataset.busy) {
          e.preventDefault();
          return;
        }
        form.dataset.busy = '1';
        if (b.classList.contains('primary')) {
          b.dataset.label = b.textContent;
          b.textContent = 'Working…';
        }
      });
    });
  }

  // Copy buttons (hidden without JavaScript) copy their target's text.
  function copyButtons() {
    document.querySelectorAll('button[data-copy]').forEach(function (b) {
      var target = document.getElementById(b.getAttribute('data-copy'));
      if (!target || !navigator.clipboard) {
        return;
      }
      b.hidden = false;
      b.addEventListener('click', function () {
        navigator.clipboard.writeText(target.textContent).then(function () {
          b.textContent = 'Copied';
          setTimeout(function () { b.textContent = 'Copy'; }, 1500);
        });
      });
    });
  }

  // Results and settings tables (table[data-sortable]): their header
  // links sort by a column and their checkbox (data-filter) shows only
  // the rows meeting every objective, in place; the address follows
  // (history.replaceState, under the table's own parameters: sort, dir,
  // feasible or ssort, sdir, sfeasible), so it stays the permalink the
  // server would render the same way, and the count (data-count) says
  // how many rows show.
  function sortableTables() {
    document.querySelectorAll('table[data-sortable]').forEach(sortableTable);
  }
  function sortableTable(table) {
    var tbody = table.tBodies[0];
    var sortParam = table.getAttribute('data-sort-param') || 'sort';
    var dirParam = table.getAttribute('data-dir-param') || 'dir';
    var stateNames = ['sort', 'dir', 'feasible', 'allscenarios', 'ssort', 'sdir', 'sfeasible'];
    function setParam(name, value) {
      var u = new URL(window.location.href);
      if (value) {
        u.searchParams.set(name, value);
      } else {
        u.searchParams.delete(name);
      }
      window.history.replaceState(null, '', u.toString());
      syncLinks(u);
    }
    // The points' links and the page's other forms keep the new order and
    // filter.
    function syncLinks(u) {
      document.querySelectorAll('table[data-sortable] tbody tr[data-point] a').forEach(function (a) {
        var l = new URL(u.toString());
        l.searchParams.set('point', a.closest('tr').getAttribute('data-point'));
        l.hash = 'timeline';
        a.href = l.toString();
      });
      document.querySelectorAll('form.axes-form, form.table-filter').forEach(function (f) {
        stateNames.forEach(function (name) {
          if (f.querySelector('input[type=checkbox][name=' + name + ']')) {
            return; // the form's own input
          }
          var input = f.querySelector('input[type=hidden][name=' + name + ']');
          var value = u.searchParams.get(name);
          if (value && !input) {
            input = document.createElement('input');
            input.type = 'hidden';
            input.name = name;
            f.insertBefore(input, f.firstChild);
          }
          if (input && value) {
            input.value = value;
          } else if (input) {
            input.remove();
          }
        });
      });
    }
    function key(row, col) {
      var cell = row.cells[col];
      return cell ? cell.getAttribute('data-sort') || '' : '';
    }
    function order(row) {
      var o = row.getAttribute('data-order');
      return Number(o !== null ? o : row.getAttribute('data-point'));
    }
    function sortRows(col, desc) {
      var rows = Array.prototype.slice.call(tbody.rows);
      rows.sort(function (a, b) {
        var x = key(a, col), y = key(b, col), c = 0;
        if (x === '' || y === '') {
          c = x === y ? 0 : (x === '' ? 1 : -1); // no value: last either way
        } else {
          var nx = Number(x), ny = Number(y);
          c = !isNaN(nx) && !isNaN(ny) ? nx - ny : x.localeCompare(y);
          if (desc) {
            c = -c;
          }
        }
        return c || order(a) - order(b);
      });
      rows.forEach(function (r) { tbody.appendChild(r); });
    }
    table.querySelectorAll('thead th[data-key]').forEach(function (th) {
      var a = th.querySelector('a.sort');
      if (!a) {
        return;
      }
      a.addEventListener('click', function (e) {
        e.preventDefault();
        var col = Array.prototype.indexOf.call(th.parentNode.children, th);
        // The first click sorts best first (data-first: a measure where
        // higher is better, goodput, comes descending), a second turns it.
        var cur = th.getAttribute('aria-sort');
        var desc = cur === 'ascending' || (cur !== 'descending' && th.getAttribute('data-first') === 'desc');
        sortRows(col, desc);
        table.querySelectorAll('thead th[aria-sort]').forEach(function (o) { o.setAttribute('aria-sort', 'none'); });
        th.setAttribute('aria-sort', desc ? 'descending' : 'ascending');
        setParam(sortParam, th.getAttribute('data-key'));
        setParam(dirParam, desc ? 'desc' : '');
      });
    });
    // The filters (data-filter: checkbox ids, each naming its parameter
    // and the row attribute it requires true): a row shows when it passes
    // every checked one.
    var filters = (table.getAttribute('data-filter') || '').split(' ').map(function (id) {
      return document.getElementById(id);
    }).filter(Boolean);
    filters.forEach(function (only) {
      only.addEventListener('change', function () {
        if (!only.checked && tbody.rows.length < Number(table.getAttribute('data-points'))) {
          only.form.submit(); // the server left the other rows out
          return;
        }
        var shown = 0;
        Array.prototype.forEach.call(tbody.rows, function (r) {
          r.hidden = filters.some(function (f) {
            return f.checked && r.getAttribute(f.getAttribute('data-row-attr') || 'data-meets') !== 'true';
          });
          shown += r.hidden ? 0 : 1;
        });
        var count = document.getElementById(table.getAttribute('data-count') || '');
        if (count) {
          count.textContent = shown + ' of ' + count.getAttribute('data-points') + ' ' + (table.getAttribute('data-noun') || 'points');
        }
        setParam(only.name, only.checked ? '1' : '');
      });
    });
  }

  // Coming back through the history cache: the forms are idle again.
  window.addEventListener('pageshow', function () {
    document.querySelectorAll('form[data-busy]').forEach(function (form) {
      delete form.dataset.busy;
      form.querySelectorAll('button[data-label]').forEach(function (b) {
        b.textContent = b.dataset.label;
      });
    });
  });

  function start() {
    openTarget();
    loadCharts();
    followProgress();
    typeFields();
    autoSubmit();
    busyButtons();
    copyButtons();
    sortableTables();
    addRows();
    objectivePicker();
    errorLinks();
    liveCount();
  }
  if (document.readyState === 'loading') {
    document.addEventListener('DOMContentLoaded', start);
  } else {
    start();
  }
})();
