// Runs in Chromium beside summary.html (loaded in an iframe); `summary`
// (summary.json) is defined by browser_test.sh, checkContrast by contrast.js.
// Writes "ok: …" or the problems into #result.
window.addEventListener('load', () => {
  const problems = [];
  const want = (ok, what) => { if (!ok) problems.push(what); };
  const doc = document.getElementById('page').contentDocument;
  if (!doc || !doc.body) {
    document.getElementById('result').textContent = 'FAIL: summary.html did not load';
    return;
  }
  const h1 = doc.querySelector('h1');
  want(h1 && h1.innerText.startsWith(`${summary.students} students`), `the title says "${h1 ? h1.innerText : ''}"`);
  want(doc.getElementById('totals').innerText.includes('Mean total'), 'no class mean');
  const charts = doc.querySelectorAll('svg.chart');
  want(charts.length === 1 + summary.exercises.length, `${charts.length} charts for ${summary.exercises.length} exercises`);
  charts.forEach((c, i) => {
    want((c.getAttribute('aria-label') || '').includes(' in '), `chart ${i + 1} has no text alternative`);
    want(c.getBoundingClientRect().width > 200, `chart ${i + 1} is not shown`);
    want(c.querySelectorAll('rect').length === 11, `chart ${i + 1} has not eleven bars (ten tenths, then full marks)`);
  });
  const failedRows = doc.querySelectorAll('#failed tbody tr');
  want(failedRows.length === summary.most_failed.length, `${failedRows.length} most-failed rows, summary.json has ${summary.most_failed.length}`);
  summary.most_failed.forEach((f, i) => {
    const row = failedRows[i];
    if (row) f.students.forEach(s => want(row.innerText.includes(s), `most-failed row ${i + 1} lacks ${s}`));
  });
  const fence = doc.getElementById('fence');
  want(fence && fence.innerText.startsWith('Student code ran'), 'the summary does not say which fence ran the code');
  const nothing = doc.getElementById('nothing');
  (summary.submitted_nothing || []).forEach(s => want(nothing && nothing.innerText.includes(s), `"no submission" lacks ${s}`));
  const rows = doc.querySelectorAll('#students tbody tr');
  want(rows.length === summary.students, `${rows.length} student rows`);
  want(doc.querySelectorAll('script').length === 0, 'summary.html contains a script');
  const { measured, worst } = checkContrast(doc, problems);
  document.getElementById('result').textContent = problems.length ? 'FAIL: ' + problems.join(' | ')
      : `ok: ${rows.length} students, ${charts.length} charts, ${failedRows.length} most-failed checks, ` +
        `${measured} texts, lowest contrast ${worst.toFixed(2)}:1`;
});
