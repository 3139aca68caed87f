// ratelab's one browser script. The pages carry no inline script (their
// Content-Security-Policy forbids it): this file draws every chart from the
// option JSON in its element's data-option attribute, streams run progress
// over Server-Sent Events, and makes the new-sweep form friendlier. Every
// page works without it; it only adds.
(function () {
  'use strict';

  document.documentElement.classList.add('js');

  // Charts: <div class="chart" data-option="{...}">.
  var charts = [];
  function drawCharts() {
    if (typeof echarts === 'undefined') {
      return;
    }
    document.querySelectorAll('div.chart[data-option]').forEach(function (el) {
      var option;
      try {
        option = JSON.parse(el.getAttribute('data-option'));
      } catch (e) {
        el.textContent = 'This chart could not be read: ' + e.message;
        return;
      }
      var chart = echarts.init(el, null, { renderer: 'canvas' });
      chart.setOption(option);
      el.setAttribute('data-drawn', 'true');
      charts.push(chart);
    });
    var pending = null;
    window.addEventListener('resize', function () {
      clearTimeout(pending);
      pending = setTimeout(function () {
        charts.forEach(function (c) { c.resize(); });
      }, 100);
    });
  }

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
      if (bar) {
        bar.max = Math.max(ev.total, 1);
        bar.value = ev.done;
      }
      if (text) {
        text.textContent = ev.done + ' / ' + ev.total + ' points · ' + ev.status;
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
  function typeFields() {
    document.querySelectorAll('[data-kind-row]').forEach(function (row) {
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
    drawCharts();
    followProgress();
    typeFields();
    autoSubmit();
    busyButtons();
    copyButtons();
  }
  if (document.readyState === 'loading') {
    document.addEventListener('DOMContentLoaded', start);
  } else {
    start();
  }
})();
