// The language switch (overrides/partials/alternate.html) links to the same page in the other
// language; both languages give each heading the same {#id}, so the place on the page is kept too.
document.addEventListener("click", (event) => {
  const link = event.target.closest(".md-select__link[hreflang]");
  if (link && location.hash) {
    link.href = link.href.split("#")[0] + location.hash;
  }
});
