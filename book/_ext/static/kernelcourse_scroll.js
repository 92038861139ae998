// Scroll cues for the text column.  A code block, table or display equation wider than its
// box scrolls sideways inside it, and phones hide scroll bars: each such box gets
// data-kc-scroll = "right" (more to the right), "both" or "left" (scrolled to the end), which
// kernelcourse.css draws as a fade on the cut edge.  An inline formula that MathJax finds no
// place to break and that is wider than its paragraph (on a phone) gets data-kc-wide and
// becomes such a box too.  Boxes are re-measured when the column changes size (MathJax typesetting, a rotated
// phone, an opened solution) and when they are scrolled.
(() => {
  const BOXES = [
    "article.bd-article pre",
    "article.bd-article table.kc-table",
    "article.bd-article table.indextable",
    "article.bd-article .pst-scrollable-table-container",
    "article.bd-article mjx-container[display='true']",
    "article.bd-article mjx-container[data-kc-wide]",
  ].join(", ");
  const TEXT_BLOCK = "p, li, dd, dt, figcaption, caption, h1, h2, h3, h4, div";

  function markScroll(box) {
    const hidden = box.scrollWidth - box.clientWidth;
    if (hidden <= 1) {
      box.removeAttribute("data-kc-scroll");
      return;
    }
    const atStart = box.scrollLeft <= 1;
    const atEnd = box.scrollLeft >= hidden - 1;
    box.setAttribute("data-kc-scroll", atStart ? "right" : atEnd ? "left" : "both");
  }

  function markWide(math) {
    const block = math.parentElement && math.parentElement.closest(TEXT_BLOCK);
    if (!block || math.closest("table, pre, .cell_output")) return;
    const style = getComputedStyle(block);
    const room =
      block.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
    const natural = math.hasAttribute("data-kc-wide")
      ? math.scrollWidth
      : math.getBoundingClientRect().width;
    math.toggleAttribute("data-kc-wide", natural > room + 1);
  }

  function markAll() {
    document
      .querySelectorAll("article.bd-article mjx-container:not([display='true'])")
      .forEach(markWide);
    document.querySelectorAll(BOXES).forEach(markScroll);
  }

  // Measure in the next frame, never inside the resize notification itself.
  let pending = false;
  function schedule() {
    if (pending) return;
    pending = true;
    requestAnimationFrame(() => {
      pending = false;
      markAll();
    });
  }

  document.addEventListener(
    "scroll",
    (event) => {
      const box = event.target;
      if (box instanceof Element && box.matches(BOXES)) markScroll(box);
    },
    { capture: true, passive: true },
  );

  function start() {
    const article = document.querySelector("article.bd-article");
    if (!article) return;
    markAll();
    new ResizeObserver(schedule).observe(article);
    // MathJax typesets after the page has loaded: measure its equations once it is done.
    let tries = 0;
    const afterMath = () => {
      const startup = window.MathJax && window.MathJax.startup;
      if (startup && startup.promise) startup.promise.then(markAll);
      else if (tries++ < 100) setTimeout(afterMath, 100);
    };
    afterMath();
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
