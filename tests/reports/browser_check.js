// Runs in Chromium beside report.html (loaded in an iframe) once it has
// loaded; `report` (report.json) and `pictures` (how many graph PNGs the
// grader wrote) are defined by browser_test.sh, checkContrast by contrast.js. Writes "ok: …" or the list
// of problems into #result, which the test reads from the dumped DOM.
window.addEventListener('load', () => {
  const problems = [];
  const facts = [];
  const doc = document.getElementById('page').contentDocument;
  if (!doc || !doc.body) {
    document.getElementById('result').textContent = 'FAIL: report.html did not load';
    return;
  }
  const text = doc.body.innerText;  // what is rendered, not what is hidden

  const want = (ok, what) => { if (!ok) problems.push(what); };
  const points = (p) => String(Number(p.toPrecision(6)));

  // The score, as text.
  const score = doc.getElementById('score');
  want(score && score.innerText.trim() === `${points(report.score)} / ${points(report.max_score)} points`,
       `the score shows "${score ? score.innerText.trim() : 'nothing'}"`);
  const verdict = doc.getElementById('verdict');
  want(verdict && /failed/i.test(verdict.innerText), 'the verdict does not say Failed');

  // Every check by name, with its status spelled out (not colour alone).
  const items = doc.querySelectorAll('#checks li.check');
  want(items.length === report.checks.length, `${items.length} checks shown, report.json has ${report.checks.length}`);
  report.checks.forEach((c, i) => {
    const li = items[i];
    if (!li) return;
    const name = c.visibility === 'hidden' ? `hidden check ${c.id}` : c.name;
    want(li.innerText.includes(name), `check ${i + 1} does not show its name "${name}"`);
    const spoken = c.status === 'passed' ? 'passed' : c.status === 'failed' ? 'failed' : 'not run';
    want(li.querySelector('.status').innerText.includes(spoken), `check ${i + 1} does not say "${spoken}"`);
    if (c.status === 'failed' && c.visibility !== 'hidden') {
      if (c.hint) want(li.innerText.includes(c.hint), `check ${i + 1} does not show its hint`);
      if (typeof c.expected === 'string') want(li.innerText.includes(c.expected.split('\n')[0]), `check ${i + 1} does not show what was expected`);
    }
  });
  facts.push(`${items.length} checks`);

  // Every picture decoded, with alt text; one per PNG the grader wrote.
  const images = doc.querySelectorAll('img');
  want(images.length === pictures, `${images.length} images on the page, ${pictures} PNG files written`);
  images.forEach((img, i) => {
    want(img.complete && img.naturalWidth > 0, `image ${i + 1} did not decode`);
    want(img.src.startsWith('data:image/png;base64,'), `image ${i + 1} is not embedded`);
    want((img.getAttribute('alt') || '').length > 40, `image ${i + 1} has no real alt text`);
    want(img.getBoundingClientRect().width > 100, `image ${i + 1} is not shown`);
  });
  facts.push(`${images.length} images`);
  const failedGraph = report.checks.find(c => c.kind === 'graph' && c.status === 'failed');
  if (failedGraph) want(text.includes('yours beside the reference'), 'no side-by-side graph for the failed graph check');

  // Self-contained: no script, nothing fetched from elsewhere.
  want(doc.querySelectorAll('script').length === 0, 'report.html contains a script');
  doc.querySelectorAll('[src],[href]').forEach(e => {
    const u = e.getAttribute('src') || e.getAttribute('href');
    want(u.startsWith('data:') || u.startsWith('#'), `report.html refers to ${u}`);
  });

  // Contrast: each element that draws text, against the first opaque
  // background behind it (contrast.js).
  const { measured, worst } = checkContrast(doc, problems);
  facts.push(`${measured} text elements, lowest contrast ${worst.toFixed(2)}:1`);

  document.getElementById('result').textContent =
      problems.length ? 'FAIL: ' + problems.join(' | ') : 'ok: ' + facts.join(', ');
});
