// Card tables.  A Markdown table inside a "kc-cards" block (:::{div} kc-cards) stacks on a
// phone (kernelcourse.css): each row becomes an entry with its first cell as the title and
// every further cell labelled with its column's header, which this script copies into the
// cell's data-label.  At desktop widths the table is unchanged.
document.addEventListener("DOMContentLoaded", () => {
  document.querySelectorAll("article.bd-article .kc-cards table").forEach((table) => {
    const heads = [...table.querySelectorAll("thead th")].map((th) => th.textContent.trim());
    table.querySelectorAll("tbody tr").forEach((row) => {
      [...row.children].forEach((cell, i) => {
        if (heads[i]) cell.dataset.label = heads[i];
      });
    });
  });
});
