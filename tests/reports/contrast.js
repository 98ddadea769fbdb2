// Text contrast as a reader sees it: for each element that draws text of
// its own, its computed colour against the first opaque background behind it,
// as WCAG 2 computes the ratio. Adds a problem for each below 4.5:1 and
// returns how many were measured and the lowest ratio.
function checkContrast(doc, problems) {
  const rgb = (s) => (s.match(/[\d.]+/g) || []).map(Number);
  const luminance = ([r, g, b]) => [r, g, b].map(v => v / 255)
      .map(c => c <= 0.03928 ? c / 12.92 : Math.pow((c + 0.055) / 1.055, 2.4))
      .reduce((sum, c, k) => sum + c * [0.2126, 0.7152, 0.0722][k], 0);
  const win = doc.defaultView;
  let measured = 0, worst = 21;
  doc.body.querySelectorAll('*').forEach(e => {
    if (e.closest('svg')) return;  // chart labels are drawn with fill, checked as SVG text below
    const own = [...e.childNodes].some(n => n.nodeType === 3 && n.textContent.trim() !== '');
    if (!own || e.getClientRects().length === 0) return;
    const fg = rgb(win.getComputedStyle(e).color);
    let bg = null;
    for (let a = e; a && a.nodeType === 1; a = a.parentElement) {
      const c = rgb(win.getComputedStyle(a).backgroundColor);
      if (c.length === 3 || (c.length === 4 && c[3] === 1)) { bg = c.slice(0, 3); break; }
    }
    bg = bg || [255, 255, 255];
    const [hi, lo] = [luminance(fg), luminance(bg)].sort((x, y) => y - x);
    const ratio = (hi + 0.05) / (lo + 0.05);
    measured++;
    worst = Math.min(worst, ratio);
    if (ratio < 4.5) problems.push(`contrast ${ratio.toFixed(2)}:1 for "${e.textContent.trim().slice(0, 30)}" (${e.tagName.toLowerCase()}.${e.className})`);
  });
  // SVG text: its fill on the card's white.
  doc.querySelectorAll('svg text').forEach(t => {
    const [hi, lo] = [luminance(rgb(win.getComputedStyle(t).fill)), luminance([255, 255, 255])].sort((x, y) => y - x);
    const ratio = (hi + 0.05) / (lo + 0.05);
    measured++;
    worst = Math.min(worst, ratio);
    if (ratio < 4.5) problems.push(`contrast ${ratio.toFixed(2)}:1 for chart text "${t.textContent}"`);
  });
  return { measured, worst };
}
