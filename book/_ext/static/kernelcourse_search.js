/* Search result summaries for the kernelcourse book (loaded on every page, active only where
 * Sphinx's searchtools.js defines `Search`).
 *
 * Sphinx builds a summary from the page's HTML source, where math is still TeX ("\(\mathcal H\)"):
 * math elements are dropped before the text is taken.  The summary starts near the first query
 * word; the query words arrive stemmed and folded ("nystrom"), so they are looked for in a
 * folded copy of the text as well ("Nyström", "Nystroem"). */
"use strict";

(() => {
  // One character in, one out, so that positions in the folded text are positions in the text.
  const foldChar = (c) => (c.normalize("NFKD").replace(/\p{M}/gu, "")[0] || c).toLowerCase();
  const escape = (s) => s.replace(/[.*+\-?^${}()|[\]\\]/g, "\\$&");
  // "nystrom" also matches "nystroem" (the word as the index folds it).
  const wordPattern = (word) =>
    new RegExp(escape(word.toLowerCase()).replace(/([ao])(?=[b-df-hj-np-tv-z])/g, "$1e?"));

  const patch = () => {
    if (typeof Search === "undefined" || typeof Search.htmlToText !== "function") return;
    if (Search.kernelcourse) return;
    Search.kernelcourse = true;

    const htmlToText = Search.htmlToText;
    Search.htmlToText = (htmlString, anchor) => {
      const doc = new DOMParser().parseFromString(htmlString, "text/html");
      doc.querySelectorAll(".math, .MathJax, mjx-container, script[type^='math/']")
         .forEach((el) => el.remove());
      return htmlToText(doc.documentElement.outerHTML, anchor);
    };

    Search.makeSearchSummary = (htmlText, keywords, anchor) => {
      const text = Search.htmlToText(htmlText, anchor).replace(/\s+/g, " ");
      if (text === "") return null;
      const folded = [...text].map(foldChar).join("");
      const positions = [...keywords]
        .map((k) => folded.search(wordPattern(k)))
        .filter((i) => i > -1);
      const start = positions.length ? Math.max(Math.min(...positions) - 120, 0) : 0;
      const summary = document.createElement("p");
      summary.classList.add("context");
      summary.textContent = (start ? "..." : "") + text.substr(start, 240).trim() +
                            (start + 240 < text.length ? "..." : "");
      return summary;
    };
  };

  patch();
  document.addEventListener("DOMContentLoaded", patch);
})();
