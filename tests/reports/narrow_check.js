// Runs in Chromium beside summary.html, loaded in an iframe as wide as a
// phone (390 CSS pixels); browser_test.sh defines `width`. The page must
// not scroll sideways: a table wider than the screen scrolls inside its own
// box. Names the widest things that stick out, if any do.
window.addEventListener('load', () => {
  const doc = document.getElementById('page').contentDocument;
  if (!doc || !doc.body) {
    document.getElementById('result').textContent = 'FAIL: the page did not load';
    return;
  }
  const root = doc.documentElement;
  const problems = [];
  const frameWidth = document.getElementById('page').contentWindow.innerWidth;  // a scrollbar included
  if (frameWidth !== width) problems.push(`the frame is ${frameWidth}px wide, not ${width}px`);
  if (root.scrollWidth > root.clientWidth) {
    problems.push(`the page scrolls sideways: ${root.scrollWidth}px of content in ${root.clientWidth}px`);
    // What sticks out, outermost first: an element past the right edge whose parent is not.
    const out = [];
    for (const el of doc.body.querySelectorAll('*')) {
      const r = el.getBoundingClientRect(), p = el.parentElement.getBoundingClientRect();
      if (r.right > root.clientWidth + 0.5 && p.right <= root.clientWidth + 0.5)
        out.push(`<${el.tagName.toLowerCase()}${el.id ? '#' + el.id : ''}${el.className ? '.' + el.className : ''}> to ${Math.round(r.right)}px`);
    }
    problems.push('sticking out: ' + out.slice(0, 5).join(', '));
  }
  for (const t of doc.querySelectorAll('table')) {
    const r = t.getBoundingClientRect();
    if (r.width > 0 && r.left < -0.5) problems.push(`a table starts left of the screen (${Math.round(r.left)}px)`);
  }
  document.getElementById('result').textContent = problems.length
    ? 'FAIL: ' + problems.join(' | ')
    : `ok: no sideways scroll at ${width}px (${doc.querySelectorAll('table').length} tables)`;
});
